"""Shared by the wire-adapter tests."""


async def ask_once(adapter, root, messages, **kw):
    """One chat through a fresh adapter made by ``adapter(root, **kw)``, closed afterwards."""
    a = adapter(root, **kw)
    try:
        return await a.chat(messages)
    finally:
        await a.aclose()

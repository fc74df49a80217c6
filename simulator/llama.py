"""llama.cpp-server behaviour for the simulator (``slots`` / ``n_ctx``): a few slots, a window.

With ``slots`` the server evaluates that many chat requests at a time and
queues the others, as llama.cpp's server does; a request whose client gave up
is still computed (its slot is not freed early). ``GET /props`` reports
``total_slots`` and ``default_generation_settings.n_ctx``. With ``n_ctx`` a
prompt (4 characters a token) plus its ``max_tokens`` over the window gets
llama.cpp's 400 ``exceed_context_size_error``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from aiohttp import web

from simulator.core import SimConfig, count_tokens
from simulator.openai import STATE

SLOTS = web.AppKey("sim_slots", asyncio.Semaphore)
_CHAT = "/v1/chat/completions"


def _too_long(body: Any, n_ctx: int) -> dict[str, Any] | None:
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return None
    chars = sum(len(m.get("content") or "") for m in body["messages"] if isinstance(m, dict)
                and isinstance(m.get("content"), str))
    prompt, _ = count_tokens(chars, "")
    if prompt + int(body.get("max_tokens") or 0) <= n_ctx:
        return None
    return {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
                      "type": "exceed_context_size_error", "n_prompt_tokens": prompt, "n_ctx": n_ctx}}


def add_llama_server(app: web.Application, config: SimConfig) -> None:
    """Routes and middleware of the llama.cpp imitation (only when ``slots`` or ``n_ctx`` is set)."""

    async def props(request: web.Request) -> web.Response:
        doc = {"total_slots": config.slots or 1, "default_generation_settings": {"n_ctx": config.n_ctx or 4096}}
        return web.Response(body=orjson.dumps(doc), content_type="application/json")

    @web.middleware
    async def one_slot_each(request: web.Request, handler: Any) -> web.StreamResponse:
        if request.method != "POST" or request.path != _CHAT:
            return await handler(request)
        if config.n_ctx:
            try:
                body = orjson.loads(await request.read())
            except orjson.JSONDecodeError:
                body = None
            too_long = _too_long(body, config.n_ctx)
            if too_long is not None:
                app[STATE].record(body.get("model"), 400)
                return web.Response(status=400, body=orjson.dumps(too_long), content_type="application/json")
        if not config.slots:
            return await handler(request)
        if SLOTS not in app:
            app[SLOTS] = asyncio.Semaphore(config.slots)  # made in the serving loop
        async with app[SLOTS]:
            # Shielded: a client that hangs up does not free the slot, the work goes on.
            return await asyncio.shield(handler(request))

    app.middlewares.append(one_slot_each)
    app.router.add_get("/props", props)

"""Build the adapter for a provider name. Limits are passed in: they belong to accounts."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from providers.base import Provider
    from providers.batch.core import BatchAPI
    from providers.breaker import Breaker
    from providers.limits import Limits

# The adapters are named here and imported when one is made: a command that makes none (a resume with
# nothing left to ask, `report`) does not import them, nor aiohttp (~0.13 s of start-up).
_OPENAI_CHAT = "providers.openai:OpenAIChat"  # the one adapter that takes `reasoning`
# provider name -> (adapter as "module:class", default base_url). base_url is the API root for
# anthropic and gemini (the adapter appends the documented path) and includes
# the version path for OpenAI-compatible endpoints (vendors put it in
# different places: /v1, /api/v3, /api/paas/v4, /v2).
ADAPTERS = {
    "openai": (_OPENAI_CHAT, "https://api.openai.com/v1"),
    "anthropic": ("providers.anthropic:AnthropicChat", "https://api.anthropic.com"),
    "gemini": ("providers.gemini:GeminiChat", "https://generativelanguage.googleapis.com"),
    # A llama.cpp server the engine starts itself (engine/run/local_server.py); its
    # base_url is only known once it listens, so there is no default.
    "local": (_OPENAI_CHAT, ""),
    # A vLLM server the engine starts itself (`vllm serve MODEL`), OpenAI-compatible, on loopback.
    "vllm": (_OPENAI_CHAT, ""),
}
# The providers whose server the engine starts itself (engine/run/local_server.py).
SERVED = ("local", "vllm")
PROVIDERS = tuple(ADAPTERS)
# provider -> the answer constraints (providers/constrain.py) its wire API can carry. The
# Anthropic Messages API has no constrained decoding in the version this adapter speaks.
CONSTRAINABLE = {"openai": ("grammar", "json_schema"), "local": ("grammar",), "vllm": ("json_schema",),
                 "gemini": ("json_schema",)}
DEFAULT_BASE_URLS = {name: url for name, (_, url) in ADAPTERS.items() if url}


def _load(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def adapter_class(provider: str) -> Any:
    """The adapter class of ``provider``, its module imported now (with aiohttp, the first time)."""
    if provider not in ADAPTERS:
        raise ValueError(f"unknown provider {provider!r}")
    return _load(ADAPTERS[provider][0])


def make_provider(provider: str, *, base_url: str, model: str, api_key: str | None,
                  generation: dict[str, Any], limits: Limits, timeout_s: float,
                  max_retries: int, max_connections: int, backoff_base_s: float = 1.0,
                  reasoning: bool | None = None, answer_constraint: str | None = None,
                  breaker: Breaker | None = None, timeout_per_token_s: float = 0.0) -> Provider:
    """``breaker``: the endpoint's circuit breaker (providers/breaker.py), shared by the adapters
    that call it; ``timeout_per_token_s``: seconds the timeout grows per estimated token."""
    cls = adapter_class(provider)
    kwargs: dict[str, Any] = dict(base_url=base_url, model=model, api_key=api_key, generation=generation,
                                  limits=limits, timeout_s=timeout_s, max_retries=max_retries,
                                  max_connections=max_connections, backoff_base_s=backoff_base_s,
                                  breaker=breaker, timeout_per_token_s=timeout_per_token_s)
    if ADAPTERS[provider][0] == _OPENAI_CHAT:
        kwargs["reasoning"] = reasoning
    if answer_constraint is not None:
        if provider not in CONSTRAINABLE:
            raise ValueError(f"provider {provider!r} has no answer constraint")
        kwargs["answer_constraint"] = answer_constraint
    return cls(**kwargs)


# provider -> its batch wire (providers/batch/core.py); "local" and other OpenAI-compatible hosts have none.
BATCH_APIS = {"openai": "providers.batch.openai:OpenAIBatch", "anthropic": "providers.batch.anthropic:AnthropicBatch",
              "gemini": "providers.batch.gemini:GeminiBatch"}
BATCHABLE = tuple(BATCH_APIS)


def make_batch_api(provider: str, adapter: Provider, **options: Any) -> BatchAPI:
    """The batch wire of ``provider`` on its synchronous ``adapter`` (made by ``make_provider``).

    ``options``: ``timeout_s`` of a control call (default 600: downloads are large),
    ``max_retries`` and ``backoff_base_s`` (default: the adapter's)."""
    if provider not in BATCH_APIS:
        raise ValueError(f"provider {provider!r} has no batch API (batchable: {', '.join(BATCHABLE)})")
    from providers.http import HttpChat

    cls = _load(BATCH_APIS[provider])
    if not isinstance(adapter, HttpChat):
        raise TypeError(f"a batch API needs an HTTP adapter, not {type(adapter).__name__}")
    return cls(adapter, **options)

"""Anthropic Messages API (`POST {base}/v1/messages`) on aiohttp.

Differences from chat completions that matter here: the key goes in
``x-api-key`` with an ``anthropic-version`` header; ``system`` is a top-level
field; roles are user/assistant only and must alternate, starting with user;
``max_tokens`` is required; the answer is a list of content blocks.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import orjson

from providers.base import ChatResult
from providers.errors import malformed
from providers.http import HttpChat
from providers.limits import Limits, header_pause

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 1024  # the API has no default; models.toml usually sets max_tokens


def merge_turns(messages: Sequence[Any], assistant: str) -> tuple[str, list[tuple[str, str]]]:
    """(system text, alternating turns): system messages are pulled out, and
    consecutive messages of one role are joined, since these APIs want
    user/assistant turns to alternate."""
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    turns: list[tuple[str, str]] = []
    for m in messages:
        if m.role == "system":
            continue
        role = assistant if m.role == "assistant" else "user"
        if turns and turns[-1][0] == role:
            turns[-1] = (role, turns[-1][1] + "\n\n" + m.content)
        else:
            turns.append((role, m.content))
    return system, turns


class AnthropicChat(HttpChat):
    def __init__(self, *, base_url: str, model: str, api_key: str | None, generation: dict[str, Any],
                 limits: Limits | None = None, timeout_s: float = 120.0, max_retries: int = 8,
                 max_connections: int = 64, backoff_base_s: float = 1.0, **http: Any):
        headers = {"content-type": "application/json", "anthropic-version": API_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        gen = dict(generation)
        params: dict[str, Any] = {"max_tokens": gen.pop("max_tokens", None) or DEFAULT_MAX_TOKENS}
        for ours, theirs in (("temperature", "temperature"), ("top_p", "top_p"), ("stop", "stop_sequences")):
            if ours in gen:
                params[theirs] = gen.pop(ours)
        gen.pop("seed", None)  # the Messages API has no seed (an unknown field is a 400)
        params.update(gen)  # extra_body: top_k, metadata, thinking ...
        self._model = model
        self._params = params
        super().__init__(url=base_url.rstrip("/") + "/v1/messages", headers=headers, api_key=api_key,
                         max_output=params["max_tokens"], limits=limits, timeout_s=timeout_s,
                         max_retries=max_retries, max_connections=max_connections, backoff_base_s=backoff_base_s,
                         **http)

    def request_body(self, messages: Sequence[Any], answer: Any = None) -> bytes:
        # No answer constraint: config validation refuses one for this provider.
        system, turns = merge_turns(messages, "assistant")
        payload: dict[str, Any] = {"model": self._model,
                                   "messages": [{"role": r, "content": c} for r, c in turns], **self._params}
        if system:
            payload["system"] = system
        return orjson.dumps(payload)

    def parse(self, raw: bytes) -> ChatResult:
        try:
            doc = orjson.loads(raw)
            blocks = doc["content"]
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            usage = doc.get("usage") or {}
            stop = doc.get("stop_reason")
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
            raise malformed(raw) from None
        blocked = None
        if stop == "refusal":  # the model's safety classifier ended the answer
            blocked, text = "refusal", ""
        # Prompt-cache reads and writes are input tokens too (billed at other rates).
        inp = usage.get("input_tokens")
        if inp is not None:
            inp += (usage.get("cache_creation_input_tokens") or 0) + (usage.get("cache_read_input_tokens") or 0)
        return ChatResult(text=text, model_version=doc.get("model"), input_tokens=inp,
                          output_tokens=usage.get("output_tokens"), finish_reason=stop, blocked=blocked)

    def pause_hint(self, headers: Mapping[str, str], est_tokens: int) -> float | None:
        if "anthropic-ratelimit-requests-remaining" not in headers and \
                "anthropic-ratelimit-tokens-remaining" not in headers:
            return None
        return header_pause(headers, "anthropic-ratelimit", False, est_tokens)

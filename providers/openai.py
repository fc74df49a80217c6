"""OpenAI-compatible chat completions (`POST {base_url}/chat/completions`) on aiohttp.

Also the wire of DeepSeek, Qwen (DashScope compatible mode), Doubao (Ark),
GLM (BigModel v4), Baichuan, MiniMax, ERNIE (Qianfan v2) and most Llama hosts.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import orjson

from providers.base import CallOptions, ChatResult
from providers.constrain import AnswerSpace, gbnf, openai_response_format
from providers.errors import malformed
from providers.http import HttpChat
from providers.limits import Limits, header_pause
from providers.reasoning import NOT_FOR_REASONING, is_reasoning_model

# finish_reason values that mean the provider's filter cut the answer (GLM says "sensitive").
_FILTERED = {"content_filter": "content_filter", "sensitive": "sensitive"}


class OpenAIChat(HttpChat):
    charges_max_output = True  # OpenAI's TPM limiter counts max_tokens at admission

    def __init__(self, *, base_url: str, model: str, api_key: str | None, generation: dict[str, Any],
                 limits: Limits | None = None, timeout_s: float = 120.0, max_retries: int = 8,
                 max_connections: int = 64, backoff_base_s: float = 1.0, reasoning: bool | None = None,
                 answer_constraint: str | None = None, **http: Any):
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.reasoning = is_reasoning_model(model) if reasoning is None else reasoning
        gen = dict(generation)
        if self.reasoning:
            for key in NOT_FOR_REASONING:
                gen.pop(key, None)
            if "max_tokens" in gen:  # reasoning models take max_completion_tokens (hidden reasoning included)
                gen["max_completion_tokens"] = gen.pop("max_tokens")
        self._model = model
        self._generation = gen
        self._constraint = answer_constraint
        super().__init__(url=base_url.rstrip("/") + "/chat/completions", headers=headers, api_key=api_key,
                         max_output=gen.get("max_completion_tokens") or gen.get("max_tokens"), limits=limits,
                         timeout_s=timeout_s, max_retries=max_retries, max_connections=max_connections,
                         backoff_base_s=backoff_base_s, **http)

    def request_body(self, messages: Sequence[Any], answer: AnswerSpace | None = None) -> bytes:
        payload = {
            "model": self._model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            **self._generation,
        }
        if answer is not None and self._constraint == "grammar":
            payload["grammar"] = gbnf(answer)
        elif answer is not None and self._constraint == "json_schema":
            payload["response_format"] = openai_response_format(answer)
        return orjson.dumps(payload)

    def parse(self, raw: bytes) -> ChatResult:
        return parse_completion(raw)

    def with_call(self, body: bytes, call: CallOptions) -> bytes:
        if not call.body:
            return body
        fields = dict(call.body)
        if self.reasoning:
            fields.pop("seed", None)
        return orjson.dumps({**orjson.loads(body), **fields})

    def pause_hint(self, headers: Mapping[str, str], est_tokens: int) -> float | None:
        if "x-ratelimit-remaining-requests" not in headers and "x-ratelimit-remaining-tokens" not in headers:
            return None
        return header_pause(headers, "x-ratelimit", True, est_tokens)


def parse_completion(raw: bytes) -> ChatResult:
    try:
        doc = orjson.loads(raw)
        choice = doc["choices"][0]
        message = choice["message"]
        text = message.get("content") or ""
        usage = doc.get("usage") or {}
        finish = choice.get("finish_reason")
    except (orjson.JSONDecodeError, KeyError, IndexError, TypeError, AttributeError):
        raise malformed(raw) from None
    blocked = None
    if message.get("refusal"):  # the model declined (structured outputs, safety)
        blocked, text = "refusal", ""
    elif finish in _FILTERED and not text:
        blocked = _FILTERED[finish]
    # Positional, in ChatResult's field order (text, model_version, input_tokens, output_tokens,
    # finish_reason, attempts, latency_ms, blocked): keywords cost a msgspec Struct more, per answer.
    return ChatResult(text, doc.get("model"), usage.get("prompt_tokens"), usage.get("completion_tokens"), finish,
                      1, 0.0, blocked)

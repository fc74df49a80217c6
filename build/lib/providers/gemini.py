"""Google Gemini API (`POST {base}/v1beta/models/{model}:generateContent`) on aiohttp.

The key goes in ``x-goog-api-key`` (never in the URL, where an error message
could repeat it); roles are user/model in ``contents`` with ``parts``; the
system prompt is ``systemInstruction``; generation settings live in
``generationConfig`` under camelCase names. A safety block is an answer:
``promptFeedback.blockReason`` (the prompt) or a candidate finishing with
SAFETY, RECITATION, PROHIBITED_CONTENT ... and no text (the answer).
"""

from __future__ import annotations

from typing import Any, Sequence
from urllib.parse import quote

import orjson

from providers.anthropic import merge_turns
from providers.base import ChatResult
from providers.errors import malformed
from providers.constrain import AnswerSpace, gemini_schema
from providers.http import HttpChat
from providers.limits import Limits

_CONFIG_NAMES = {"temperature": "temperature", "max_tokens": "maxOutputTokens", "top_p": "topP",
                 "stop": "stopSequences", "seed": "seed"}
_BLOCK_FINISH = {"SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY", "LANGUAGE"}


class GeminiChat(HttpChat):
    def __init__(self, *, base_url: str, model: str, api_key: str | None, generation: dict[str, Any],
                 limits: Limits | None = None, timeout_s: float = 120.0, max_retries: int = 8,
                 max_connections: int = 64, backoff_base_s: float = 1.0, answer_constraint: str | None = None,
                 **http: Any):
        if answer_constraint not in (None, "json_schema"):
            raise ValueError(f"gemini supports answer_constraint 'json_schema' only, not {answer_constraint!r}")
        self._constraint = answer_constraint
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["x-goog-api-key"] = api_key
        gen = dict(generation)
        config = {theirs: gen.pop(ours) for ours, theirs in _CONFIG_NAMES.items() if ours in gen}
        # extra_body: top-level fields (safetySettings ...); a generationConfig table merges into ours.
        config.update(gen.pop("generationConfig", {}))
        self._config = config
        self._extra = gen
        name = model.removeprefix("models/")
        url = f"{base_url.rstrip('/')}/v1beta/models/{quote(name, safe='.-_')}:generateContent"
        super().__init__(url=url, headers=headers, api_key=api_key, max_output=config.get("maxOutputTokens"),
                         limits=limits, timeout_s=timeout_s, max_retries=max_retries,
                         max_connections=max_connections, backoff_base_s=backoff_base_s, **http)

    def request_body(self, messages: Sequence[Any], answer: AnswerSpace | None = None) -> bytes:
        system, turns = merge_turns(messages, "model")
        payload: dict[str, Any] = {"contents": [{"role": r, "parts": [{"text": c}]} for r, c in turns]}
        if system:
            payload["systemInstruction"] = {"parts": [{"text": system}]}
        config = self._config
        if answer is not None and self._constraint == "json_schema":
            config = {**config, "responseMimeType": "application/json", "responseSchema": gemini_schema(answer)}
        if config:
            payload["generationConfig"] = config
        payload.update(self._extra)
        return orjson.dumps(payload)

    def parse(self, raw: bytes) -> ChatResult:
        try:
            doc = orjson.loads(raw)
            usage = doc.get("usageMetadata") or {}
            candidates = doc.get("candidates") or []
            feedback = doc.get("promptFeedback") or {}
            version = doc.get("modelVersion")
            inp = usage.get("promptTokenCount")
            # Thinking tokens are billed as output.
            out = (usage.get("candidatesTokenCount") or 0) + (usage.get("thoughtsTokenCount") or 0)
            if not candidates:
                reason = feedback.get("blockReason")
                if not reason:
                    raise KeyError("candidates")
                return ChatResult(text="", model_version=version, input_tokens=inp, output_tokens=out,
                                  finish_reason="prompt_blocked", blocked=f"prompt:{reason}")
            cand = candidates[0]
            parts = (cand.get("content") or {}).get("parts") or []
            text = "".join(p.get("text", "") for p in parts if not p.get("thought"))
            finish = cand.get("finishReason")
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
            raise malformed(raw) from None
        blocked = finish if finish in _BLOCK_FINISH and not text else None
        return ChatResult(text=text, model_version=version, input_tokens=inp, output_tokens=out,
                          finish_reason=finish, blocked=blocked)

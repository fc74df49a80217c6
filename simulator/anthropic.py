"""Anthropic Messages wire format for the simulated provider (`POST /v1/messages`).

As strict as the real API where a client can get it wrong: the ``x-api-key``
and ``anthropic-version`` headers, ``max_tokens`` required, unknown fields
refused, roles user/assistant only, alternating and starting with user,
temperature in [0, 1]. Errors use Anthropic's body
``{"type": "error", "error": {"type", "message"}}``.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timezone
from typing import Any

import orjson
from aiohttp import web

from simulator.core import MODEL_SUFFIX, Decision, SimState, fingerprint, reply
from simulator.faults import transport_fault
from simulator.openai import STATE

VERSIONS = ("2023-06-01", "2023-01-01")
_FIELDS = {"model", "messages", "max_tokens", "system", "temperature", "top_p", "top_k", "stop_sequences",
           "stream", "metadata", "tools", "tool_choice", "thinking", "service_tier"}
_JSON = {"Content-Type": "application/json"}
_FAULTS = {  # decision kind -> (status, error type, message)
    "429": (429, "rate_limit_error", "Number of requests has exceeded your rate limit. Please try again later."),
    "quota": (400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API. "
              "Please go to Plans & Billing to upgrade or purchase credits."),
    "500": (500, "api_error", "Internal server error"),
    "503": (503, "api_error", "Service unavailable"),
    "overloaded": (529, "overloaded_error", "Overloaded"),
    "fail_first": (529, "overloaded_error", "Overloaded"),
}
_MALFORMED = b'{"id": "msg_sim", "type": "message", "role": "assistant", "content": [{"type": "te'


class AnthropicError(Exception):
    def __init__(self, status: int, message: str, type_: str = "invalid_request_error"):
        super().__init__(message)
        self.status, self.message, self.type = status, message, type_


def error_response(status: int, type_: str, message: str, headers: dict[str, str] | None = None) -> web.Response:
    body = {"type": "error", "error": {"type": type_, "message": message}}
    return web.Response(status=status, body=orjson.dumps(body), headers={**_JSON, **(headers or {})})


def _text(content: Any, where: str) -> str:
    if isinstance(content, str):
        if not content:
            raise AnthropicError(400, f"{where}: text content blocks must be non-empty")
        return content
    if isinstance(content, list) and content:
        out = []
        for j, block in enumerate(content):
            if not isinstance(block, dict) or block.get("type") != "text" or not isinstance(block.get("text"), str):
                raise AnthropicError(400, f"{where}.{j}: the simulator accepts text blocks only")
            out.append(block["text"])
        return "".join(out)
    raise AnthropicError(400, f"{where}: Input should be a valid string or a list of content blocks")


def validate(body: Any) -> tuple[str, str, list[tuple[str, str]], int]:
    """(model, system, [(role, text)], max_tokens) or raise AnthropicError like the real API."""
    if not isinstance(body, dict):
        raise AnthropicError(400, "Input should be a valid dictionary")
    for key in body:
        if key not in _FIELDS:
            raise AnthropicError(400, f"{key}: Extra inputs are not permitted")
    for key in ("model", "messages", "max_tokens"):
        if key not in body:
            raise AnthropicError(400, f"{key}: Field required")
    model, messages, max_tokens = body["model"], body["messages"], body["max_tokens"]
    if not isinstance(model, str) or not model:
        raise AnthropicError(400, "model: Input should be a valid string")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise AnthropicError(400, "max_tokens: Input should be a valid integer greater than or equal to 1")
    temp = body.get("temperature")
    if temp is not None and (not isinstance(temp, (int, float)) or not 0 <= temp <= 1):
        raise AnthropicError(400, "temperature: Input should be less than or equal to 1")
    stops = body.get("stop_sequences")
    if stops is not None and (not isinstance(stops, list) or not all(isinstance(s, str) for s in stops)):
        raise AnthropicError(400, "stop_sequences: Input should be a valid list of strings")
    if body.get("stream"):
        raise AnthropicError(400, "stream: the simulator does not support streaming")
    system = body.get("system")
    system_text = "" if system is None else _text(system, "system")
    if not isinstance(messages, list) or not messages:
        raise AnthropicError(400, "messages: at least one message is required")
    turns: list[tuple[str, str]] = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise AnthropicError(400, f"messages.{i}: Input should be a valid dictionary")
        role = msg.get("role")
        if role not in ("user", "assistant"):
            raise AnthropicError(400, f"messages.{i}.role: Input should be 'user' or 'assistant'")
        if "content" not in msg:
            raise AnthropicError(400, f"messages.{i}.content: Field required")
        if turns and turns[-1][0] == role:
            raise AnthropicError(400, 'messages: roles must alternate between "user" and "assistant", '
                                 f'but found multiple "{role}" roles in a row')
        turns.append((role, _text(msg["content"], f"messages.{i}.content")))
    if turns[0][0] != "user":
        raise AnthropicError(400, 'messages: first message must use the "user" role')
    return model, system_text, turns, max_tokens


def _rate_headers(decision: Decision) -> dict[str, str]:
    if decision.window is None:
        return {}
    limit, remaining, reset_s = decision.window
    reset = datetime.fromtimestamp(time.time() + reset_s, timezone.utc).isoformat().replace("+00:00", "Z")
    headers = {"anthropic-ratelimit-requests-limit": str(limit),
               "anthropic-ratelimit-requests-remaining": str(max(0, remaining)),
               "anthropic-ratelimit-requests-reset": reset}
    if decision.retry_after_s is not None:
        headers["retry-after"] = str(max(1, round(decision.retry_after_s + 0.499)))
    return headers


def _message(state: SimState, model: str, system: str, turns: list[tuple[str, str]], max_tokens: int,
             decision: Decision) -> bytes:
    texts = ([system] if system else []) + [t for _, t in turns]
    last_user = next(t for r, t in reversed(turns) if r == "user")
    answer, cut, prompt_tokens, completion_tokens = reply(decision.behaviour.mode, texts, last_user, max_tokens)
    content: list[dict[str, str]] = [{"type": "text", "text": answer}]
    stop = "max_tokens" if cut else "end_turn"
    if decision.kind in ("refusal", "blocked"):
        content, stop, completion_tokens = [], "refusal", 0
    return orjson.dumps({
        "id": f"msg_sim{state.next_id():x}", "type": "message", "role": "assistant",
        "model": model + MODEL_SUFFIX, "content": content, "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": prompt_tokens, "output_tokens": completion_tokens},
    })


def check_headers(request: web.Request, state: SimState) -> web.Response | None:
    """The 401 or 400 for a missing or bad key or version header (None when they are fine)."""
    key = request.headers.get("x-api-key")
    if state.config.api_key and not key:
        state.record(None, 401)
        return error_response(401, "authentication_error", "x-api-key header is required")
    if not state.config.accepts(key):
        state.record(None, 401)
        return error_response(401, "authentication_error", "invalid x-api-key")  # never echo the key
    version = request.headers.get("anthropic-version")
    if not version or version not in VERSIONS:
        state.record(None, 400)
        message = (f"anthropic-version: invalid version {version!r}" if version
                   else "anthropic-version: header is required")
        return error_response(400, "invalid_request_error", message)
    return None


def batch_answer(state: SimState, body: Any) -> tuple[int, bytes]:
    """One request of a batch (its ``params``), answered as ``/v1/messages`` would answer it."""
    try:
        model, system, turns, max_tokens = validate(body)
    except AnthropicError as err:
        return err.status, orjson.dumps({"type": "error", "error": {"type": err.type, "message": err.message}})
    fp = fingerprint(model, [system, turns])
    decision = Decision(state.answer_kind(model, fp), 0.0, None, None, state.config.behaviour(model))
    return 200, _message(state, model, system, turns, max_tokens, decision)


async def messages(request: web.Request) -> web.StreamResponse:
    """POST /v1/messages."""
    state = request.app[STATE]
    refused = check_headers(request, state)
    if refused is not None:
        return refused
    model = None
    try:
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            raise AnthropicError(400, "There was an issue with your request body: invalid JSON") from None
        model, system, turns, max_tokens = validate(body)
        if state.config.strict_models and model not in state.known_models:
            raise AnthropicError(404, f"model: {model}", "not_found_error")
    except AnthropicError as err:
        state.record(model, err.status)
        return error_response(err.status, err.type, err.message)
    fp = fingerprint(model, [system, turns])
    decision = state.admit(model, fp)
    headers = _rate_headers(decision)
    if decision.kind == "rpm":
        state.record(model, 429)
        return error_response(429, "rate_limit_error", "This request would exceed your organization's rate "
                              "limit of requests per minute. Please try again later.", headers)
    if decision.delay_s:
        await asyncio.sleep(decision.delay_s)
    kind = decision.kind
    if kind in ("ok", "refusal", "blocked"):
        state.record(model, 200, fp, ok=True)
        return web.Response(body=_message(state, model, system, turns, max_tokens, decision),
                            headers={**_JSON, **headers})
    faulted = transport_fault(request, state, model, kind, _MALFORMED, {**_JSON, **headers})
    if faulted is not None:
        return faulted
    status, type_, message = _FAULTS[kind]
    state.record(model, status)
    return error_response(status, type_, message, headers)


def add_routes(app: web.Application) -> None:
    app.router.add_post("/v1/messages", messages)

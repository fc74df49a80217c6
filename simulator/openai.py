"""OpenAI chat-completions wire format for the simulated provider.

Validation messages, error types and codes copy the real API's so clients
classify simulated errors exactly as they would real ones.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import orjson
from aiohttp import web

from simulator.core import MODEL_SUFFIX, Decision, SimState, fingerprint, reply
from simulator.faults import transport_fault
from simulator.structured import SchemaError, check_openai_format, obey

STATE = web.AppKey("sim_state", SimState)
ROLES = ("system", "user", "assistant", "tool", "developer")
_JSON = {"Content-Type": "application/json"}

# Bodies for decisions that are not a normal answer: (status, type, code, message).
_FAULT_ERRORS = {
    "429": (429, "requests", "rate_limit_exceeded",
            "Rate limit reached for requests. Please try again later."),
    "quota": (429, "insufficient_quota", "insufficient_quota",
              "You exceeded your current quota, please check your plan and billing details."),
    "500": (500, "server_error", None,
            "The server had an error while processing your request. Sorry about that!"),
    "503": (503, "server_error", None,
            "The engine is currently overloaded, please try again later."),
    "fail_first": (503, "server_error", None,
                   "The engine is currently overloaded, please try again later."),
    "overloaded": (503, "server_error", None,
                   "The engine is currently overloaded, please try again later."),
}
# Reasoning models (o1, o3, o4-mini, gpt-5 ...) refuse the sampling knobs and max_tokens.
_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")
# Deliberately cut mid-document: a 200 whose body no JSON parser accepts.
_MALFORMED = b'{"id": "chatcmpl-sim", "object": "chat.completion", "choices": [{"index": 0, "mess'


class RequestError(Exception):
    """A 4xx with OpenAI's error body."""

    def __init__(self, status: int, message: str, param: str | None = None,
                 code: str | None = None, type_: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status, self.message, self.param = status, message, param
        self.code, self.type = code, type_


def error_response(status: int, message: str, type_: str, param: str | None = None,
                   code: str | None = None, headers: dict[str, str] | None = None) -> web.Response:
    body = {"error": {"message": message, "type": type_, "param": param, "code": code}}
    return web.Response(status=status, body=orjson.dumps(body), headers=_with_json(headers))


def _with_json(headers: dict[str, str] | None) -> dict[str, str]:
    return {**_JSON, **headers} if headers else _JSON


def _type_name(value: Any) -> str:
    names = {str: "a string", int: "an integer", float: "a decimal", bool: "a boolean",
             list: "an array", dict: "an object", type(None): "null"}
    return names.get(type(value), "an unknown type")


def _text_of(content: Any) -> str:
    """String content, or the text parts of a content-part array."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _check_message(i: int, msg: Any) -> None:
    where = f"messages[{i}]"
    if not isinstance(msg, dict):
        raise RequestError(400, f"Invalid type for '{where}': expected an object, but got "
                           f"{_type_name(msg)} instead.", where, "invalid_type")
    role = msg.get("role")
    if role is None:
        raise RequestError(400, f"Missing required parameter: '{where}.role'.",
                           f"{where}.role", "missing_required_parameter")
    if role not in ROLES:
        allowed = ", ".join(f"'{r}'" for r in ROLES)
        raise RequestError(400, f"Invalid value: '{role}'. Supported values are: {allowed}.",
                           f"{where}.role", "invalid_value")
    content = msg.get("content")
    if role != "assistant" and content is None:
        raise RequestError(400, f"Missing required parameter: '{where}.content'.",
                           f"{where}.content", "missing_required_parameter")
    if content is not None and not isinstance(content, (str, list)):
        raise RequestError(400, f"Invalid type for '{where}.content': expected one of a string "
                           f"or array of objects, but got {_type_name(content)} instead.",
                           f"{where}.content", "invalid_type")


def _check_number(body: dict, key: str, lo: float, hi: float | None, integer: bool) -> None:
    value = body.get(key)
    if value is None:
        return
    ok_type = isinstance(value, int) if integer else isinstance(value, (int, float))
    if not ok_type or isinstance(value, bool):
        want = "an integer" if integer else "a decimal"
        raise RequestError(400, f"Invalid type for '{key}': expected {want}, but got "
                           f"{_type_name(value)} instead.", key, "invalid_type")
    if value < lo or (hi is not None and value > hi):
        raise RequestError(400, f"Invalid '{key}': expected a value in [{lo}, {hi}], "
                           f"but got {value} instead.", key, "invalid_value")


def validate(body: Any) -> tuple[str, list]:
    """Return (model, messages) or raise RequestError like the real API would."""
    if not isinstance(body, dict):
        raise RequestError(400, "Invalid request body: expected a JSON object.")
    model = body.get("model")
    if not model or not isinstance(model, str):
        raise RequestError(400, "you must provide a model parameter")
    if "messages" not in body:
        raise RequestError(400, "Missing required parameter: 'messages'.", "messages",
                           "missing_required_parameter")
    messages = body["messages"]
    if not isinstance(messages, list):
        raise RequestError(400, f"Invalid type for 'messages': expected an array, but got "
                           f"{_type_name(messages)} instead.", "messages", "invalid_type")
    if not messages:
        raise RequestError(400, "Invalid 'messages': empty array. Expected an array with "
                           "minimum length 1, but got an empty array instead.",
                           "messages", "empty_array")
    for i, msg in enumerate(messages):
        _check_message(i, msg)
    _check_number(body, "temperature", 0, 2, integer=False)
    _check_number(body, "max_tokens", 1, None, integer=True)
    _check_number(body, "max_completion_tokens", 1, None, integer=True)
    if body.get("stream"):
        raise RequestError(400, "The simulator does not support stream=true.", "stream",
                           "unsupported_value")
    if model.startswith(_REASONING_PREFIXES):
        _check_reasoning(body)
    if "response_format" in body:
        try:
            check_openai_format(body["response_format"])
        except SchemaError as e:
            raise RequestError(400, str(e), "response_format", "invalid_value") from None
    return model, messages


def _check_reasoning(body: dict) -> None:
    if "max_tokens" in body:
        raise RequestError(400, "Unsupported parameter: 'max_tokens' is not supported with this model. "
                           "Use 'max_completion_tokens' instead.", "max_tokens", "unsupported_parameter")
    for key in ("temperature", "top_p"):
        if key in body and body[key] != 1:
            raise RequestError(400, f"Unsupported value: '{key}' does not support {body[key]} with this "
                               "model. Only the default (1) value is supported.", key, "unsupported_value")
    if "stop" in body:
        raise RequestError(400, "Unsupported parameter: 'stop' is not supported with this model.",
                           "stop", "unsupported_parameter")


def _model_of(body: Any) -> str | None:
    """The model name of a rejected body, if it has a usable one (for stats)."""
    model = body.get("model") if isinstance(body, dict) else None
    return model if isinstance(model, str) and model else None


def _authorized(request: web.Request, state: SimState) -> bool:
    auth = request.headers.get("Authorization", "")
    return state.config.accepts(auth[7:] if auth.startswith("Bearer ") else None)


def _unauthorized() -> web.Response:
    # Never echo the presented key back: it could end up in a client's logs.
    return error_response(401, "Incorrect API key provided.", "invalid_request_error",
                          None, "invalid_api_key")


def _completion(state: SimState, model: str, messages: list, decision: Decision,
                body: dict) -> bytes:
    texts = []
    last_user = None
    for m in messages:
        content = m.get("content")
        text = content if type(content) is str else _text_of(content)
        texts.append(text)
        if m["role"] == "user":
            last_user = text
    if last_user is None:
        last_user = texts[-1]
    cap = body.get("max_completion_tokens") or body.get("max_tokens")
    answer, cut, prompt_tokens, completion_tokens = reply(decision.behaviour.mode, texts, last_user, cap)
    schema = check_openai_format(body["response_format"]) if "response_format" in body else None
    if schema is not None:
        answer = obey(answer, schema)
    finish = "length" if cut else "stop"
    message: dict[str, Any] = {"role": "assistant", "content": answer, "refusal": None}
    if decision.kind == "refusal":
        message.update(content=None, refusal="I'm sorry, I can't help with that.")
        completion_tokens = 9
    elif decision.kind == "blocked":
        message["content"], finish, completion_tokens = None, "content_filter", 0
    return orjson.dumps({
        "id": f"chatcmpl-sim{state.next_id():x}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model + MODEL_SUFFIX,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    })


def _render_rpm(model: str, decision: Decision) -> web.Response:
    limit = decision.behaviour.rpm
    wait = decision.retry_after_s or 0.0
    message = (f"Rate limit reached for {model} on requests per min (RPM): Limit {limit}, "
               f"Used {limit}, Requested 1. Please try again in {wait:.3g}s.")
    return error_response(429, message, "requests", None, "rate_limit_exceeded",
                          decision.limit_headers)


async def chat_completions(request: web.Request) -> web.StreamResponse:
    """POST /v1/chat/completions."""
    state = request.app[STATE]
    if not _authorized(request, state):
        state.record(None, 401)
        return _unauthorized()
    model = body = None
    try:
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            raise RequestError(400, "We could not parse the JSON body of your request.") from None
        model, messages = validate(body)
        if state.config.strict_models and model not in state.known_models:
            raise RequestError(404, f"The model `{model}` does not exist or you do not have "
                               "access to it.", None, "model_not_found")
    except RequestError as err:
        state.record(_model_of(body) if model is None else model, err.status)
        return error_response(err.status, err.message, err.type, err.param, err.code)
    fp = fingerprint(model, messages)
    if state.config.request_log:
        state.stats.requests[f"{model} {request.headers.get('X-Conversation-Id', '-')} {fp}"] += 1
    decision = state.admit(model, fp)
    return await _respond(request, state, model, messages, body, fp, decision)


async def _respond(request: web.Request, state: SimState, model: str, messages: list,
                   body: dict, fp: str, decision: Decision) -> web.StreamResponse:
    kind = decision.kind
    if kind == "rpm":
        state.record(model, 429)
        return _render_rpm(model, decision)
    if decision.delay_s:
        await asyncio.sleep(decision.delay_s)
    headers = decision.limit_headers
    if kind in ("ok", "refusal", "blocked"):
        state.record(model, 200, fp, ok=True)
        cap = body.get("max_completion_tokens") or body.get("max_tokens")
        state.stats.by_max_tokens[str(cap or "none")] += 1
        payload = _completion(state, model, messages, decision, body)
        return web.Response(body=payload, headers=_with_json(headers))
    faulted = transport_fault(request, state, model, kind, _MALFORMED, _with_json(headers))
    if faulted is not None:
        return faulted
    status, type_, code, message = _FAULT_ERRORS[kind]
    state.record(model, status)
    return error_response(status, message, type_, None, code, headers)


def batch_answer(state: SimState, body: Any) -> tuple[int, bytes]:
    """One request of a batch, answered as this endpoint would answer it (no rpm, latency or
    transport faults: a batch has its own, simulator/batches.py)."""
    try:
        model, messages = validate(body)
    except RequestError as err:
        return err.status, orjson.dumps({"error": {"message": err.message, "type": err.type,
                                                    "param": err.param, "code": err.code}})
    fp = fingerprint(model, messages)
    decision = Decision(state.answer_kind(model, fp), 0.0, None, None, state.config.behaviour(model))
    return 200, _completion(state, model, messages, decision, body)


async def list_models(request: web.Request) -> web.Response:
    """GET /v1/models."""
    state = request.app[STATE]
    if not _authorized(request, state):
        return _unauthorized()
    data = [{"id": m, "object": "model", "created": 0, "owned_by": "sim"}
            for m in state.config.listed_models()]
    return web.Response(body=orjson.dumps({"object": "list", "data": data}), headers=_JSON)


def add_routes(app: web.Application) -> None:
    app.router.add_post("/v1/chat/completions", chat_completions)
    app.router.add_get("/v1/models", list_models)

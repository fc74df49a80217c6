"""Gemini generateContent wire format for the simulated provider.

``POST /v1beta/models/{model}:generateContent``, strict like the real API:
the key in ``x-goog-api-key`` (or ``?key=``), unknown fields refused with
Google's "Invalid JSON payload received. Unknown name ..." message, roles
user/model only, camelCase ``generationConfig``. Errors use Google's body
``{"error": {"code", "message", "status"}}``; 429 is RESOURCE_EXHAUSTED with
a RetryInfo delay; safety blocks come back as a 200 with
``promptFeedback.blockReason`` or a candidate finishing with SAFETY.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from aiohttp import web

from simulator.core import MODEL_SUFFIX, Decision, SimState, fingerprint, reply
from simulator.faults import transport_fault
from simulator.structured import SchemaError, check_gemini_schema, obey
from simulator.openai import STATE

_JSON = {"Content-Type": "application/json"}
_FIELDS = {"contents", "systemInstruction", "system_instruction", "generationConfig", "generation_config",
           "safetySettings", "safety_settings", "tools", "toolConfig", "cachedContent"}
_CONFIG = {"temperature", "topP", "topK", "candidateCount", "maxOutputTokens", "stopSequences", "seed",
           "presencePenalty", "frequencyPenalty", "responseMimeType", "responseSchema", "thinkingConfig",
           "responseLogprobs", "logprobs"}
_QUOTA_DETAIL = [{"@type": "type.googleapis.com/google.rpc.QuotaFailure",
                  "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_requests",
                                  "quotaId": "GenerateRequestsPerDayPerProjectPerModel"}]}]
_FAULTS = {  # decision kind -> (status, google status, message)
    "429": (429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    "quota": (429, "RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan and billing details."),
    "500": (500, "INTERNAL", "An internal error has occurred. Please retry or report in "
            "https://developers.generativeai.google/guide/troubleshooting"),
    "503": (503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
    "overloaded": (503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
    "fail_first": (503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
}
_MALFORMED = b'{"candidates": [{"content": {"parts": [{"text": "Ans'


class GoogleError(Exception):
    def __init__(self, status: int, message: str, google_status: str = "INVALID_ARGUMENT",
                 details: list | None = None):
        super().__init__(message)
        self.status, self.message, self.google_status, self.details = status, message, google_status, details


def error_response(status: int, google_status: str, message: str, details: list | None = None) -> web.Response:
    err: dict[str, Any] = {"code": status, "message": message, "status": google_status}
    if details:
        err["details"] = details
    return web.Response(status=status, body=orjson.dumps({"error": err}), headers=_JSON)


def _unknown(name: str, where: str | None = None) -> GoogleError:
    at = f" at '{where}'" if where else ""
    return GoogleError(400, f'Invalid JSON payload received. Unknown name "{name}"{at}: Cannot find field.')


def _parts_text(content: Any, where: str) -> str:
    parts = content.get("parts") if isinstance(content, dict) else None
    if not isinstance(parts, list) or not parts:
        raise GoogleError(400, f"* GenerateContentRequest.{where}.parts: contents.parts must not be empty.")
    out = []
    for part in parts:
        if not isinstance(part, dict) or not isinstance(part.get("text"), str):
            raise GoogleError(400, f"* GenerateContentRequest.{where}.parts: the simulator accepts text parts only")
        out.append(part["text"])
    return "".join(out)


def validate(body: Any) -> tuple[str, list[tuple[str, str]], dict]:
    """(system text, [(role, text)], generationConfig) or raise GoogleError like the real API."""
    if not isinstance(body, dict):
        raise GoogleError(400, "Invalid JSON payload received. Expected an object.")
    for key in body:
        if key not in _FIELDS:
            raise _unknown(key)
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise GoogleError(400, "* GenerateContentRequest.contents: contents is not specified")
    turns = []
    for i, content in enumerate(contents):
        role = content.get("role", "user") if isinstance(content, dict) else None
        if role not in ("user", "model"):
            raise GoogleError(400, "Please use a valid role: user, model.")
        turns.append((role, _parts_text(content, f"contents[{i}]")))
    system_obj = body.get("systemInstruction", body.get("system_instruction"))
    system = _parts_text(system_obj, "system_instruction") if system_obj is not None else ""
    config = body.get("generationConfig", body.get("generation_config")) or {}
    if not isinstance(config, dict):
        raise GoogleError(400, "Invalid value at 'generation_config': expected an object")
    for key in config:
        if key not in _CONFIG:
            raise _unknown(key, "generation_config")
    temp = config.get("temperature")
    if temp is not None and (not isinstance(temp, (int, float)) or not 0 <= temp <= 2):
        raise GoogleError(400, "* GenerateContentRequest.generation_config.temperature: "
                          "temperature must be in the range [0.0, 2.0]")
    cap = config.get("maxOutputTokens")
    if cap is not None and (not isinstance(cap, int) or cap < 1):
        raise GoogleError(400, "* GenerateContentRequest.generation_config.max_output_tokens: must be positive")
    try:
        check_gemini_schema(config)
    except SchemaError as e:
        raise GoogleError(400, str(e)) from None
    return system, turns, config


def _answer(state: SimState, model: str, system: str, turns: list[tuple[str, str]], config: dict,
            decision: Decision) -> bytes:
    texts = ([system] if system else []) + [t for _, t in turns]
    last_user = next((t for r, t in reversed(turns) if r == "user"), texts[-1])
    answer, cut, prompt_tokens, completion_tokens = reply(decision.behaviour.mode, texts, last_user,
                                                          config.get("maxOutputTokens"))
    schema = check_gemini_schema(config)
    if schema is not None:
        answer = obey(answer, schema)
    version = model + MODEL_SUFFIX
    ratings = [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}]
    if decision.kind == "refusal":  # the prompt itself is blocked: no candidates at all
        return orjson.dumps({"promptFeedback": {"blockReason": "SAFETY", "safetyRatings": ratings},
                             "usageMetadata": {"promptTokenCount": prompt_tokens, "totalTokenCount": prompt_tokens},
                             "modelVersion": version})
    if decision.kind == "blocked":  # the answer is blocked: a candidate without content
        candidate: dict[str, Any] = {"finishReason": "SAFETY", "index": 0, "safetyRatings": ratings}
        completion_tokens = 0
    else:
        candidate = {"content": {"parts": [{"text": answer}], "role": "model"},
                     "finishReason": "MAX_TOKENS" if cut else "STOP", "index": 0}
    return orjson.dumps({
        "candidates": [candidate],
        "usageMetadata": {"promptTokenCount": prompt_tokens, "candidatesTokenCount": completion_tokens,
                          "totalTokenCount": prompt_tokens + completion_tokens},
        "modelVersion": version, "responseId": f"sim{state.next_id():x}",
    })


def check_key(request: web.Request, state: SimState) -> web.Response | None:
    """The 403 / 400 for a missing or bad key (None when it is fine)."""
    key = request.headers.get("x-goog-api-key") or request.query.get("key")
    if state.config.api_key and not key:
        state.record(None, 403)
        return error_response(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers (callers "
                              "without established identity). Please use API Key or other form of API "
                              "consumer identity to call this API.")
    if not state.config.accepts(key):
        state.record(None, 400)
        return error_response(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
                              [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}])
    return None


def batch_answer(state: SimState, model: str, body: Any) -> tuple[int, bytes]:
    """One request of a batch, answered as ``:generateContent`` would answer it."""
    try:
        system, turns, config = validate(body)
    except GoogleError as err:
        return err.status, orjson.dumps({"error": {"code": err.status, "message": err.message,
                                                   "status": err.google_status}})
    fp = fingerprint(model, [system, turns])
    decision = Decision(state.answer_kind(model, fp), 0.0, None, None, state.config.behaviour(model))
    return 200, _answer(state, model, system, turns, config, decision)


# "{model}:{method}" -> handler; simulator/batch_gemini.py adds batchGenerateContent.
MODEL_METHODS = web.AppKey("gemini_model_methods", dict)


async def model_method(request: web.Request) -> web.StreamResponse:
    """POST /v1beta/models/{model}:{method}."""
    method = request.match_info["target"].partition(":")[2]
    handler = request.app[MODEL_METHODS].get(method)
    if handler is None:
        request.app[STATE].record(None, 404)
        return error_response(404, "NOT_FOUND", f"Method not found: {method or '(none)'}")
    return await handler(request)


async def generate_content(request: web.Request) -> web.StreamResponse:
    """POST /v1beta/models/{model}:generateContent."""
    state = request.app[STATE]
    model = request.match_info["target"].partition(":")[0]
    refused = check_key(request, state)
    if refused is not None:
        return refused
    try:
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            raise GoogleError(400, "Invalid JSON payload received.") from None
        system, turns, config = validate(body)
        if state.config.strict_models and model not in state.known_models:
            raise GoogleError(404, f"models/{model} is not found for API version v1beta, or is not supported "
                              "for generateContent.", "NOT_FOUND")
    except GoogleError as err:
        state.record(model, err.status)
        return error_response(err.status, err.google_status, err.message, err.details)
    fp = fingerprint(model, [system, turns])
    decision = state.admit(model, fp)
    if decision.kind == "rpm":
        state.record(model, 429)
        delay = f"{max(decision.retry_after_s or 0.0, 0.001):.3f}s"
        return error_response(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).",
                              [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}])
    if decision.delay_s:
        await asyncio.sleep(decision.delay_s)
    kind = decision.kind
    if kind in ("ok", "refusal", "blocked"):
        state.record(model, 200, fp, ok=True)
        return web.Response(body=_answer(state, model, system, turns, config, decision), headers=_JSON)
    faulted = transport_fault(request, state, model, kind, _MALFORMED, _JSON)
    if faulted is not None:
        return faulted
    status, google_status, message = _FAULTS[kind]
    state.record(model, status)
    return error_response(status, google_status, message, _QUOTA_DETAIL if kind == "quota" else None)


def add_routes(app: web.Application) -> None:
    app[MODEL_METHODS] = {"generateContent": generate_content}
    app.router.add_post("/v1beta/models/{target}", model_method)

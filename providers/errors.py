"""Error classification, in one place. The retry mechanics read only ``ErrorClass``.

Every wire adapter hands its non-200 answers and client-side failures here:
which statuses are retried, which 429s mean "quota gone", how each vendor's
error body reads, and which 4xx bodies are really a vendor's safety block (an
answer, recorded as such, not an error).
"""

from __future__ import annotations

import asyncio
import email.utils
import re
import time
from enum import StrEnum
from typing import Any, Mapping

import orjson


class ErrorClass(StrEnum):
    RATE_LIMIT = "rate_limit"  # retry after the server's Retry-After or a backoff
    TRANSIENT = "transient"  # 5xx, 529, timeouts, dropped connections, malformed bodies: retry
    # No connection at all (refused, DNS, TLS, connect timeout): retried, and counted by the
    # endpoint's circuit breaker (providers/breaker.py), which pauses and finally gives up the model.
    CONNECT = "connect"
    PERMANENT = "permanent"  # other 4xx, exhausted quota, auth: never retry
    # The prompt does not fit the model's window: never retried (the same prompt fails again).
    CONTEXT = "context_length"

    @property
    def retryable(self) -> bool:
        return self in (ErrorClass.RATE_LIMIT, ErrorClass.TRANSIENT, ErrorClass.CONNECT)


class ProviderError(Exception):
    def __init__(self, klass: ErrorClass, message: str, *, status: int | None = None,
                 retry_after: float | None = None, attempts: int = 1):
        super().__init__(message)
        self.klass = klass
        self.status = status
        self.retry_after = retry_after
        self.attempts = attempts

    def __str__(self) -> str:
        prefix = f"HTTP {self.status}: " if self.status else ""
        return f"{prefix}{self.args[0]}"


class Unreachable(Exception):
    """The endpoint's circuit breaker gave up: no call of this model can be made in this run.

    Deliberately not a ProviderError: it is not an item's outcome, so nothing
    catches it as one and stores it; the lane stops and its items stay unasked.
    """

    def __init__(self, endpoint: str, reason: str, after_s: float):
        super().__init__(f"{endpoint} unreachable for {after_s:.0f} s ({reason})")
        self.endpoint, self.reason, self.after_s = endpoint, reason, after_s


# Codes that arrive with 429 but mean "stop": waiting will not help.
#  OpenAI: insufficient_quota / billing_hard_limit; Google: a per-day quota
#  (its QuotaFailure names e.g. GenerateRequestsPerDayPerProjectPerModel);
#  Zhipu GLM: 1113 (account in arrears).
_QUOTA_MARKERS = ("insufficient_quota", "quota_exceeded", "billing_hard_limit", "RESOURCE_EXHAUSTED_QUOTA",
                  "PerDay", '"1113"')


# How servers say "the prompt does not fit the context window" (any status: some send a 500).
#  OpenAI, Azure, DeepSeek, llama-cpp-python: code context_length_exceeded / "maximum context
#  length is N tokens"; llama-cpp-python unformatted: "Requested tokens (N) exceed context window
#  of M"; llama.cpp's server: exceed_context_size_error / "exceeds the available context size";
#  vLLM: "maximum context length"; Anthropic: "prompt is too long" / "exceed context limit";
#  Gemini: "input token count (N) exceeds the maximum number of tokens allowed".
_CONTEXT_MARKERS = re.compile(
    r"context_length_exceeded|maximum context length|exceed(?:s|ed)? (?:the )?context (?:window|limit|size)"
    r"|exceed_context_size|exceeds the available context size|prompt is too long|n_ctx"
    r"|input token count.{0,40}exceeds the maximum", re.IGNORECASE)
CONTEXT_HINT = ("the prompt does not fit the model's context window: set context_tokens in models.toml "
                "to the model's window so long prompts are shortened (docs/providers.md)")


def classify_status(status: int, body: str) -> ErrorClass:
    if status in (400, 413, 422, 500) and _CONTEXT_MARKERS.search(body):
        return ErrorClass.CONTEXT
    if status == 429:
        return ErrorClass.PERMANENT if any(m in body for m in _QUOTA_MARKERS) else ErrorClass.RATE_LIMIT
    if status in (408, 409, 425) or status >= 500:  # 529 (Anthropic overloaded_error) included
        return ErrorClass.TRANSIENT
    return ErrorClass.PERMANENT


def classify_exception(exc: BaseException) -> ProviderError:
    """Map a client-side failure (no HTTP status) to a ProviderError."""
    if isinstance(exc, ProviderError):
        return exc
    import aiohttp  # here: an exception to classify means an adapter, which imported it, made a call

    # Before the timeout check: aiohttp's connect timeout is also a TimeoutError.
    if isinstance(exc, (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError)):
        return ProviderError(ErrorClass.CONNECT, f"{type(exc).__name__}: {exc}")  # "Cannot connect to host ..."
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return ProviderError(ErrorClass.TRANSIENT, "request timed out")
    if isinstance(exc, (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, ConnectionError)):
        return ProviderError(ErrorClass.TRANSIENT, f"connection error: {type(exc).__name__}: {exc}")
    if isinstance(exc, aiohttp.ClientError):
        return ProviderError(ErrorClass.TRANSIENT, f"client error: {type(exc).__name__}: {exc}")
    raise exc  # a bug of ours, not a provider failure: let it surface


def status_error(status: int, text: str, headers: Mapping[str, str]) -> ProviderError:
    """The error for a non-2xx answer that is not a safety block: class, message, wait."""
    klass = classify_status(status, text)
    message = error_message(text)
    if klass is ErrorClass.CONTEXT:
        message = f"{message} ({CONTEXT_HINT})"
    return ProviderError(klass, message, status=status, retry_after=retry_after(headers, text))


def malformed(raw: bytes) -> ProviderError:
    """A 200 whose body is not what the API documents: a proxy hiccup, retried."""
    return ProviderError(ErrorClass.TRANSIENT, f"malformed response body: {raw[:200]!r}")


def key_in_answer(field: str) -> ProviderError:
    """A 200 whose answer carries the caller's key: a gateway pasted it there (the model cannot know
    it). The answer is refused whole, never masked (a masked answer is not what the model said), and
    permanent: such a gateway does it every time. A later run asks again, like any error row."""
    return ProviderError(ErrorClass.PERMANENT, f"the endpoint sent the API key back inside the answer's {field} "
                         "(a gateway that echoes credentials?): the answer is not stored")


def _error_object(text: str) -> dict[str, Any] | None:
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    err = doc.get("error") if isinstance(doc, dict) else None
    return err if isinstance(err, dict) else None


def error_message(text: str) -> str:
    """The API's own message from any of the error shapes we speak.

    OpenAI-compatible ``{"error": {"message", "type", "code"}}``, Anthropic
    ``{"type": "error", "error": {"type", "message"}}`` and Google
    ``{"error": {"code", "message", "status"}}`` all nest under ``error``.
    """
    err = _error_object(text)
    if err is None:
        return text[:500] or "(empty body)"
    label = err.get("status") or err.get("code") or err.get("type") or ""
    parts = [str(err.get("message", "")).strip(), str(label)]
    return " ".join(p for p in parts if p)[:500] or text[:500]


# 4xx bodies that are a vendor's content filter refusing the prompt or the
# answer. They are answers (the model will not say more on a retry), so they
# are recorded as a blocked outcome, never as an error that resume re-asks.
_SAFETY_CODES = {
    "data_inspection_failed": "data_inspection_failed",  # Alibaba DashScope (Qwen)
    "1301": "sensitive",  # Zhipu GLM: "contentFilter" with error code 1301
    "content_filter": "content_filter",  # Azure OpenAI prompt filter
    "content_policy_violation": "content_filter",
}


def safety_block(status: int, text: str) -> str | None:
    """The block reason when an error body is a documented safety block, else None."""
    if status != 400:
        return None
    err = _error_object(text)
    if err is None:
        return None
    for key in ("code", "type"):
        code = str(err.get(key) or "")
        if code in _SAFETY_CODES:
            return _SAFETY_CODES[code]
        if "SensitiveContentDetected" in code:  # Volcengine Ark (Doubao): Input/OutputText...
            return "sensitive"
    return None


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After is either delta-seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def retry_after(headers: Mapping[str, str], body: str = "") -> float | None:
    """Seconds to wait from a 429/5xx: OpenAI's precise ``retry-after-ms``, then
    Retry-After, then Google's ``RetryInfo.retryDelay`` in the error body (the
    Gemini API sends no header)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    wait = parse_retry_after(headers.get("Retry-After"))
    if wait is None and "retryDelay" in body:
        err = _error_object(body) or {}
        for detail in err.get("details") or ():
            delay = detail.get("retryDelay") if isinstance(detail, dict) else None
            if isinstance(delay, str) and delay.endswith("s"):
                try:
                    return max(0.0, float(delay[:-1]))
                except ValueError:
                    pass
    return wait


# --------------------------------------------------------------------------- batch requests
# One request of a provider batch (providers/batch_*.py) fails on its own, reported in the
# batch's results rather than as an HTTP status. Each wire's word is mapped to the HTTP status
# the synchronous call would have got, so the same rules classify it.

# Anthropic error types (https://docs.anthropic.com/en/api/errors) -> HTTP status.
ANTHROPIC_ERROR_STATUS = {"invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
                          "permission_error": 403, "not_found_error": 404, "request_too_large": 413,
                          "rate_limit_error": 429, "api_error": 500, "timeout_error": 504,
                          "overloaded_error": 529}
# google.rpc.Code (numbers and names) -> HTTP status, as Google's own mapping.
GRPC_STATUS = {1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400, 10: 409, 11: 400,
               12: 501, 13: 500, 14: 503, 15: 500, 16: 401}
GRPC_NAMES = {"CANCELLED": 1, "UNKNOWN": 2, "INVALID_ARGUMENT": 3, "DEADLINE_EXCEEDED": 4, "NOT_FOUND": 5,
              "ALREADY_EXISTS": 6, "PERMISSION_DENIED": 7, "RESOURCE_EXHAUSTED": 8, "FAILED_PRECONDITION": 9,
              "ABORTED": 10, "OUT_OF_RANGE": 11, "UNIMPLEMENTED": 12, "INTERNAL": 13, "UNAVAILABLE": 14,
              "DATA_LOSS": 15, "UNAUTHENTICATED": 16}
# OpenAI batch error-file codes that mean "never attempted" rather than "refused".
_NOT_ATTEMPTED = {"batch_expired", "batch_cancelled", "batch_canceled"}


def unanswered(reason: str) -> ProviderError:
    """A batch request the batch never answered (expired, cancelled, missing): asked again."""
    return ProviderError(ErrorClass.TRANSIENT, f"batch request not answered: {reason}")


def batch_request_error(status: int | None, text: str, code: str | None = None) -> ProviderError:
    """One failed request of a batch: ``status`` as the synchronous call would have had it
    (None when the provider gives only a ``code``), ``text`` the error body or message."""
    if code in _NOT_ATTEMPTED:
        return unanswered(code or "")
    if status is None:
        # An OpenAI error-file line without a response: a refusal of the line itself
        # (invalid body, wrong model ...), unless it reads like a server-side failure.
        server = code is not None and any(w in code for w in ("server", "internal", "timeout", "rate_limit"))
        status = 500 if server else 400
        if code:
            text = orjson.dumps({"error": {"message": text, "code": code}}).decode()
    return status_error(status, text, {})


def anthropic_request_error(error: Mapping[str, Any]) -> ProviderError:
    """An Anthropic ``errored`` result: ``{"type": "error", "error": {"type", "message"}}`` (or the inner object)."""
    nested = error.get("error")
    inner = nested if isinstance(nested, Mapping) else error
    status = ANTHROPIC_ERROR_STATUS.get(str(inner.get("type")), 400)
    return batch_request_error(status, orjson.dumps({"type": "error", "error": inner}).decode())


def grpc_request_error(status: Mapping[str, Any]) -> ProviderError:
    """A Gemini per-request ``google.rpc.Status`` ``{"code", "message", "details"}``."""
    code = status.get("code")
    if isinstance(code, str):
        code = GRPC_NAMES.get(code, 2)
    http = GRPC_STATUS.get(code, 500) if isinstance(code, int) else 500
    return batch_request_error(http, orjson.dumps({"error": dict(status)}).decode())

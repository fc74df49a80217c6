"""Error classification, in one place. The retry mechanics read only ``ErrorClass``."""

from __future__ import annotations

import asyncio
import email.utils
import time
from enum import StrEnum

import aiohttp


class ErrorClass(StrEnum):
    RATE_LIMIT = "rate_limit"  # retry after the server's Retry-After or a backoff
    TRANSIENT = "transient"  # 5xx, timeouts, dropped connections, malformed bodies: retry
    PERMANENT = "permanent"  # other 4xx, exhausted quota, auth: never retry

    @property
    def retryable(self) -> bool:
        return self is not ErrorClass.PERMANENT


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


# Error codes that arrive with 429 but mean "stop": waiting will not help.
_QUOTA_MARKERS = ("insufficient_quota", "quota_exceeded", "billing_hard_limit", "RESOURCE_EXHAUSTED_QUOTA")


def classify_status(status: int, body: str) -> ErrorClass:
    if status == 429:
        return ErrorClass.PERMANENT if any(m in body for m in _QUOTA_MARKERS) else ErrorClass.RATE_LIMIT
    if status in (408, 409, 425) or status >= 500:  # 529 (Anthropic overloaded) included
        return ErrorClass.TRANSIENT
    return ErrorClass.PERMANENT


def classify_exception(exc: BaseException) -> ProviderError:
    """Map a client-side failure (no HTTP status) to a ProviderError."""
    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return ProviderError(ErrorClass.TRANSIENT, "request timed out")
    if isinstance(exc, (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, ConnectionError)):
        return ProviderError(ErrorClass.TRANSIENT, f"connection error: {type(exc).__name__}: {exc}")
    if isinstance(exc, aiohttp.ClientError):
        return ProviderError(ErrorClass.TRANSIENT, f"client error: {type(exc).__name__}: {exc}")
    raise exc  # a bug of ours, not a provider failure: let it surface


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

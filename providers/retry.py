"""Retries with tenacity, driven only by the error class."""

from __future__ import annotations

import random

import anyio
from typing import Awaitable, Callable, TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, wait_exponential_jitter

from providers.errors import ErrorClass, ProviderError

T = TypeVar("T")

MAX_RETRY_AFTER_S = 300.0
# With a circuit breaker, connection failures use up no retries (the breaker bounds them in
# time); this many at most, in case an endpoint half-works for ever.
MAX_BREAKER_CONNECT_RETRIES = 100


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, ProviderError) and exc.klass.retryable


class _Wait:
    """Honour Retry-After when the server sends it, else exponential backoff with jitter; a
    connection failure under a breaker waits little (the breaker holds the requests back)."""

    def __init__(self, base_s: float, max_s: float, breaker: bool):
        self._backoff = wait_exponential_jitter(multiplier=base_s, max=max_s, jitter=base_s)
        self._base_s = base_s
        self._breaker = breaker

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, ProviderError) and exc.retry_after is not None:
            return _first_wait(exc, 0.0)
        if self._breaker and _free(exc, True):
            return _first_wait(exc, self._base_s)  # type: ignore[arg-type]
        return self._backoff(state)


def _free(exc: BaseException | None, breaker: bool) -> bool:
    """Does this failure leave the retry budget alone (a connection failure, a breaker watching)?"""
    return breaker and isinstance(exc, ProviderError) and exc.klass is ErrorClass.CONNECT


class _Stop:
    """Stop after ``max_retries`` retries that count, or too many free ones."""

    def __init__(self, max_retries: int, breaker: bool, counted: int, free: int):
        self._max, self._breaker = max_retries, breaker
        self.counted, self.free = counted, free

    def __call__(self, state: RetryCallState) -> bool:
        if _free(state.outcome.exception() if state.outcome else None, self._breaker):
            self.free += 1
        else:
            self.counted += 1
        return self.counted > self._max or self.free > MAX_BREAKER_CONNECT_RETRIES


async def with_retries(call: Callable[[], Awaitable[T]], *, max_retries: int,
                       base_s: float = 1.0, max_s: float = 60.0, breaker: bool = False) -> tuple[T, int]:
    """Run ``call``; on a retryable ProviderError try again, up to ``max_retries`` more times.

    ``breaker``: the endpoint has a circuit breaker, which bounds connection failures in time
    (pausing, then giving up the model): those are retried without using up ``max_retries``.
    Returns (result, attempts). A final failure re-raises the last error with
    ``attempts`` set. The first attempt bypasses tenacity: most calls succeed
    and should pay nothing for the retry machinery.
    """
    try:
        return await call(), 1
    except ProviderError as e:
        first = e
    return await after_first(first, call, max_retries=max_retries, base_s=base_s, max_s=max_s, breaker=breaker)


async def after_first(first: ProviderError, call: Callable[[], Awaitable[T]], *, max_retries: int,
                      base_s: float = 1.0, max_s: float = 60.0, breaker: bool = False) -> tuple[T, int]:
    """``with_retries`` once the first attempt has failed with ``first`` (re-raised when it is not to be
    retried): a caller on a hot path makes its first attempt itself, without a coroutine around it."""
    if not first.klass.retryable or (max_retries == 0 and not _free(first, breaker)):
        raise first
    await anyio.sleep(_first_wait(first, base_s))
    attempts = 1
    free = _free(first, breaker)
    retrying = AsyncRetrying(
        stop=_Stop(max_retries, breaker, counted=0 if free else 1, free=1 if free else 0),
        wait=_Wait(2 * base_s, max_s, breaker),
        retry=retry_if_exception(_retryable),
        reraise=True,
    )
    try:
        async for attempt in retrying:
            with attempt:
                attempts += 1
                return await call(), attempts
    except ProviderError as e:
        e.attempts = attempts
        raise
    raise AssertionError("unreachable")


def retry_pause(exc: ProviderError, retry: int, base_s: float, max_s: float = 60.0) -> float:
    """Seconds before retry number ``retry`` (1, 2, ...) of a call that cannot go through
    ``with_retries`` (a download read as it streams): Retry-After, else doubling backoff with jitter."""
    if exc.retry_after is not None:
        return _first_wait(exc, 0.0)
    return min(max_s, base_s * 2 ** (retry - 1)) * (1 + random.random())


def _first_wait(exc: ProviderError, base_s: float) -> float:
    if exc.retry_after is not None:
        # A little jitter so that many workers told "retry in 2 s" do not return together.
        return min(exc.retry_after, MAX_RETRY_AFTER_S) * (1 + 0.1 * random.random())
    return base_s * (1 + random.random())

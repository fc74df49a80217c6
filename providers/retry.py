"""Retries with tenacity, driven only by the error class."""

from __future__ import annotations

import random

import anyio
from typing import Awaitable, Callable, TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from providers.errors import ProviderError

T = TypeVar("T")

MAX_RETRY_AFTER_S = 300.0


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, ProviderError) and exc.klass.retryable


class _Wait:
    """Honour Retry-After when the server sends it, else exponential backoff with jitter."""

    def __init__(self, base_s: float, max_s: float):
        self._backoff = wait_exponential_jitter(multiplier=base_s, max=max_s, jitter=base_s)

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, ProviderError) and exc.retry_after is not None:
            return _first_wait(exc, 0.0)
        return self._backoff(state)


async def with_retries(call: Callable[[], Awaitable[T]], *, max_retries: int,
                       base_s: float = 1.0, max_s: float = 60.0) -> tuple[T, int]:
    """Run ``call``; on a retryable ProviderError try again, up to ``max_retries`` more times.

    Returns (result, attempts). A final failure re-raises the last error with
    ``attempts`` set. The first attempt bypasses tenacity: most calls succeed
    and should pay nothing for the retry machinery.
    """
    try:
        return await call(), 1
    except ProviderError as e:
        if not e.klass.retryable or max_retries == 0:
            raise
        first = e
    await anyio.sleep(_first_wait(first, base_s))
    attempts = 1
    retrying = AsyncRetrying(
        stop=stop_after_attempt(max_retries),
        wait=_Wait(2 * base_s, max_s),
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


def _first_wait(exc: ProviderError, base_s: float) -> float:
    if exc.retry_after is not None:
        # A little jitter so that many workers told "retry in 2 s" do not return together.
        return min(exc.retry_after, MAX_RETRY_AFTER_S) * (1 + 0.1 * random.random())
    return base_s * (1 + random.random())

"""Requests- and tokens-per-minute limits. A limiter belongs to an account and
may be shared by several models; a model may also have limits of its own."""

from __future__ import annotations

from aiolimiter import AsyncLimiter


class RateLimit:
    """rpm and tpm buckets together. ``acquire(tokens)`` waits for both."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None):
        self.rpm, self.tpm = rpm, tpm
        # A one-minute bucket would let a full minute's quota through in one
        # burst and then trip a sliding-window server; a bucket of about one
        # second (but holding at least one request) keeps the burst small.
        if rpm:
            period = max(1.0, 60.0 / rpm)
            self._requests: AsyncLimiter | None = AsyncLimiter(rpm * period / 60.0, period)
        else:
            self._requests = None
        # Token estimates are coarse and requests large: a minute-long bucket.
        self._tokens: AsyncLimiter | None = AsyncLimiter(tpm, 60.0) if tpm else None

    async def acquire(self, tokens: int) -> None:
        if self._requests is not None:
            await self._requests.acquire()
        if self._tokens is not None:
            await self._tokens.acquire(min(float(tokens), self._tokens.max_rate))


class Limits:
    """All the limits one model's calls must pass (its account's and its own)."""

    def __init__(self, *limits: RateLimit | None):
        self._limits = tuple(l for l in limits if l is not None and (l.rpm or l.tpm))

    async def acquire(self, tokens: int) -> None:
        for limit in self._limits:
            await limit.acquire(tokens)

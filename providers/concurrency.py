"""Adaptive concurrency: an AIMD limit on requests in flight, per model or per account.

It starts at the configured maximum, halves when the provider throttles
(multiplicative decrease) and grows by one after a window of successes
(additive increase), like TCP's congestion window. Single-threaded asyncio
needs no lock: the fast path is two attribute reads and an increment.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque


class AdaptiveLimit:
    __slots__ = ("maximum", "minimum", "limit", "in_flight", "cuts", "_waiters", "_oks", "_last_cut")

    def __init__(self, maximum: int, minimum: int = 1):
        self.maximum = max(1, maximum)
        self.minimum = max(1, min(minimum, self.maximum))
        self.limit = self.maximum
        self.in_flight = 0
        self.cuts = 0  # how many times throttling cut the limit (reported in the summary)
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._oks = 0
        self._last_cut = 0.0

    def has_room(self) -> bool:
        """Would ``acquire`` return at once?"""
        return self.in_flight < self.limit and not self._waiters

    async def acquire(self) -> None:
        if self.in_flight < self.limit and not self._waiters:
            self.in_flight += 1
            return
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut
        except BaseException:
            if fut.done() and not fut.cancelled():
                self.release()  # the slot was handed over just as we were cancelled: pass it on
            else:
                try:
                    self._waiters.remove(fut)
                except ValueError:
                    pass
            raise

    def release(self) -> None:
        self.in_flight -= 1
        if self._waiters:
            self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            fut = self._waiters.popleft()
            if not fut.done():
                self.in_flight += 1
                fut.set_result(None)

    def on_success(self) -> None:
        if self.limit < self.maximum:
            self._oks += 1
            # +1 per window of `limit` successes: about one step per round trip.
            if self._oks >= self.limit:
                self._oks = 0
                self.limit += 1
                self._wake()

    def on_throttle(self, sent_at: float) -> None:
        """Halve the limit, once per round: a 429 for a request sent before the last cut
        says nothing new (it was sent under the old limit)."""
        if sent_at < self._last_cut:
            return
        self._last_cut = time.monotonic()
        self._oks = 0
        self.cuts += 1
        self.limit = max(self.minimum, self.limit // 2)

"""The rate keeper actor's body: one account's or model's GCRA schedule (providers/limits.py) and its pause.

A module of its own, importing nothing of the engine: the keeper's Ray worker imports only this (a
fraction of a second), so it is up before the hosts that book through it (engine/cluster/limiter.py).
"""

from __future__ import annotations

import time

from providers.limits import RateLimit

# Seconds ahead a booking is made at least: above the call's p99, so the reply arrives before the slot.
LOOKAHEAD_S = 0.05


class RateKeeper:
    """The actor's body (made remote by ``start_keepers``): one account's or model's rate, and its pause."""

    def __init__(self, rpm: float | None, tpm: float | None, hold_s: float = 0.0):
        import ray

        self._rate = RateLimit(rpm, tpm)
        self._resume_at = 0.0
        if ray.get_runtime_context().was_current_actor_reconstructed:
            # Restarted: the old schedule is lost, and slots it booked may still be ahead. Nothing leaves
            # before the furthest of them could (hold_s: every request in flight booked one rate interval
            # apart), so the rate is never exceeded; then the schedule starts afresh.
            self._resume_at = time.monotonic() + hold_s

    def book(self, tokens: int, lookahead: float) -> float:
        """Book one request of ``tokens``; seconds from now until it may leave (at least ``lookahead``)."""
        now = time.monotonic()
        at = max(now + lookahead, self._resume_at)
        wait = self._rate.book(tokens, at)
        wait += self._rate.depart(at + wait)
        return at + wait - now

    def settle(self, delta: int) -> None:
        self._rate.settle(delta)

    def pause(self, seconds: float) -> None:
        self._resume_at = max(self._resume_at, time.monotonic() + seconds)

    def ping(self) -> float:
        return time.monotonic()

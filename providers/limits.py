"""Requests- and tokens-per-minute pacing, adaptive concurrency, and the provider's own hints.

A ``RateLimit`` belongs to an account (shared by the models that name it) or
to one model. A model's ``Limits`` gathers its own and its account's, plus the
AIMD concurrency gates (``providers.concurrency``).
"""

from __future__ import annotations

import re
import time
from datetime import datetime
from typing import Mapping, Sequence

import anyio

from providers.concurrency import AdaptiveLimit

# Pace a little under the configured limit: a request that leaves on time can
# still arrive a few ms early after another was delayed, and a server counting
# a sliding window would answer that one with a 429.
HEADROOM = 0.99


class Pacer:
    """A rate as a virtual schedule (GCRA): each acquisition books the next slot, then sleeps until it.

    Not aiolimiter's leaky bucket: with capacity C a sliding-window server sees
    up to C + rate*window requests in a window (so C must be 1), and with C = 1
    each wake-up's lateness is lost, drifting below the limit. A schedule keeps
    the long-run rate exact, and a booking can be corrected afterwards (tokens:
    estimate before the call, settle with the reported usage), which a leaky
    bucket cannot refund.
    """

    __slots__ = ("rate", "_tat", "_sent", "_interval", "_slack")

    def __init__(self, per_minute: float):
        self.rate = per_minute / 60.0
        self._tat = 0.0  # theoretical arrival time of the next free slot (monotonic)
        # The same rule over actual departures: when the event loop stalls,
        # several booked callers wake together; they must leave an interval
        # apart again, not in a burst. Lateness up to half an interval is
        # forgiven, so ordinary timer jitter costs no rate.
        self._sent = 0.0
        self._interval = 1.0 / self.rate
        self._slack = 0.5 * self._interval

    def book(self, amount: float, now: float) -> float:
        """Reserve ``amount`` units; returns the seconds to wait before using them."""
        tat = self._tat if self._tat > now else now
        self._tat = tat + amount / self.rate
        return tat - now

    def depart(self, now: float) -> float:
        """Book a departure slot after the booked slot has come; seconds still to wait."""
        slot = self._sent - self._slack
        if slot < now:
            slot = now
        self._sent = (self._sent if self._sent > slot else slot) + self._interval
        return slot - now

    def adjust(self, amount: float) -> None:
        """Charge (or refund, if negative) units after the fact."""
        self._tat += amount / self.rate


class RateLimit:
    """rpm and tpm together."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None):
        self.rpm, self.tpm = rpm, tpm
        self._requests = Pacer(rpm * HEADROOM) if rpm else None
        self._tokens = Pacer(tpm * HEADROOM) if tpm else None

    def book(self, tokens: int, now: float) -> float:
        wait = self._requests.book(1, now) if self._requests is not None else 0.0
        if self._tokens is not None:
            wait = max(wait, self._tokens.book(tokens, now))
        return wait

    def depart(self, now: float) -> float:
        return self._requests.depart(now) if self._requests is not None else 0.0

    def settle(self, delta: int) -> None:
        if self._tokens is not None and delta:
            self._tokens.adjust(delta)

    async def acquire(self, tokens: int) -> None:
        wait = self.book(tokens, time.monotonic())
        if wait > 0:
            await anyio.sleep(wait)
        wait = self.depart(time.monotonic())
        if wait > 0:
            await anyio.sleep(wait)


# Outcomes of one HTTP attempt, for the concurrency gates.
OK, THROTTLED, OTHER = 0, 1, 2


class Limits:
    """Everything one model's calls must pass: its own and its account's rates,
    its concurrency gates (its own AIMD limit and its account's pool), and
    pauses the provider asked for."""

    def __init__(self, *limits: RateLimit | None, gates: Sequence[AdaptiveLimit] = ()):
        self._limits = tuple(lim for lim in limits if lim is not None and (lim.rpm or lim.tpm))
        self._gates = tuple(gates)
        self._resume_at = 0.0
        self.throttled = 0  # 429s seen (rate-limit class), for the summary

    def try_acquire(self) -> bool:
        """Take the request's slots now if nothing would make ``acquire`` wait (no rate, no pause running,
        room in every gate); False: nothing taken, the caller awaits ``acquire``. The common case on the
        hot path, without the two coroutines ``acquire`` costs."""
        if self._limits or (self._resume_at and self._resume_at > time.monotonic()):
            return False
        gates = self._gates
        for gate in gates:
            if not gate.has_room():
                return False
        for gate in gates:
            gate.in_flight += 1
        return True

    async def acquire(self, tokens: int) -> None:
        gates = self._gates
        for i, gate in enumerate(gates):
            try:
                await gate.acquire()
            except BaseException:
                for held in gates[:i]:
                    held.release()
                raise
        try:
            if self._resume_at and self._resume_at > time.monotonic():
                await anyio.sleep(self._resume_at - time.monotonic())
            # Book one limit at a time, the account's last: its slot is the one
            # closest to the moment the request leaves.
            for lim in self._limits:
                await lim.acquire(tokens)
        except BaseException:
            for gate in gates:
                gate.release()
            raise

    def release(self, outcome: int, sent_at: float) -> None:
        for gate in self._gates:
            gate.release()
            if outcome == OK:
                gate.on_success()
            elif outcome == THROTTLED:
                gate.on_throttle(sent_at)
        if outcome == THROTTLED:
            self.throttled += 1

    def settle(self, delta: int) -> None:
        """Correct the token estimate charged before the call by what the API reported."""
        for lim in self._limits:
            lim.settle(delta)

    def pause(self, seconds: float) -> None:
        """No new request of this model leaves for ``seconds`` (Retry-After, or a header saying 0 left)."""
        until = time.monotonic() + seconds
        if until > self._resume_at:
            self._resume_at = until

    @property
    def concurrency(self) -> int | None:
        """The current adaptive limit of this model (None when not adaptive)."""
        return self._gates[0].limit if self._gates else None


# ----------------------------------------------------------------- server hints

_GO_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def go_duration_s(value: str) -> float | None:
    """OpenAI's reset headers: '250ms', '1.5s', '6m0s', '1h2m3s'."""
    parts = _GO_DURATION.findall(value)
    return sum(float(n) * _UNIT_S[u] for n, u in parts) if parts else None


def rfc3339_s(value: str) -> float | None:
    """Anthropic's reset headers are absolute times: seconds from now."""
    try:
        return max(0.0, datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() - time.time())
    except ValueError:
        return None


def _int(v: str | None) -> int | None:
    try:
        return int(float(v)) if v is not None else None
    except ValueError:
        return None


def _pause(remaining: int | None, limit: int | None, reset_s: float | None, need: int) -> float | None:
    """How long to hold back when fewer than ``need`` units remain.

    ``reset`` is the time until the limit is whole again; the deficit's share of
    what is used is about how long the deficit takes to come back, for a token
    bucket (OpenAI, Anthropic) and a sliding window alike.
    """
    if remaining is None or remaining >= need or reset_s is None:
        return None
    used = (limit - remaining) if limit else 0
    return reset_s * (need - remaining) / used if used > 0 else reset_s


def header_pause(headers: Mapping[str, str], prefix: str, suffix_style: bool, est_tokens: int) -> float | None:
    """Seconds to pause before the next request, from the rate-limit headers of a response.

    OpenAI: ``x-ratelimit-{remaining,limit,reset}-{requests,tokens}`` with
    Go-duration resets; Anthropic: ``anthropic-ratelimit-{requests,tokens}-{remaining,limit,reset}``
    with RFC 3339 resets.
    """
    waits = []
    for kind, need in (("requests", 1), ("tokens", est_tokens)):
        if suffix_style:  # OpenAI
            rem, lim, rst = (headers.get(f"{prefix}-{f}-{kind}") for f in ("remaining", "limit", "reset"))
            reset_s = go_duration_s(rst) if rst else None
        else:  # Anthropic
            rem, lim, rst = (headers.get(f"{prefix}-{kind}-{f}") for f in ("remaining", "limit", "reset"))
            reset_s = rfc3339_s(rst) if rst else None
        w = _pause(_int(rem), _int(lim), reset_s, need)
        if w:
            waits.append(w)
    return max(waits) if waits else None

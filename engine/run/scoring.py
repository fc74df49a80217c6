"""Scoring an answer without holding the run's event loop, at a bounded cost per answer.

A scorer (benchmark/) is plain Python over the answer's text: microseconds for a
normal answer, but a model looping on one line sends tens of kilobytes, and a rule
that costs more than linear time on a long line then takes seconds to minutes. Run
on the event loop, that one answer holds every other model's calls, whose timeouts
fire while they wait. So:

- an answer up to `INLINE_CHARS` characters is scored inline: a thread hop costs
  more than its score (bench/throughput.py measures both);
- a longer one is scored in a worker thread, at most `THREADS` at a time per run,
  and stopped once it has run `CAP_S` seconds: the caller stores that as an error
  row of class `scorer` (retried on resume), never as a score.

The stop is a profile hook set in the worker thread only (`sys.setprofile`), which
raises at the scorer's next function call or return past the deadline: scorers are
pure functions, so stopping one anywhere leaves nothing half-done. A scorer that
swallowed the stop still has its result thrown away (`ScoringOverrun`).
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from anyio.lowlevel import RunVar

T = TypeVar("T")

INLINE_CHARS = 4096  # longer answers are scored in a thread
CAP_S = 5.0  # a scorer running longer on one answer is stopped: the row is a `scorer` error
THREADS = 2  # scoring threads per run: a looping model's answers queue, no other lane waits on them

_threads: RunVar[anyio.CapacityLimiter] = RunVar("scoring_threads")


class ScoringOverrun(Exception):
    """A scorer ran past the cap on one answer (the answer is kept; it is scored again on resume)."""


class _Stop(BaseException):
    """Raised inside the scorer by the hook: a BaseException, so a scorer's `except Exception` lets it through."""


async def score_bounded(score: Callable[[], T], size: int) -> T:
    """`score()` inline when the answer has at most INLINE_CHARS characters (`size`), else in a
    scoring thread, capped at CAP_S (ScoringOverrun)."""
    if size <= INLINE_CHARS:
        return score()
    # abandon_on_cancel: Ctrl-C does not wait for the scorer, which stops itself within CAP_S.
    return await anyio.to_thread.run_sync(functools.partial(capped, score, CAP_S), limiter=_limiter(),
                                          abandon_on_cancel=True)


def capped(fn: Callable[[], T], cap_s: float) -> T:
    """`fn()` in this thread, stopped once it has run `cap_s` seconds (ScoringOverrun)."""
    deadline = time.monotonic() + cap_s
    stopped = False

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal stopped
        if time.monotonic() > deadline:
            stopped = True
            raise _Stop  # CPython unsets the hook when it raises

    previous = sys.getprofile()
    sys.setprofile(hook)
    try:
        try:
            result = fn()
        finally:
            sys.setprofile(previous)  # the hook may fire on this very call: the outer clause takes it
    except _Stop:
        raise ScoringOverrun(f"scoring took over {cap_s:g} s") from None
    if stopped:  # the scorer caught the stop and went on: what it returned is not to be trusted
        raise ScoringOverrun(f"scoring took over {cap_s:g} s")
    return result


def _limiter() -> anyio.CapacityLimiter:
    """The run's scoring threads (one limiter per event loop: anyio objects belong to their loop)."""
    try:
        return _threads.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(THREADS)
        _threads.set(limiter)
        return limiter

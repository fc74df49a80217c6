"""Scoring an answer without holding the run's event loop, at a bounded cost per answer.

A scorer (benchmark/) is plain Python over the answer's text: microseconds for a
normal answer, but a model looping on one line sends tens of kilobytes, and a rule
that costs more than linear time on a long line then takes seconds to minutes. Run
on the event loop, that one answer holds every other model's calls, whose timeouts
fire while they wait. So:

- an answer up to `INLINE_CHARS` characters is scored inline: a thread hop costs
  more than its score (bench/throughput.py --inline-chars 0 measures it);
- a longer one is scored in a worker thread, at most `THREADS` at a time per run,
  and stopped once it has used `CAP_S` seconds of CPU: the caller stores that as an
  error row of class `scorer` (retried on resume), never as a score.

The cap counts the scoring thread's own CPU time, not wall time: on a busy machine, or
beside the other scoring thread (they share the GIL), a normal long answer still gets
the CPU it needs and its score; only a scorer that truly runs away is stopped.

The stop: the event loop watches the thread's CPU clock and, past the cap, raises an
exception inside the thread (CPython's PyThreadState_SetAsyncExc), which lands at the
scorer's next bytecode. Scorers are pure functions, so stopping one anywhere leaves
nothing half-done; a scorer that swallowed the stop still has its result thrown away.
A profile hook checking the clock at every call (`sys.setprofile`) did the same at no
risk, but made the scoring of a 64 KB line 4 times slower in a thread (measured).
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

import anyio
import anyio.to_thread
from anyio.lowlevel import RunVar

T = TypeVar("T")

INLINE_CHARS = 4096  # longer answers are scored in a thread
CAP_S = 2.0  # CPU seconds a scorer may use on one answer (slowest real answer measured: 0.5 s)
THREADS = 2  # scoring threads per run: a looping model's answers queue, no other lane waits on them
WATCH_S = 0.05  # how often the loop reads a scoring thread's CPU clock

_threads: RunVar[anyio.CapacityLimiter] = RunVar("scoring_threads")


class ScoringOverrun(Exception):
    """A scorer ran past the cap on one answer (the answer is kept; it is scored again on resume)."""


class _Stop(BaseException):
    """Raised inside the scorer: a BaseException, so a scorer's `except Exception` lets it through."""


async def score_bounded(score: Callable[[], T], size: int) -> T:
    """`score()` inline when the answer has at most INLINE_CHARS characters (`size`), else in a
    scoring thread, stopped past CAP_S seconds of CPU (ScoringOverrun)."""
    if size <= INLINE_CHARS:
        return score()
    job = Capped(score, CAP_S)
    overrun: ScoringOverrun | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(job.watch)
        try:
            # abandon_on_cancel: Ctrl-C does not wait for the scorer; `stop` below ends it.
            result = await anyio.to_thread.run_sync(job.run, limiter=_limiter(), abandon_on_cancel=True)
        except ScoringOverrun as e:
            overrun = e  # raised outside the task group, not wrapped in an exception group
        finally:
            job.stop()  # a no-op once it returned
            tg.cancel_scope.cancel()
    if overrun is not None:
        raise overrun
    return result


class Capped(Generic[T]):
    """One scoring, run in a thread (`run`) and stopped from the event loop past `cap_s` of its CPU (`watch`)."""

    def __init__(self, fn: Callable[[], T], cap_s: float):
        self.fn, self.cap_s = fn, cap_s
        self._lock = threading.Lock()  # `stop` never lands after `run` has left the scorer
        self._state = "waiting"  # -> running -> done, or running -> stopped
        self._thread = 0
        self._clock: Callable[[], float] = time.monotonic
        self._start = 0.0

    def run(self) -> T:
        """In the scoring thread: the scorer's result, or ScoringOverrun once stopped."""
        with self._lock:
            self._thread = threading.get_ident()
            self._clock = _cpu_clock(self._thread)
            self._start = self._clock()
            self._state = "running"
        try:
            try:
                result = self.fn()
            finally:
                with self._lock:
                    stopped = self._state == "stopped"
                    self._state = "done"
                    _raise_in(self._thread, None)  # a stop sent as the scorer returned: dropped
        except _Stop:
            raise ScoringOverrun(f"scoring used over {self.cap_s:g} s of CPU") from None
        if stopped:  # the scorer caught the stop and went on: what it returned is not to be trusted
            raise ScoringOverrun(f"scoring used over {self.cap_s:g} s of CPU")
        return result

    async def watch(self) -> None:
        """On the event loop: stop the scorer once it has used its CPU allowance."""
        while not self.used_up():
            await anyio.sleep(WATCH_S)
        self.stop()

    def used_up(self) -> bool:
        with self._lock:
            return self._state == "running" and self._clock() - self._start >= self.cap_s

    def stop(self) -> None:
        with self._lock:
            if self._state == "running":
                self._state = "stopped"
                _raise_in(self._thread, _Stop)


def _cpu_clock(thread: int) -> Callable[[], float]:
    """The CPU clock of a thread, readable from another (wall time where the platform has none)."""
    try:
        clock = time.pthread_getcpuclockid(thread)
    except (AttributeError, OSError):
        return time.monotonic
    return lambda: time.clock_gettime(clock)


def _raise_in(thread: int, exc: type[BaseException] | None) -> None:
    """Raise `exc` in `thread` at its next bytecode (None: cancel one not raised yet)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread),
                                               ctypes.py_object(exc) if exc is not None else None)


def _limiter() -> anyio.CapacityLimiter:
    """The run's scoring threads (one limiter per event loop: anyio objects belong to their loop)."""
    try:
        return _threads.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(THREADS)
        _threads.set(limiter)
        return limiter

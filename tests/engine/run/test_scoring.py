"""engine.run.scoring: short answers scored inline, long ones in a thread that a deadline stops."""

from __future__ import annotations

import threading
import time

import anyio
import pytest

from engine.run import scoring
from engine.run.scoring import Capped, ScoringOverrun, score_bounded


def _spin(seconds: float) -> str:
    """Pure Python work of about `seconds`, in many small calls (like the extraction rules)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sum(range(200))
    return "done"


def test_a_short_answer_is_scored_inline_and_a_long_one_in_a_thread():
    seen: list[bool] = []

    def score() -> str:
        seen.append(threading.current_thread() is threading.main_thread())
        return "ok"

    async def main() -> None:
        assert await score_bounded(score, scoring.INLINE_CHARS) == "ok"
        assert await score_bounded(score, scoring.INLINE_CHARS + 1) == "ok"

    anyio.run(main)
    assert seen == [True, False]


def test_a_slow_scorer_leaves_the_event_loop_free():
    """While a long answer is scored, the loop's other tasks still run every few milliseconds."""
    gaps: list[float] = []

    async def ticker(stop: anyio.Event) -> None:
        last = time.monotonic()
        while not stop.is_set():
            await anyio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    async def main() -> None:
        stop = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(ticker, stop)
            assert await score_bounded(lambda: _spin(1.0), 100_000) == "done"
            stop.set()

    anyio.run(main)
    assert len(gaps) > 20 and max(gaps) < 0.5


def _bounded(fn, cap_s: float, monkeypatch):
    """`fn` scored as a long answer under a cap of `cap_s` seconds of CPU."""
    monkeypatch.setattr(scoring, "CAP_S", cap_s)
    return anyio.run(score_bounded, fn, 100_000)


def test_a_scorer_past_the_cap_is_stopped(monkeypatch):
    t0 = time.monotonic()
    with pytest.raises(ScoringOverrun, match="scoring used over 0.3 s of CPU"):
        _bounded(lambda: _spin(30.0), 0.3, monkeypatch)
    assert time.monotonic() - t0 < 5.0


def test_a_scorer_that_swallows_the_stop_gives_no_result(monkeypatch):
    def stubborn() -> str:
        try:
            return _spin(30.0)
        except BaseException:  # noqa: BLE001 - what the cap must survive
            return "wrong"

    with pytest.raises(ScoringOverrun):
        _bounded(stubborn, 0.3, monkeypatch)


def test_a_scorer_within_the_cap_returns_its_result(monkeypatch):
    assert _bounded(lambda: _spin(0.05), 5.0, monkeypatch) == "done"


def test_the_cap_counts_the_scorers_cpu_not_its_wall_time(monkeypatch):
    """A busy machine (here: a scorer that waits) does not make a normal answer overrun."""
    assert _bounded(lambda: time.sleep(0.6) or "slept", 0.2, monkeypatch) == "slept"


def test_a_stop_sent_as_the_scorer_returns_never_reaches_the_thread_pool():
    """The stop is cancelled once the scorer has returned: the worker thread goes on serving."""
    job = Capped(lambda: "ok", 5.0)
    assert job.run() == "ok"
    job.stop()  # too late: a no-op
    assert sum(range(10)) == 45  # this thread did not get the stop


def test_scoring_threads_are_bounded_per_run(monkeypatch):
    monkeypatch.setattr(scoring, "THREADS", 2)
    running, peak = [0], [0]
    lock = threading.Lock()

    def score() -> str:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        _spin(0.1)
        with lock:
            running[0] -= 1
        return "ok"

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(6):
                tg.start_soon(score_bounded, score, 100_000)

    anyio.run(main)
    assert peak[0] == 2


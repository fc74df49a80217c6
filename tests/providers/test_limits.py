"""Pacing, adaptive concurrency and the servers' rate-limit hints."""

import time
from datetime import datetime, timedelta, timezone

import anyio
import pytest

from providers.concurrency import AdaptiveLimit
from providers.limits import HEADROOM, OK, THROTTLED, Limits, Pacer, RateLimit, go_duration_s, header_pause


def test_pacer_spaces_slots_evenly_and_keeps_the_long_run_rate():
    p = Pacer(600)  # 10 a second
    waits = [p.book(1, now=100.0) for _ in range(5)]
    assert waits == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4])
    # Lateness does not accumulate: a caller arriving later than its slot just goes.
    assert p.book(1, now=101.0) == 0.0


def test_pacer_settles_token_estimates():
    p = Pacer(6000)  # 100 tokens a second
    assert p.book(500, now=0.0) == 0.0
    assert p.book(100, now=0.0) == pytest.approx(5.0)
    p.adjust(-400)  # the first call used 100 tokens, not 500: refund
    assert p.book(1, now=0.0) == pytest.approx(2.0)


async def test_rate_limit_paces_requests_at_the_configured_rate():
    lim = Limits(RateLimit(rpm=1200))  # 20 a second
    t0 = time.monotonic()
    for _ in range(11):
        await lim.acquire(10)
        lim.release(OK, t0)
    elapsed = time.monotonic() - t0
    assert 10 / 20 / HEADROOM - 0.01 <= elapsed < 0.5 + 0.2


async def test_adaptive_limit_halves_once_per_round_and_grows_back():
    gate = AdaptiveLimit(16)
    sent = time.monotonic()
    gate.on_throttle(sent)
    assert gate.limit == 8
    gate.on_throttle(sent)  # sent before the cut: same congestion event, no second cut
    assert gate.limit == 8 and gate.cuts == 1
    gate.on_throttle(time.monotonic())
    assert gate.limit == 4
    for _ in range(4):
        gate.on_success()
    assert gate.limit == 5  # +1 after a window of `limit` successes
    for _ in range(1000):
        gate.on_success()
    assert gate.limit == 16  # never above the configured maximum


async def test_adaptive_limit_blocks_above_the_limit_and_wakes_in_order():
    gate = AdaptiveLimit(2)
    await gate.acquire()
    await gate.acquire()
    order = []

    async def waiter(i):
        await gate.acquire()
        order.append(i)

    async with anyio.create_task_group() as tg:
        for i in range(3):
            tg.start_soon(waiter, i)
        await anyio.sleep(0.01)
        assert order == [] and gate.in_flight == 2
        gate.release()
        await anyio.sleep(0.01)
        assert order == [0]
        gate.release()
        gate.release()
    assert order == [0, 1, 2] and gate.in_flight == 2


async def test_cancelled_waiter_gives_its_slot_back():
    gate = AdaptiveLimit(1)
    await gate.acquire()
    with anyio.move_on_after(0.02):
        await gate.acquire()
    gate.release()
    assert gate.in_flight == 0
    await gate.acquire()  # not stuck behind the cancelled waiter
    assert gate.in_flight == 1


async def test_limits_feed_throttling_to_every_gate():
    own, pool = AdaptiveLimit(8), AdaptiveLimit(20)
    lim = Limits(gates=[own, pool])
    await lim.acquire(1)
    lim.release(THROTTLED, time.monotonic())
    assert (own.limit, pool.limit, lim.throttled, own.in_flight, pool.in_flight) == (4, 10, 1, 0, 0)
    assert lim.concurrency == 4


def test_try_acquire_takes_every_gate_or_nothing():
    # The hot path's synchronous acquire: all the slots when no gate is full, no rate and no pause;
    # otherwise nothing taken (the caller awaits `acquire`).
    own, pool = AdaptiveLimit(2), AdaptiveLimit(1)
    lim = Limits(gates=[own, pool])
    assert lim.try_acquire() and (own.in_flight, pool.in_flight) == (1, 1)
    assert not lim.try_acquire() and (own.in_flight, pool.in_flight) == (1, 1)  # the pool is full
    lim.release(OK, time.monotonic())
    assert lim.try_acquire()
    lim.release(OK, time.monotonic())
    lim.pause(60)
    assert not lim.try_acquire() and (own.in_flight, pool.in_flight) == (0, 0)
    assert not Limits(RateLimit(rpm=600)).try_acquire()  # a rate books its slot in `acquire`


async def test_pause_holds_new_requests():
    lim = Limits()
    lim.pause(0.2)
    t0 = time.monotonic()
    await lim.acquire(1)
    assert time.monotonic() - t0 >= 0.19


def test_go_durations():
    assert go_duration_s("250ms") == pytest.approx(0.25)
    assert go_duration_s("6m0s") == pytest.approx(360)
    assert go_duration_s("1h2m3.5s") == pytest.approx(3723.5)
    assert go_duration_s("soon") is None


def test_openai_headers_pause_only_when_exhausted():
    full = {"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": "60s"}
    assert header_pause(full, "x-ratelimit", True, 100) == pytest.approx(1.0)  # one slot of 60/min
    assert header_pause({**full, "x-ratelimit-remaining-requests": "5"}, "x-ratelimit", True, 100) is None
    tokens = {"x-ratelimit-limit-tokens": "10000", "x-ratelimit-remaining-tokens": "100",
              "x-ratelimit-reset-tokens": "59.4s"}
    # 900 tokens short; 9,900 used refill in 59.4 s -> 5.4 s for the deficit.
    assert header_pause(tokens, "x-ratelimit", True, 1000) == pytest.approx(5.4)


def test_anthropic_headers_use_absolute_reset_times():
    reset = (datetime.now(timezone.utc) + timedelta(seconds=10)).isoformat().replace("+00:00", "Z")
    h = {"anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0",
         "anthropic-ratelimit-requests-reset": reset}
    assert header_pause(h, "anthropic-ratelimit", False, 10) == pytest.approx(10 / 50, abs=0.01)


def test_callers_woken_together_after_a_stall_leave_an_interval_apart():
    p = Pacer(600)  # 0.1 s apart
    booked = [p.book(1, now=0.0) for _ in range(4)]  # slots 0, 0.1, 0.2, 0.3
    assert booked == pytest.approx([0.0, 0.1, 0.2, 0.3])
    # The loop stalled: all four wake at t = 1.0. Only the first may go at once.
    departures = [1.0 + p.depart(1.0) for _ in range(4)]
    assert departures == pytest.approx([1.0, 1.05, 1.15, 1.25])
    # On-time callers with small jitter never wait at departure.
    q = Pacer(600)
    for i in range(5):
        t = q.book(1, now=0.0) + (0.003 if i % 2 else 0.0)
        assert q.depart(t) == 0.0

"""engine.run.eventloop: the calling phase's loop and collector settings, and that both are put back."""

import asyncio
import gc

import pytest

from engine.run import eventloop


def test_runs_on_uvloop_when_installed_and_restores_the_collector():
    before = gc.get_threshold()

    async def inside():
        return type(asyncio.get_running_loop()).__module__, gc.get_threshold()

    loop_module, during = eventloop.run(inside)
    assert gc.get_threshold() == before
    assert during[0] >= eventloop.GEN0_ALLOCATIONS and during[1:] == before[1:]
    if eventloop.HAVE_UVLOOP:
        assert loop_module.startswith("uvloop")


def test_collector_turned_off_stays_off_and_errors_still_restore():
    before = gc.get_threshold()
    gc.set_threshold(0)
    try:
        async def inside():
            return gc.get_threshold()[0]

        assert eventloop.run(inside) == 0
    finally:
        gc.set_threshold(*before)

    async def fails():
        raise ValueError("boom")

    with pytest.raises(ValueError):
        eventloop.run(fails)
    assert gc.get_threshold() == before


def test_signal_handlers_found_before_the_loop_are_put_back():
    # A signal receiver's close leaves SIGTERM at SIG_DFL: a SIGTERM in the end-of-run work killed the
    # process instead of the start-up handler turning it into exit 130.
    import signal

    import anyio

    def mine(signum, frame):
        raise KeyboardInterrupt

    previous = {s: signal.signal(s, mine) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        async def inside():
            with anyio.move_on_after(0.05):
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for _ in signals:
                        pass

        eventloop.run(inside)
        assert signal.getsignal(signal.SIGTERM) is mine and signal.getsignal(signal.SIGINT) is mine
    finally:
        for s, h in previous.items():
            signal.signal(s, h)

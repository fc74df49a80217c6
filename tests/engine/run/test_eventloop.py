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

"""engine/run/collector.py: the collector off while a sweep starts, then its start-up frozen."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator

import pytest

from engine.run import collector, eventloop


@pytest.fixture(autouse=True)
def _collector_as_found() -> Iterator[None]:
    collector.release()
    gc.enable()
    yield
    collector.release()
    gc.unfreeze()
    gc.enable()


def test_held_until_released_then_what_was_built_is_frozen_and_collection_resumes():
    frozen = gc.get_freeze_count()
    collector.hold()
    assert not gc.isenabled()
    built = [[i] for i in range(1000)]  # noqa: F841 - lives through the start-up, as planned items do
    collector.release()
    assert gc.isenabled()
    assert gc.get_freeze_count() >= frozen + 1000
    collector.release()  # twice is once
    assert gc.isenabled()


def test_release_without_hold_changes_nothing():
    frozen = gc.get_freeze_count()
    collector.release()
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_a_collector_turned_off_by_the_caller_is_left_off():
    gc.disable()
    collector.hold()
    collector.release()
    assert not gc.isenabled()


def test_a_start_up_that_never_reaches_a_calling_phase_gets_it_back_after_the_longest_wait():
    collector.hold(longest_s=0.05)
    assert not gc.isenabled()
    deadline = time.monotonic() + 5
    while not gc.isenabled() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert gc.isenabled()


def test_the_calling_phase_runs_with_the_collector_back():
    collector.hold()

    async def inside() -> bool:
        return gc.isenabled()

    assert eventloop.run(inside) is True

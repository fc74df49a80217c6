"""engine.run.workers: the lane helper's width, stop, drain and error behaviour."""

from __future__ import annotations

import anyio
import pytest

from engine.run.workers import STOP, run_workers


def _run(fn):
    return anyio.run(fn)


def test_every_item_is_handled_once_and_at_most_width_at_a_time():
    seen: list[int] = []
    busy = [0, 0]  # now, most

    async def handle(x: int) -> None:
        busy[0] += 1
        busy[1] = max(busy)
        await anyio.sleep(0)
        seen.append(x)
        busy[0] -= 1

    _run(lambda: run_workers(range(50), width=4, handle=handle))
    assert sorted(seen) == list(range(50))
    assert busy[1] == 4


def test_stop_ends_only_the_worker_that_returned_it():
    # Worker-local: the other worker goes on until it too meets a STOP (a budget cap, a dead endpoint).
    handled: list[int] = []

    async def handle(x: int) -> object:
        await anyio.sleep(0)
        if x == 0:
            return STOP
        handled.append(x)
        return None

    _run(lambda: run_workers(iter(range(6)), width=2, handle=handle))
    assert sorted(handled) == [1, 2, 3, 4, 5]


def test_drain_takes_the_rest_of_a_channel_unhandled():
    handled: list[int] = []

    async def main() -> list[int]:
        send, receive = anyio.create_memory_object_stream[int](0)  # unbuffered: a sender waits for a taker

        async def feed() -> None:
            async with send:
                for i in range(20):
                    await send.send(i)  # would hang if the drained pool stopped taking

        async def handle(x: int) -> object:
            if x == 3:
                return STOP
            handled.append(x)
            return None

        await run_workers(receive, width=2, handle=handle, on_stop="drain", feeders=[feed])
        return handled

    assert _run(main) == [0, 1, 2]


def test_an_error_in_a_handler_cancels_the_pool_and_reaches_the_caller():
    async def handle(x: int) -> None:
        if x == 2:
            raise ValueError("boom")
        await anyio.sleep(0)

    with pytest.raises(BaseExceptionGroup) as info:
        _run(lambda: run_workers(range(100), width=3, handle=handle))
    assert info.group_contains(ValueError, match="boom")

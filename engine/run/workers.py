"""The lane helper: a bounded pool of workers pulling from one shared stream of work.

Every lane of a run is one of these: a model's lane in a sweep (engine/lanes/model_lane.py),
a side lane asking the judge or the extractor (engine/lanes/side_lane.py), a target
model's CompactBench units (engine/compactbench/run.py). The lane says what one
piece of work is (`handle`); the pool says how many run at once and when to stop.

- `width` workers share `work`, a plain iterator (a generator that never awaits,
  so `next` cannot interleave) or an async one (a channel several workers read).
- `handle` returning STOP ends that worker (`on_stop="end"`: a budget cap, an
  endpoint given up; the other workers stop at their own next STOP), or, with
  `on_stop="drain"`, turns the whole pool into a drain: the rest of the work is
  taken and dropped unhandled, so whoever feeds a channel never waits on it.
- An exception from `handle` is not caught: it cancels the pool and the run.
"""

from __future__ import annotations

from collections.abc import (
    AsyncIterable,
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Iterator,
    Sequence,
)
from typing import Any, Literal, TypeVar

import anyio

T = TypeVar("T")


class _Stop:
    __slots__ = ()

    def __repr__(self) -> str:
        return "STOP"


STOP = _Stop()  # what `handle` returns to stop (see on_stop)

Handler = Callable[[T], Awaitable[object]]


async def run_workers(work: Iterable[T] | AsyncIterable[T], *, width: int, handle: Handler[T],
                      on_stop: Literal["end", "drain"] = "end",
                      feeders: Sequence[Callable[[], Coroutine[Any, Any, None]]] = ()) -> None:
    """Run `width` workers over `work` until it is exhausted (or every worker stopped).

    `feeders` run in the same task group, started first (a side lane's backlog reader
    filling the channel the workers read), so an error anywhere cancels all of it.
    """
    draining = [False]  # one flag for the pool: a drain is the lane's state, not a worker's
    end = on_stop == "end"

    # `handle` is awaited right in each worker's loop: a helper coroutine between them would be one
    # frame more on every resumption of every request (bench/README.md, "The calling phase, third pass").
    async def from_iterator(items: Iterator[T]) -> None:
        for w in items:
            if draining[0]:
                continue
            if await handle(w) is STOP:
                if end:
                    return  # this worker ends
                draining[0] = True

    async def from_stream(items: AsyncIterable[T]) -> None:
        async for w in items:
            if draining[0]:
                continue
            if await handle(w) is STOP:
                if end:
                    return
                draining[0] = True

    async with anyio.create_task_group() as tg:
        for feed in feeders:
            tg.start_soon(feed)
        if isinstance(work, AsyncIterable):
            for _ in range(width):
                tg.start_soon(from_stream, work)
        else:
            shared = iter(work)  # one iterator for all workers, even when given a list
            for _ in range(width):
                tg.start_soon(from_iterator, shared)

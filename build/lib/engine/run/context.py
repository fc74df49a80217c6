"""One run's shared state and its skeleton, opened and closed in one place.

A sweep and a CompactBench run are the same skeleton around different lanes:
a DuckDB connection and a batched Writer, progress bars, the models' limits and
breakers, an optional spending cap, Ctrl-C/SIGTERM handling, and a close that
flushes every row even when interrupted. `execute` runs a body with a
`RunContext` on the run loop (engine/run/eventloop.py) and stores the run's outcome;
`RunContext.running` is the task group the body's lanes run in.

A lane (engine/lanes/model_lane.py's ModelLane, a batch lane, ...) takes the context as
its one input: it reads its rows' destination (`answers`), `progress`, `budget`
and `limits` from it; `interrupt` stops it; `writer` is flushed for it. A side lane
(the judge, the extractor) also registers itself (`add_side`): its writer runs
beside the main one, it is closed with the run, and every answer put to `answers`
is offered to it. `run_lanes` runs them all: the side lanes take the last answers
once the other lanes have ended.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable
from typing import Any, Protocol, TypeVar

import anyio
import duckdb

from engine.run import eventloop
from engine.run.interrupt import Interrupt
from engine.run.progress import Progress
from providers.breaker import Breaker
from providers.limits import Limits
from store.side import compactbench as cbstore
from store import memory
from store.results import history
from store.results import runs
from store.results.writer import Writer

T = TypeVar("T")



class RowSink(Protocol):
    """Where a lane puts its rows: the Writer, or a Tee also feeding side lanes."""

    async def put(self, row: Any) -> None: ...


class Lane(Protocol):
    """A lane of a run (engine/lanes/model_lane.py:ModelLane; a batch lane): all it shares comes from `ctx`."""

    async def run(self, ctx: RunContext) -> None: ...


class Side(Protocol):
    """A lane fed by the answers of the others (engine/lanes/side_lane.py:SideLane: the judge, the extractor)."""

    writer: Writer

    async def offer(self, row: Any) -> None:
        """An answer stored in this run: taken when the lane wants it (it may wait while the lane is behind)."""

    async def run(self, ctx: RunContext) -> None: ...

    async def answers_done(self) -> None:
        """No more answers will be offered: the lane ends once it has handled what it holds."""

    async def aclose(self) -> None:
        """Flush its rows and close its connections (shielded, after an interrupt too)."""


class Tee:
    """The run's `answers` once side lanes exist: stores each answer, and offers it to every side lane."""

    def __init__(self, writer: Writer, sides: list[Side]):
        self._writer, self._sides = writer, sides

    async def put(self, row: Any) -> None:
        await self._writer.put(row)
        for side in self._sides:
            await side.offer(row)

    async def synced(self) -> None:
        """Every answer put so far is in the database (side lanes' rows follow on their own)."""
        await self._writer.synced()


class RunRecord(Protocol):
    """The stored row(s) saying a run is running, and how it ended."""

    def start(self) -> None: ...

    def end(self, outcome: str) -> None:
        """The run returned: 'complete', 'interrupted', 'budget', 'stopped' or 'unreachable' (RunContext.outcome)."""

    def abort(self, outcome: str) -> None:
        """The run raised: 'interrupted' (a signal) or 'failed'."""


class StoredRun:
    """The sweep's `runs` row (store/results/runs.py): inserted `running`, never left so by a finished process."""

    def __init__(self, con: duckdb.DuckDBPyConnection, run_id: str, *, command: str, engine_version: str,
                 suite: str, suite_version: str):
        self.con, self.run_id = con, run_id
        self._start = {"command": command, "engine_version": engine_version, "suite": suite,
                       "suite_version": suite_version}

    def start(self) -> None:
        runs.start_run(self.con, self.run_id, **self._start)

    def end(self, outcome: str) -> None:
        runs.end_run(self.con, self.run_id, outcome)

    def abort(self, outcome: str) -> None:
        with contextlib.suppress(duckdb.Error, OSError):  # the original error matters more
            runs.end_run(self.con, self.run_id, outcome)


def close_stale_runs(con: duckdb.DuckDBPyConnection) -> None:
    """Runs a killed process left `running` (sweeps, rescores, CompactBench runs) become `interrupted`.

    Called by every command that writes, once it holds the database (DuckDB lets one process write
    it): no other run can be going on, so every `running` row is stale.
    """
    runs.close_stale_runs(con)
    history.close_stale(con)
    cbstore.close_stale_runs(con)


def prompt_tokens(messages: Iterable[Any]) -> int:
    """A prompt's tokens as estimated before the call: UTF-8 bytes / 3 (English runs ~4 bytes a token,
    Chinese ~3, so this errs high)."""
    return sum(len(m.content.encode()) for m in messages) // 3


def cost_bound(price: Any, messages: Iterable[Any], max_output: int) -> float:
    """A call's cost at most, for the Budget and `--estimate`: its prompt in, `max_output` tokens out
    (0 without a price: an unpriced model is not budgeted)."""
    if price is None:
        return 0.0
    return price.cost(prompt_tokens(messages), max_output) or 0.0


class Budget:
    """A spending cap over the whole run (all lanes share one, the judge's and the extractor's calls too;
    single event loop, no lock).

    Before an item is dispatched its cost is reserved at an upper bound (the
    prompt's estimated tokens, and max_tokens of output); when it returns the
    reservation is replaced by the cost the API's usage implies. Dispatching
    stops for good once the next item could take the spend past the cap, so
    the cap is not crossed unless a model answers longer than max_tokens.
    """

    def __init__(self, limit_usd: float):
        self.limit = limit_usd
        self.spent = 0.0
        self.reserved = 0.0
        self.stopped = False

    def reserve(self, est: float) -> bool:
        if self.stopped or self.spent + self.reserved + est > self.limit:
            self.stopped = True
            return False
        self.reserved += est
        return True

    def settle(self, est: float, actual: float | None) -> None:
        self.reserved -= est
        self.spent += actual or 0.0


class RunContext:
    """What every lane of one run shares. Made by `execute`, on the run loop."""

    def __init__(self, con: duckdb.DuckDBPyConnection, *, progress: Progress, run_id: str | None = None,
                 limits: dict[str, Limits] | None = None, breakers: dict[str, Breaker] | None = None,
                 budget: Budget | None = None, quiet: bool = False,
                 insert: Callable[[duckdb.DuckDBPyConnection, list[Any]], None] | None = None):
        self.con, self.run_id, self.progress, self.quiet = con, run_id, progress, quiet
        self.limits = limits or {}
        self.breakers = breakers or {}
        self.budget = budget
        self.writer = Writer(con, insert=insert)
        self.answers: RowSink = self.writer  # a sweep with side lanes puts a Tee here
        self.interrupt = Interrupt()
        self.sides: list[Side] = []
        self.stopped: list[str] = []  # lanes that stopped on what the user must decide (a model's version changed)
        self.writers: list[Writer] = [self.writer]
        self._background: list[tuple[Callable[..., Coroutine[Any, Any, Any]], tuple[Any, ...]]] = []
        self._closers: list[Callable[[], Awaitable[None]]] = []

    # ------------------------------------------------------------ set up before `running`

    def add_writer(self, writer: Writer) -> None:
        """Another Writer (a side lane's table) run beside the main one; its lane flushes it."""
        self.writers.append(writer)

    def add_side(self, side: Side) -> None:
        """A side lane: its writer runs beside the main one, it is closed after the main writer is flushed
        (an answer is stored before what a helper said of it), and every answer is offered to it."""
        self.sides.append(side)
        self.add_writer(side.writer)
        self.answers = Tee(self.writer, self.sides)

    def background(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """A task that runs until the lanes are done, then is cancelled (live view, snapshots)."""
        self._background.append((fn, args))

    def on_close(self, fn: Callable[[], Awaitable[None]]) -> None:
        """Called in order, shielded, when the lanes end (also on interrupt); the main writer is flushed last
        unless `flush` is registered earlier."""
        self._closers.append(fn)

    # ------------------------------------------------------------ the skeleton

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[RunContext]:
        """The body runs the lanes; a signal cancels it, and what is answered is kept. DuckDB's buffer pool is
        held small while they write (store/memory.py), not for the end-of-run work."""
        bound = memory.bounded(self.con) if self.con is not None else contextlib.nullcontext()
        with bound:
            async with self._running():
                yield self

    @contextlib.asynccontextmanager
    async def _running(self) -> AsyncIterator[RunContext]:
        async with anyio.create_task_group() as tg:
            for w in self.writers:
                tg.start_soon(w.run)
            tg.start_soon(self.progress.show)
            tg.start_soon(self.interrupt.watch)
            for fn, args in self._background:
                tg.start_soon(fn, *args)
            try:
                with self.interrupt.scope:
                    yield self
            finally:
                with anyio.CancelScope(shield=True):
                    for close in self._closers:
                        await close()
                    await self.flush()
                    for side in self.sides:
                        await side.aclose()
                tg.cancel_scope.cancel()

    async def run_lanes(self, lanes: Iterable[Lane]) -> None:
        """The side lanes and `lanes` until all end; side lanes are told when no more answers come."""
        async with anyio.create_task_group() as tg:
            for side in self.sides:
                tg.start_soon(side.run, self)
            async with anyio.create_task_group() as others:
                for lane in lanes:
                    others.start_soon(lane.run, self)
            for side in self.sides:
                await side.answers_done()

    async def flush(self) -> None:
        """No more rows: the main writer stores what it holds (idempotent)."""
        await self.writer.close()
        await self.writer.finished.wait()

    # ------------------------------------------------------------ after

    @property
    def interrupted(self) -> bool:
        return self.interrupt.happened

    def outcome(self) -> str:
        """How a run that returned ended: a signal, the budget, a lane stopped, an endpoint given up, or all done."""
        if self.interrupt.happened:
            return "interrupted"
        if self.budget is not None and self.budget.stopped:
            return "budget"
        if self.stopped:
            return "stopped"
        return "unreachable" if any(b.given_up for b in self.breakers.values()) else "complete"

    def errors(self) -> int:
        return sum(c.errors for c in self.progress.counters.values())


def execute(body: Callable[[RunContext], Awaitable[T]], context: Callable[[], RunContext], *,
            record: RunRecord | None = None) -> T:
    """Run `body(context())` on the run loop and store how it ended.

    `context` (e.g. ``functools.partial(RunContext, con, progress=...)``) is called on
    the loop: the anyio objects it makes belong to it. A signal that escapes the
    loop (during start-up, before the handler is installed) is a KeyboardInterrupt:
    the run is stored 'interrupted' and the exception goes on to the caller (exit 130).
    """
    made: list[RunContext] = []

    async def main() -> T:
        made.append(context())
        return await body(made[0])

    if record is not None:
        record.start()
    try:
        result = eventloop.run(main)
    except BaseException as e:
        if record is not None:
            record.abort("interrupted" if isinstance(e, KeyboardInterrupt) else "failed")
        raise
    if record is not None:
        record.end(made[0].outcome())
    return result

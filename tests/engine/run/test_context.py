"""engine.run.context: the run skeleton's close, outcome and interrupt handling."""

from __future__ import annotations

import functools

import anyio
import duckdb
import pytest

from engine.run.progress import Progress
from engine.run.context import Budget, RunContext, execute


class Record:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None]] = []

    def start(self) -> None:
        self.calls.append(("start", None))

    def end(self, outcome: str) -> None:
        self.calls.append(("end", outcome))

    def abort(self, outcome: str) -> None:
        self.calls.append(("abort", outcome))


def _insert(con: duckdb.DuckDBPyConnection, rows: list[int]) -> None:
    con.executemany("INSERT INTO t VALUES (?)", [[r] for r in rows])


@pytest.fixture
def con(tmp_path):
    c = duckdb.connect(str(tmp_path / "r.duckdb"))
    c.execute("CREATE TABLE t (x INTEGER)")
    yield c
    c.close()


def _context(con, **kw):
    return functools.partial(RunContext, con, progress=Progress(quiet=True), insert=_insert, **kw)


def test_rows_are_flushed_after_the_closers_and_the_run_is_complete(con):
    record, order = Record(), []

    async def body(ctx: RunContext) -> int:
        async def close() -> None:
            order.append(("closer", ctx.writer.rows_written))

        ctx.on_close(close)
        async with ctx.running():
            for i in range(5):
                await ctx.answers.put(i)
        return ctx.writer.rows_written

    assert execute(body, _context(con), record=record) == 5
    assert order == [("closer", 0)]  # providers close before the last rows are stored
    assert con.execute("SELECT count(*) FROM t").fetchone() == (5,)
    assert record.calls == [("start", None), ("end", "complete")]


def test_an_interrupt_stops_the_lanes_keeps_the_rows_and_is_the_outcome(con):
    record = Record()

    async def body(ctx: RunContext) -> bool:
        async with ctx.running():
            await ctx.answers.put(1)
            ctx.interrupt._stop()  # what SIGINT does
            await anyio.sleep_forever()  # cancelled, not waited for
        return ctx.interrupted

    assert execute(body, _context(con), record=record) is True
    assert con.execute("SELECT count(*) FROM t").fetchone() == (1,)
    assert record.calls[-1] == ("end", "interrupted")


def test_a_spent_budget_is_the_outcome(con):
    record = Record()
    budget = Budget(1.0)
    assert not budget.reserve(2.0)

    async def body(ctx: RunContext) -> None:
        async with ctx.running():
            pass

    execute(body, _context(con, budget=budget), record=record)
    assert record.calls[-1] == ("end", "budget")


@pytest.mark.parametrize(("exc", "outcome"), [(KeyboardInterrupt, "interrupted"), (ValueError, "failed")])
def test_a_run_that_raises_is_stored_as_interrupted_or_failed(con, exc, outcome):
    record = Record()

    async def body(ctx: RunContext) -> None:
        raise exc()

    with pytest.raises(exc):
        execute(body, _context(con), record=record)
    assert record.calls == [("start", None), ("abort", outcome)]


def test_duckdbs_buffer_pool_is_held_small_while_the_lanes_write_and_not_after(con):
    from store import memory

    before = memory.limit_bytes(con)
    seen: list[int] = []

    async def body(ctx: RunContext) -> None:
        async with ctx.running():
            seen.append(memory.limit_bytes(con))
            await ctx.answers.put(1)

    execute(body, _context(con))
    assert seen == [memory.RUN_LIMIT_MB * 2**20]
    assert abs(memory.limit_bytes(con) - before) < 0.01 * before

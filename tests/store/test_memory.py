"""store.memory: DuckDB's buffer pool held small while a run writes, raised when a statement needs more."""

from __future__ import annotations

import contextlib
import os

import anyio
import duckdb
import pytest

from store import memory
from store.db import connect
from store.results.writer import Writer, insert_rows
from tests.store.helpers import row

MIB = 2**20


def _settings(con: duckdb.DuckDBPyConnection) -> tuple[int, str]:
    got = con.execute("SELECT current_setting('checkpoint_threshold')").fetchone()
    assert got is not None
    return memory.limit_bytes(con), str(got[0])


def _rows(n: int) -> list:
    return [row(model=f"m{i % 7}", item_id=f"item-{i:07d}", prediction="x" * 40) for i in range(n)]


def test_bounded_holds_the_limit_and_stops_duckdbs_own_checkpoints_then_puts_back_what_it_found(tmp_path):
    con = connect(tmp_path / "r.duckdb")
    before = _settings(con)
    assert before[0] > 64 * MIB  # DuckDB's default: 80% of the machine's memory
    with pytest.raises(RuntimeError), memory.bounded(con):
        assert _settings(con) == (memory.RUN_LIMIT_MB * MIB, "976.5 GiB")
        raise RuntimeError("the run failed")
    after = _settings(con)
    assert after[1] == before[1] and abs(after[0] - before[0]) < 0.01 * before[0]  # as DuckDB prints it back


def test_a_runs_connection_never_vacuums_from_its_first_bounded_block_on(tmp_path):
    # DuckDB's vacuum merges row groups in a checkpoint, reading them back whole (a long run's peak, and
    # its close's): off for the run's checkpoints and for the checkpoint its connection closes with.
    con = connect(tmp_path / "r.duckdb")
    vacuum = "SELECT current_setting('max_vacuum_tasks')"
    assert con.execute(vacuum).fetchone() != (0,)
    with memory.bounded(con):
        assert con.execute(vacuum).fetchone() == (0,)
    assert con.execute(vacuum).fetchone() == (0,)


def test_bounded_never_raises_a_limit_set_lower(tmp_path):
    con = connect(tmp_path / "r.duckdb")
    con.execute("SET memory_limit = '32MiB'")
    with memory.bounded(con):
        assert memory.limit_bytes(con) == 32 * MIB
    assert memory.limit_bytes(con) == 32 * MIB


def test_a_write_that_needs_more_than_the_limit_is_run_again_with_it_doubled(tmp_path):
    con = connect(tmp_path / "r.duckdb")
    with memory.bounded(con):
        con.execute("SET memory_limit = '1MiB'")  # far under what one batch's upsert pins
        with pytest.raises(duckdb.OutOfMemoryException):
            insert_rows(con, _rows(20_000))
        assert con.execute("SELECT count(*) FROM results").fetchone() == (0,)  # rolled back whole
        memory.with_room(con, insert_rows, con, _rows(20_000))
        raised = memory.limit_bytes(con)
    assert raised > 1 * MIB and (raised // MIB) & (raised // MIB - 1) == 0  # doubled from 1 MiB, a power of two
    assert con.execute("SELECT count(*), count(DISTINCT item_id) FROM results").fetchone() == (20_000, 20_000)


async def test_the_writer_stores_every_row_under_a_limit_too_small_for_its_batches_and_checkpoints(tmp_path,
                                                                                                   monkeypatch):
    # At 1 MiB raised to a few, DuckDB's own checkpoint ran out of memory and invalidated the database
    # (FATAL): the writer's checkpoints run with the limit lifted, and put it back after.
    monkeypatch.setattr(memory, "RUN_CHECKPOINT_MB", 4)  # a few checkpoints within 60,000 rows
    con = connect(tmp_path / "r.duckdb")
    wal = tmp_path / "r.duckdb.wal"
    sizes: list[int] = []
    with memory.bounded(con, mb=1):
        w = Writer(con, flush_s=0.05, batch_max=5_000)
        async with anyio.create_task_group() as tg:
            tg.start_soon(w.run)
            for i, r in enumerate(_rows(60_000)):
                await w.put(r)
                if i % 5_000 == 0:
                    await w.synced(0.01)
                    sizes.append(wal.stat().st_size if wal.exists() else 0)
            await w.close()
        assert memory.limit_bytes(con) < 64 * MIB  # the bound, raised by the writes only as far as they needed
    assert w.rows_written == 60_000
    assert con.execute("SELECT count(*) FROM results").fetchone() == (60_000,)
    # Checkpointed as it went: the log never held much more than RUN_CHECKPOINT_MB and a batch.
    assert max(sizes) > 0 and max(sizes) < (memory.RUN_CHECKPOINT_MB + 8) * MIB, sizes


def test_a_checkpoint_is_made_only_when_due_and_bounded_under_the_lifted_limit(tmp_path, monkeypatch):
    con = connect(tmp_path / "r.duckdb")
    path = memory.database_path(con)
    assert path == str(tmp_path / "r.duckdb")
    wal = f"{path}.wal"
    insert_rows(con, _rows(200))
    monkeypatch.setattr(memory, "RUN_CHECKPOINT_MB", 0)
    assert not memory.checkpoint_if_due(con, path)  # not bounded: DuckDB checkpoints by itself
    seen: list[int] = []
    real_lifted = memory.lifted

    @contextlib.contextmanager
    def watching(c):
        with real_lifted(c):
            seen.append(memory.limit_bytes(c))
            yield

    monkeypatch.setattr(memory, "lifted", watching)
    with memory.bounded(con):
        insert_rows(con, _rows(400)[200:])
        monkeypatch.setattr(memory, "RUN_CHECKPOINT_MB", 16)
        assert not memory.checkpoint_if_due(con, path)  # a small log
        assert not seen
        monkeypatch.setattr(memory, "RUN_CHECKPOINT_MB", 0)
        assert memory.checkpoint_if_due(con, path)
        assert memory.limit_bytes(con) == memory.RUN_LIMIT_MB * MIB  # put back
    assert seen and seen[0] > 64 * MIB
    assert not os.path.exists(wal) or os.path.getsize(wal) == 0
    assert memory.database_path(duckdb.connect()) is None  # in memory: no file


def test_the_limit_is_not_raised_past_the_machine(tmp_path, monkeypatch):
    con = connect(tmp_path / "r.duckdb")
    con.execute("SET memory_limit = '1MiB'")
    monkeypatch.setattr(memory, "_ceiling", lambda: 1 * MIB)
    with pytest.raises(duckdb.OutOfMemoryException):
        memory.with_room(con, insert_rows, con, _rows(20_000))

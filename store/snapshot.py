"""Reading while a sweep writes: a read-only copy of the database beside it.

DuckDB lets one process write a file and, meanwhile, no other process open it,
even read-only. The sweep stays the single writer; every few seconds (when rows
changed) and always at its end it copies the database to ``<db>.snapshot`` (ATTACH a
fresh file, COPY FROM DATABASE, atomic rename), so `report` and any DuckDB
client can read it with a few seconds' lag:

    duckdb -readonly results.duckdb.snapshot "SELECT * FROM leaderboard"

A reader holding the old snapshot open keeps reading it: the rename replaces
the name, not the file under it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import duckdb

from store.query import single

SUFFIX = ".snapshot"


def snapshot_path(db: str | Path) -> Path:
    db = Path(db)
    return db.with_name(db.name + SUFFIX)


def write_snapshot(con: duckdb.DuckDBPyConnection, db: str | Path) -> float:
    """Copy the database ``con`` has open to its snapshot file; returns the seconds it took.

    Run on a cursor of its own (``con.cursor()``), so it can overlap the writer's
    batches: the copy is one transaction and sees a consistent state.
    """
    t0 = time.perf_counter()
    final = snapshot_path(db)
    tmp = final.with_name(final.name + ".tmp")
    for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):  # a killed sweep's
        leftover.unlink(missing_ok=True)
    source = single(con.execute("SELECT current_database()").fetchone())
    try:
        con.execute(f"ATTACH '{_quoted(tmp)}' AS moodengine_snapshot")
        try:
            # The database's name is its file's stem, which may hold a double quote.
            con.execute(f'COPY FROM DATABASE "{_identifier(source)}" TO moodengine_snapshot')
        finally:
            con.execute("DETACH moodengine_snapshot")
        os.replace(tmp, final)
    except BaseException:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):  # a failed copy must not hold disk space
            leftover.unlink(missing_ok=True)
        raise
    return time.perf_counter() - t0


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")


def _identifier(name: str) -> str:
    return name.replace('"', '""')


def age_s(db: str | Path) -> float | None:
    """Seconds since the snapshot was written (None: there is none)."""
    try:
        return max(0.0, time.time() - snapshot_path(db).stat().st_mtime)
    except OSError:
        return None


class Snapshots:
    """When to refresh the snapshot: rows changed, and at most one copy per `every_s`
    or per five times the last copy's duration, whichever is longer (copies take at
    most a sixth of one thread, however large the file; bench/snapshot_bench.py)."""

    def __init__(self, db: str | Path, every_s: float = 5.0):
        self.db = db
        self.every_s = every_s
        # The first copy waits for the first new row: a resume with nothing to ask copies nothing
        # (2 s for 500,000 rows), and until then readers have the last sweep's snapshot, if any.
        self.last_rows = 0
        self.rows = 0  # rows written so far (set by the sweep's counter)
        self.next_at = 0.0
        self.last_cost_s = 0.0

    def due(self, rows: int, now: float) -> bool:
        return rows != self.last_rows and now >= self.next_at

    def done(self, rows: int, cost_s: float, now: float) -> None:
        self.last_rows, self.last_cost_s = rows, cost_s
        self.next_at = now + max(self.every_s, 5 * cost_s)

    def final(self, con: duckdb.DuckDBPyConnection, rows: int) -> None:
        """The sweep's last state, whatever the schedule: its runs row and intervals changed even when
        no row did, and the row count the schedule knows may lag (a run shorter than a tick)."""
        cur = con.cursor()
        try:
            self.done(rows, write_snapshot(cur, self.db), time.monotonic())
        finally:
            cur.close()


async def keep_fresh(con: duckdb.DuckDBPyConnection, plan: Snapshots, rows: Callable[[], int],
                     on_error: Callable[[str], None] | None = None) -> None:
    """Refresh the snapshot while the sweep runs (cancel to stop); a failure stops refreshing, not the sweep."""
    db = plan.db
    cur = con.cursor()
    try:
        while True:
            n = rows()
            if plan.due(n, time.monotonic()):
                try:
                    cost = await anyio.to_thread.run_sync(write_snapshot, cur, db)
                except (duckdb.Error, OSError) as e:
                    if on_error is not None:
                        on_error(f"{snapshot_path(db)}: not refreshed ({str(e).splitlines()[0]})")
                    return
                plan.done(n, cost, time.monotonic())
            await anyio.sleep(0.5)
    finally:
        cur.close()


def open_for_reading(db: str | Path) -> tuple[duckdb.DuckDBPyConnection, str | None]:
    """A read-only connection to ``db``, or to its snapshot while a sweep holds it; and a note saying so."""
    from store.db import StoreError, StoreLocked, connect
    from store.views import shadow_views

    try:
        con = connect(db, read_only=True)
        shadow_views(con)
        return con, None
    except StoreLocked:
        age = age_s(db)
        if age is None:
            raise StoreError(f"database {db} is being written by a running sweep and has no snapshot yet "
                             f"({snapshot_path(db).name} appears once the sweep has stored its first rows; "
                             "try again in a few seconds)") from None
    con = connect(snapshot_path(db), read_only=True)
    shadow_views(con)
    rows = single(con.execute("SELECT count(*) FROM results").fetchone())
    return con, (f"note: {db} is being written by a running sweep; showing its snapshot from {age:.0f} s ago "
                 f"({rows} result rows)")

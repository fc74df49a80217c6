"""Reading while a sweep writes: a read-only copy of the database beside it.

DuckDB lets one process write a file and, meanwhile, no other process open it,
even read-only. The sweep stays the single writer; every few seconds (when rows
changed) it refreshes ``<db>.snapshot``, so `report` and any DuckDB client can
read it with a few seconds' lag:

    duckdb -readonly results.duckdb.snapshot "SELECT * FROM leaderboard"

The first copy is whole (ATTACH a fresh file, COPY FROM DATABASE; at the sweep's end, when its
writers are done, the database's own file once checkpointed). Later ones
are made in a child process (store/snapshot_apply.py), so the copy's pages never
load into the sweep's memory: it copies the last snapshot's file as it is, then
brings in only what changed, exported by the sweep as Parquet: the
rows the writers stored since (their keys are journaled at each flush, and the
rows are read back from the database, so applying a key twice is harmless) and
the small tables a sweep touches (replaced whole; at the sweep's end every other
table too). A journal too long to be cheaper, a schema that changed, or no copy
made by this run yet falls back to the whole copy. Either way the new file is renamed into place: a reader
holding the old snapshot open keeps reading it.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import duckdb
import pyarrow as pa

from store import snapshot_apply
from store.memory import database_path, lifted, with_room
from store.query import single

SUFFIX = ".snapshot"


def snapshot_path(db: str | Path) -> Path:
    db = Path(db)
    return db.with_name(db.name + SUFFIX)


# Tables a sweep never writes while it runs (written by other commands, or at its end): not refreshed.
STATIC = frozenset({"results_history", "rescores", "interval_bounds", "interval_state"})
STATIC_PREFIX = "compact_"
# A snapshot this large is refreshed in a child process (its pages and key index stay out of the
# sweep's memory); a smaller one here, where a process start would cost more than it saves. At 8 MB the
# last in-process refresh of a 150,000-item sweep (at ~25,000 rows) was its peak, +71 MB in 0.7 s; from
# 2 MB on the largest in-process one stays ~4x smaller (bench/README.md, "The snapshot's in-process refresh").
OUTSIDE_BYTES = 2 * 2**20
JOURNAL_MAX = 500_000  # changed keys past which one whole copy is cheaper than the changes

Journal = dict[str, tuple[tuple[str, ...], set[tuple[Any, ...]]]]  # table -> (its key columns, changed keys)


def write_snapshot(con: duckdb.DuckDBPyConnection, db: str | Path, journal: Journal | None = None, *,
                   everything: bool = False, since: dict[str, Any] | None = None) -> float:
    """Refresh the snapshot of the database ``con`` has open; returns the seconds it took.

    ``journal``: the keys stored since the last snapshot, per journaled table; None (or no snapshot
    yet) copies the whole database. ``everything``: the tables a sweep writes only at its end (bounds)
    are replaced too. ``since``: per journaled table, the earliest `finished_at` of its journaled rows,
    so the rows are read back from the row groups written since (their min/max skip the others)
    rather than from a scan of the whole table. Run on a cursor of its own (``con.cursor()``), so it can overlap
    the writer's batches: the copy is one transaction and sees a consistent state.
    """
    t0 = time.perf_counter()
    final = snapshot_path(db)
    tmp = final.with_name(final.name + ".tmp")
    _remove(tmp)  # a killed sweep's
    source = single(con.execute("SELECT current_database()").fetchone())
    whole = journal is None or not final.is_file() or sum(len(k) for _, k in journal.values()) > JOURNAL_MAX
    try:
        outside = not whole and final.stat().st_size >= OUTSIDE_BYTES
        if outside and _refresh_outside(con, source, final, tmp, journal or {}, everything, since or {}):
            return time.perf_counter() - t0
        # What follows checkpoints a file (CHECKPOINT, DETACH): never under a run's bound (store/memory.py).
        with lifted(con):
            if whole and everything and _copy_checkpointed(con, tmp):
                os.replace(tmp, final)
            elif whole or outside or not _refresh_here(con, source, final, tmp, journal or {}, everything,
                                                       since or {}):
                _remove(tmp)  # the schema moved on: start the file again
                con.execute(f"ATTACH '{_quoted(tmp)}' AS moodengine_snapshot")
                try:
                    con.execute(f'COPY FROM DATABASE "{_ident(source)}" TO moodengine_snapshot')
                finally:
                    con.execute("DETACH moodengine_snapshot")
                os.replace(tmp, final)
    except BaseException:
        _remove(tmp)  # a failed copy must not hold disk space
        raise
    return time.perf_counter() - t0


def _copy_checkpointed(con: duckdb.DuckDBPyConnection, tmp: Path) -> bool:
    """The whole copy at a sweep's end (``everything``: its writers are done): the database's own file, byte
    for byte, once CHECKPOINT has put every committed row into it (DuckDB writes that file only when it
    checkpoints; a transaction still open elsewhere stays in its own undo buffers, as in a copy through
    DuckDB). A few ms where COPY FROM DATABASE re-creates every table, view and macro (~50 ms CPU on a new
    file), and the checkpoint is one the closing connection would make anyway. False (nothing left at
    ``tmp``): not a file, CHECKPOINT refused, or the file changed while being copied (a checkpoint
    elsewhere); the caller then copies through DuckDB."""
    path = database_path(con)
    if not path or not Path(path).is_file():
        return False
    try:
        con.execute("CHECKPOINT")
    except duckdb.Error:
        return False
    before = os.stat(path)
    shutil.copyfile(path, tmp)
    after = os.stat(path)
    if (before.st_size, before.st_mtime_ns) != (after.st_size, after.st_mtime_ns):
        _remove(tmp)
        return False
    return True


def _refresh_outside(con: duckdb.DuckDBPyConnection, source: str, final: Path, tmp: Path, journal: Journal,
                     everything: bool = False, since: dict[str, Any] | None = None) -> bool:
    """Bring the last snapshot up to date in a child process (store/snapshot_apply.py); False: the tables
    differ, copy it whole.

    This process only exports what changed (the journaled rows, the small tables a sweep touches) as
    Parquet, in one read transaction: its cost is bounded by the change set. Attaching the copy here
    loaded its pages and its key index into the sweep's memory at every refresh, growing with the
    database (+33 MB peak at 150,000 rows; bench/README.md, "Memory").
    """
    tables = snapshot_apply.tables(con, source)
    parts_dir = Path(tempfile.mkdtemp(prefix=final.name + ".", dir=final.parent))
    try:
        parts: list[dict[str, Any]] = []
        con.execute("BEGIN TRANSACTION")  # one consistent state across the tables
        try:
            for part in _parts(tables, source, journal, everything, since):
                changed = part.changed  # noqa: F841 - read by name in part.select
                file = parts_dir / f"{len(parts)}.parquet"
                con.execute(f"COPY ({part.select}) TO '{_quoted(file)}' (FORMAT parquet)")
                parts.append({"table": part.table, "columns": tables[part.table], "key": part.key, "file": str(file)})
        finally:
            con.execute("COMMIT")
        manifest = parts_dir / "manifest.json"
        manifest.write_text(json.dumps({"final": str(final), "tmp": str(tmp), "tables": tables, "parts": parts}))
        done = subprocess.run([sys.executable, snapshot_apply.__file__, str(manifest)], capture_output=True,
                              text=True, stdin=subprocess.DEVNULL)
    finally:
        shutil.rmtree(parts_dir, ignore_errors=True)
    if done.returncode == snapshot_apply.SCHEMA_MOVED:
        return False
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise OSError(f"snapshot refresh failed: {last}")
    return True


def _refresh_here(con: duckdb.DuckDBPyConnection, source: str, final: Path, tmp: Path, journal: Journal,
                  everything: bool = False, since: dict[str, Any] | None = None) -> bool:
    """`_refresh_outside` in this process, through an attached copy: for a small snapshot, where starting
    a process would cost more than the copy's pages (and would slow the refreshes a reader sees)."""
    shutil.copyfile(final, tmp)
    con.execute(f"ATTACH '{_quoted(tmp)}' AS moodengine_snapshot")
    try:
        if not _refresh(con, source, journal, everything, since):
            return False
    finally:
        con.execute("DETACH moodengine_snapshot")
    os.replace(tmp, final)
    return True


def _refresh(con: duckdb.DuckDBPyConnection, source: str, journal: Journal, everything: bool = False,
             since: dict[str, Any] | None = None) -> bool:
    """Bring the attached copy of the last snapshot up to date; False: the tables differ, copy it whole."""
    tables = snapshot_apply.tables(con, source)
    if tables != snapshot_apply.tables(con, "moodengine_snapshot"):
        return False
    dst = "moodengine_snapshot"
    con.execute("BEGIN TRANSACTION")
    try:
        for part in _parts(tables, source, journal, everything, since):
            changed = part.changed  # noqa: F841 - read by name in part.select
            into = f'{dst}."{_ident(part.table)}" ({part.cols})'
            if part.key:
                # The key is the table's primary key: an upsert finds the old row through its index,
                # where a delete would scan (and load) the whole table of the copy.
                con.execute(f"INSERT OR REPLACE INTO {into} {part.select}")
            else:
                con.execute(f'DELETE FROM {dst}."{_ident(part.table)}"')
                con.execute(f"INSERT INTO {into} {part.select}")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return True


class _Part(NamedTuple):
    table: str
    cols: str  # its columns, quoted, as a SELECT list
    key: list[str] | None  # the journal's key: only the changed rows are taken
    select: str  # what a refresh takes from the source; with a key it reads `changed` by name
    changed: pa.Table | None  # the changed keys


def _parts(tables: dict[str, list[str]], source: str, journal: Journal, everything: bool,
           since: dict[str, Any] | None) -> Iterator[_Part]:
    """What a refresh takes of each table: a journaled table's changed rows (none changed: nothing), every
    other table whole unless static (or ``everything``)."""
    src = f'"{_ident(source)}"'
    for table, columns in tables.items():
        cols = ", ".join(f'"{_ident(c)}"' for c in columns)
        whole = f'SELECT {cols} FROM {src}."{_ident(table)}"'
        if table in journal:
            key, keys = journal[table]
            if keys:
                changed = pa.table({k: [v[i] for v in keys] for i, k in enumerate(key)})
                match = " AND ".join(f't."{_ident(k)}" = c."{_ident(k)}"' for k in key) + _since(since, table)
                yield _Part(table, cols, list(key), f"{whole} t SEMI JOIN changed c ON {match}", changed)
        elif everything or (table not in STATIC and not table.startswith(STATIC_PREFIX)):
            yield _Part(table, cols, None, whole, None)


def _since(since: dict[str, Any] | None, table: str) -> str:
    """The read-back's bound on finished_at (a literal: the scan's min/max pruning needs a constant)."""
    first = (since or {}).get(table)
    return "" if first is None else f" AND t.finished_at >= '{first.isoformat()}'::TIMESTAMPTZ"


def _remove(tmp: Path) -> None:
    for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
        leftover.unlink(missing_ok=True)


def _ident(name: str) -> str:
    """A name inside double quotes (a database is named by its file's stem, which may hold one)."""
    return name.replace('"', '""')


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")


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
        self.journal: Journal = {}
        self.since: dict[str, Any] = {}  # table -> earliest finished_at journaled (rows that have one)
        # The first copy waits for the first new row: a resume with nothing to ask copies nothing
        # (2 s for 500,000 rows), and until then readers have the last sweep's snapshot, if any.
        self.last_rows = 0
        self.rows = 0  # rows written so far (set by the sweep's counter)
        self.next_at = 0.0
        self.last_cost_s = 0.0

    def track(self, writer: Any) -> None:
        """Journal the keys of what `writer` (store/results/writer.py:Writer) stores, for the next refresh."""
        key = tuple(writer.key)
        _, keys = self.journal.setdefault(writer.table, (key, set()))

        table = writer.table

        def stored(rows: list[Any]) -> None:
            keys.update(tuple(getattr(r, k) for k in key) for r in rows)
            # A results row is stored with the finished_at it was put with (store/results/writer.py's upsert
            # sets it too): the rows to read back lie at or after the earliest one. Other tables: by key only.
            if table != "results" or table in self.since and self.since[table] is None:
                return
            if not all(isinstance(getattr(r, "finished_at", None), datetime) and r.finished_at.tzinfo is not None
                       for r in rows):
                self.since[table] = None
                return
            first = min(r.finished_at for r in rows)
            self.since[table] = min(self.since.get(table) or first, first)

        writer.on_flush = stored

    def take(self) -> Journal:
        """The keys journaled so far, emptied for the next refresh (on the event loop, before a copy starts,
        so every key taken is in the database the copy reads)."""
        return self.take_all()[0]

    def take_all(self) -> tuple[Journal, dict[str, Any]]:
        """`take`, and the earliest finished_at per table journaled with it (`write_snapshot`'s ``since``)."""
        out = {table: (key, set(keys)) for table, (key, keys) in self.journal.items()}
        for _, keys in self.journal.values():
            keys.clear()
        since = {table: first - timedelta(seconds=1) for table, first in self.since.items() if first is not None}
        self.since.clear()
        return out, since

    def due(self, rows: int, now: float) -> bool:
        return rows != self.last_rows and now >= self.next_at

    def done(self, rows: int, cost_s: float, now: float) -> None:
        self.last_rows, self.last_cost_s = rows, cost_s
        self.next_at = now + max(self.every_s, 5 * cost_s)

    def final(self, con: duckdb.DuckDBPyConnection, rows: int) -> None:
        """The sweep's last state (its runs row, bounds and readings included), as one whole copy, once it
        stored anything (`rows`: all it stored, counted by the caller: it may end before the first tick)."""
        if not rows:
            return
        taken, since = self.take_all()
        journal: Journal | None = taken
        if not self.last_rows:  # no copy made by this run yet: the snapshot there is another run's
            journal = None
        cur = con.cursor()
        try:
            cost = with_room(cur, functools.partial(write_snapshot, cur, self.db, journal, everything=True, since=since))
            self.done(rows, cost, time.monotonic())
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
                taken, since = plan.take_all()
                journal: Journal | None = taken
                if not plan.last_rows:  # the first copy is whole (a snapshot left by another run is stale)
                    journal = None
                try:
                    cost = await anyio.to_thread.run_sync(
                        with_room, cur, functools.partial(write_snapshot, cur, db, journal, since=since))
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
    from store.hierarchy.views import shadow_views

    try:
        con = connect(db, read_only=True)
        shadow_views(con)
        return con, None
    except StoreLocked as e:
        age = age_s(db)
        if age is None:
            raise StoreError(f"database {db} is in use by {e.holder} and has no snapshot yet (a sweep writes "
                             f"{snapshot_path(db).name} once it has stored its first rows)") from None
    con = connect(snapshot_path(db), read_only=True)
    shadow_views(con)
    rows = single(con.execute("SELECT count(*) FROM results").fetchone())
    return con, (f"note: {db} is being written by a running sweep; showing its snapshot from {age:.0f} s ago "
                 f"({rows} result rows)")

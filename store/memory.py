"""DuckDB's buffer pool while a run writes: held small, and raised when a statement needs more.

DuckDB keeps every page it has read or written in its buffer pool until the limit (80% of the machine's
memory by default) forces it out, so a sweep's process grew with every row it stored (~0.4 KB a turn,
~0.3 KB a results row: bench/README.md, "Memory"), although those pages are on disk after each checkpoint.
While a run's lanes write, the limit is `RUN_LIMIT_MB`: pages already on disk are dropped and read back if
asked for, the rest spill to DuckDB's temporary folder. A write that needs more than the limit at once (a
large batch's index pages pinned together) is run again with the limit doubled (`with_room`): an
OutOfMemory is never a run's error while the machine has the memory.

A checkpoint must never run under the bound: one that runs out of memory invalidates the database (DuckDB's
FATAL error; the run ends, its committed rows safe in the log). So DuckDB's automatic checkpoints are off
while bounded, and the writers checkpoint every `RUN_CHECKPOINT_MB` of log themselves (`checkpoint_if_due`,
half DuckDB's own cadence), with the limit lifted meanwhile (`lifted`, also around the snapshot's copies, which
checkpoint their file on DETACH). Checkpointing every 4 MB kept less in memory between checkpoints but cost
a third more of the writes' CPU (bench/README.md, "DuckDB's buffer pool while a run writes").
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

import duckdb

T = TypeVar("T")

# 960,000 turns upserted alone: RSS +154 MB by default, +70 bounded (bench/README.md).
RUN_LIMIT_MB = 64
# Half DuckDB's default checkpoint_threshold: the rows since the last checkpoint are held in memory, and a
# run's peak is just before one (150,000 items: +30 -> +24 MB of growth, no CPU per item measured; every
# 4 MB cost a third more of the writes' CPU: bench/README.md, "DuckDB's buffer pool while a run writes").
RUN_CHECKPOINT_MB = 8
_NO_AUTO_CHECKPOINT = "1000000MiB"  # while bounded: only `checkpoint_if_due` checkpoints
_lifting = threading.Lock()  # one lift at a time: each puts back the run's bound
# The writers' batches and their checkpoints one at a time: DuckDB refuses a CHECKPOINT while another write
# transaction is open, and with two writers (results and turns) one nearly always was.
writing = threading.Lock()
# database file ("" in memory) -> the bound a lift puts back (raised by `with_room` as writes need); a
# database is bounded while it is here.
_bounds: dict[str, int] = {}
_UNITS = {"bytes": 1, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
          "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}


def _setting(con: duckdb.DuckDBPyConnection) -> str:
    row = con.execute("SELECT current_setting('memory_limit')").fetchone()
    return str(row[0] if row else "")


def limit_bytes(con: duckdb.DuckDBPyConnection) -> int:
    """The database's memory_limit now, in bytes."""
    setting = _setting(con)
    m = re.fullmatch(r"\s*([\d.]+)\s*([A-Za-z]+)\s*", setting)
    if m is None or m.group(2).lower() not in _UNITS:
        raise ValueError(f"unreadable memory_limit {setting!r}")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def _ceiling() -> int:
    """DuckDB's own default: 80% of the machine's memory."""
    return int(0.8 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


@contextlib.contextmanager
def bounded(con: duckdb.DuckDBPyConnection, mb: int = RUN_LIMIT_MB) -> Iterator[None]:
    """The block runs with the buffer pool held to ``mb`` (never above the limit it found) and DuckDB's own
    checkpoints off; then the settings it found are put back. Vacuum stays off (below)."""
    before = _setting(con)
    checkpoint = con.execute("SELECT current_setting('checkpoint_threshold')").fetchone()
    con.execute(f"SET checkpoint_threshold = '{_NO_AUTO_CHECKPOINT}'")  # first: none may run under the bound
    # A checkpoint that merges row groups (DuckDB's vacuum) reads them back whole: +60-80 MB at once, the
    # peak of a long run, and at its close +75 MB more (bench/README.md, "Vacuum in a run's checkpoints").
    # A run appends, so it has little to merge: its connection never vacuums, also after the block (the
    # close's checkpoint); the next connection that is not a run's merges what is worth it.
    con.execute("SET max_vacuum_tasks = 0")
    bound = min(mb * 2**20, limit_bytes(con))
    con.execute(f"SET memory_limit = '{bound}B'")
    db = database_path(con) or ""
    _bounds[db] = bound
    try:
        yield
    finally:
        _bounds.pop(db, None)
        con.execute(f"SET memory_limit = '{before}'")
        con.execute(f"SET checkpoint_threshold = '{checkpoint[0] if checkpoint else '16MiB'}'")


def database_path(con: duckdb.DuckDBPyConnection) -> str | None:
    """The file of the database ``con`` writes to (None: in memory)."""
    row = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()
    return str(row[0]) if row and row[0] else None


@contextlib.contextmanager
def lifted(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """The block runs under DuckDB's default limit (a checkpoint, a snapshot's copy); then the limit it found
    is put back, or left higher if DuckDB cannot free enough yet (the next lift tries again)."""
    with _lifting:
        bound = _bounds.get(database_path(con) or "") or limit_bytes(con)
        con.execute(f"SET memory_limit = '{max(limit_bytes(con), _ceiling())}B'")
        try:
            yield
        finally:
            with contextlib.suppress(duckdb.Error):  # not freed yet: higher until the next lift puts it back
                con.execute(f"SET memory_limit = '{bound}B'")


def checkpoint_if_due(con: duckdb.DuckDBPyConnection, path: str | None) -> bool:
    """After a write to the database file ``path`` (`database_path`, looked up once by the caller): a
    checkpoint, under the lifted limit, once its log passes `RUN_CHECKPOINT_MB` while bounded (unbounded,
    DuckDB checkpoints by itself). True if one was made."""
    if path is None or path not in _bounds:
        return False
    try:
        if os.stat(f"{path}.wal").st_size < RUN_CHECKPOINT_MB * 2**20:
            return False
    except OSError:
        return False
    with lifted(con):
        try:
            con.execute("CHECKPOINT")
        except duckdb.TransactionException as e:
            if "other write transactions" not in str(e):
                raise
            return False  # another writer's batch is open: the next batch's turn
    return True


def out_of_memory(e: BaseException) -> bool:
    """DuckDB ran out of its limit, and the statement failed whole: an OutOfMemory, or a COMMIT that could
    not pin its blocks (a TransactionException saying so). Never a FATAL: that database is gone."""
    if isinstance(e, duckdb.FatalException):
        return False
    if isinstance(e, duckdb.OutOfMemoryException):
        return True
    text = str(e)
    return isinstance(e, duckdb.TransactionException) and ("failed to pin block" in text
                                                           or "could not allocate block" in text)


def with_room(con: duckdb.DuckDBPyConnection, fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)``; when DuckDB runs out of its limit, the limit is doubled and ``fn`` runs again (its
    statements failed whole: every caller writes in one transaction or one statement)."""
    while True:
        try:
            return fn(*args)
        except duckdb.Error as e:
            if not out_of_memory(e):
                raise
            now, ceiling = limit_bytes(con), _ceiling()
            if now >= ceiling:  # also a lift's limit: a bound is only raised below the ceiling
                raise
            raised = min(2 * now, ceiling)
            con.execute(f"SET memory_limit = '{raised}B'")
            db = database_path(con) or ""
            if db in _bounds:
                _bounds[db] = max(_bounds[db], raised)

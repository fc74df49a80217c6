"""DuckDB's buffer pool while a run writes: held small, and raised when a statement needs more.

DuckDB keeps every page it has read or written in its buffer pool until the limit (80% of the machine's
memory by default) forces it out, so a sweep's process grew with every row it stored (~0.4 KB a turn,
~0.3 KB a results row: bench/README.md, "Memory"), although those pages are on disk after each checkpoint.
While a run's lanes write, the limit is `RUN_LIMIT_MB`: pages already on disk are dropped and read back if
asked for, the rest spill to DuckDB's temporary folder; and a checkpoint comes every `RUN_CHECKPOINT_MB` of
log instead of 16 MB, since rows written since the last checkpoint stay in memory (18 MB of 150,000 results
rows) and so does the key index's unwritten part. A statement that needs more than the limit at
once (a large batch's index pages pinned together, the first whole copy of a large snapshot) is run again
with the limit doubled: an OutOfMemory is never a run's error while the machine has the memory.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterator
from typing import TypeVar

import duckdb

T = TypeVar("T")

# Measured upserting 150,000 results rows alone (bench/README.md, "Memory, bounded"): RSS growth +78 MB by
# default, +51 with the limit, +33 with both; writing them took 2.40 -> 2.81 s of CPU.
RUN_LIMIT_MB = 64
RUN_CHECKPOINT_MB = 4
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
    """The block runs with the buffer pool held to ``mb`` (never above the limit it found) and checkpoints
    every `RUN_CHECKPOINT_MB`; then the settings it found are put back."""
    before = _setting(con)
    checkpoint = con.execute("SELECT current_setting('checkpoint_threshold')").fetchone()
    con.execute(f"SET memory_limit = '{min(mb * 2**20, limit_bytes(con))}B'")
    con.execute(f"SET checkpoint_threshold = '{RUN_CHECKPOINT_MB}MiB'")
    try:
        yield
    finally:
        con.execute(f"SET memory_limit = '{before}'")
        con.execute(f"SET checkpoint_threshold = '{checkpoint[0] if checkpoint else '16MiB'}'")


def with_room(con: duckdb.DuckDBPyConnection, fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)``; when DuckDB runs out of its limit, the limit is doubled and ``fn`` runs again (its
    statements failed whole: every caller writes in one transaction or one statement)."""
    while True:
        try:
            return fn(*args)
        except duckdb.OutOfMemoryException:
            now, ceiling = limit_bytes(con), _ceiling()
            if now >= ceiling:
                raise
            con.execute(f"SET memory_limit = '{min(2 * now, ceiling)}B'")

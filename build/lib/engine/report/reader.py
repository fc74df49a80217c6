"""What `serve` and a sweep's live view read from: the report built once per state of the data, and
concurrent item queries that never wait for a report being built.

Two sources:
- `FileSource` (serve): the database read-only with this version's views, as `report` reads it
  (store/snapshot.py:open_for_reading: the snapshot while a sweep holds the file). Its state is the
  file's and its WAL's identity, size and mtime; when that changes (the sweep renamed a fresher
  snapshot into place, the file was replaced) the next report opens it again and builds anew.
- `LiveSource` (sweep --serve): the sweep's own connection, whose rows change all the time; a report
  is rebuilt no more often than a time to live.

A report is built by one task at a time, shielded from a client that leaves; requests that arrive
meanwhile wait for it and share it. Item queries run on their own cursors (they read only `results`,
not the views) in a few threads, beside a build.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import duckdb
import orjson

from benchmark.errors import UserError
from engine.report.html.gather import gather
from store.snapshot import open_for_reading, snapshot_path

FileState = tuple[Hashable, ...]


def file_state(path: Path) -> FileState:
    """The identity, size and mtime of a database file and of its WAL: equal states, equal contents."""
    out: list[Hashable] = []
    for p in (path, path.with_name(path.name + ".wal")):
        try:
            st = os.stat(p)
            out.append((st.st_ino, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append(None)
    return tuple(out)


class _Generation:
    """One opened connection and the state of the file when it was opened; `users`: leases held."""

    def __init__(self, con: duckdb.DuckDBPyConnection, state: Hashable, note: str | None):
        self.con, self.state, self.note = con, state, note
        self.users = 0


class FileSource:
    """serve's database file, read-only with this version's views; opened again when the file changes."""

    def __init__(self, db: Path):
        self.db = db
        self._cond = threading.Condition()
        self._swapping = False
        self._error: UserError | None = None
        self._gen: _Generation | None = self._open()

    def _open(self) -> _Generation:
        con, note = open_for_reading(self.db)
        self.path = snapshot_path(self.db) if note else self.db
        return _Generation(con, file_state(self.path), note)

    @property
    def note(self) -> str | None:
        """What open_for_reading said: the snapshot of a running sweep is read, and how old it is."""
        return self._gen.note if self._gen else None

    def state(self) -> Hashable:
        return file_state(self.path)

    def refresh(self) -> None:
        """Open the file again if it changed since it was opened (off the event loop: it takes a second).

        The old connection is closed first: DuckDB hands a second connect to the same path the instance
        still open, which reads the replaced file. Item queries wait for the swap (a second or two)."""
        gen = self._gen
        if gen is not None and self.state() == gen.state:
            return
        with self._cond:
            self._swapping = True
            old, self._gen = self._gen, None
            while old is not None and old.users:
                self._cond.wait()
        try:
            if old is not None:
                old.con.close()
            self._gen, self._error = self._open(), None
        except UserError as e:  # gone or unreadable now: said to every request until it can be opened again
            self._error = e
            raise
        finally:
            with self._cond:
                self._swapping = False
                self._cond.notify_all()

    @contextmanager
    def connection(self) -> Iterator[tuple[duckdb.DuckDBPyConnection, Hashable]]:
        """The current connection (the one with the TEMP views: one user at a time) and the state it shows."""
        with self._lease() as gen:
            yield gen.con, gen.state

    @contextmanager
    def cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor of the current connection, for queries of the stored tables (no views), side by side."""
        with self._lease() as gen:
            cur = gen.con.cursor()
            try:
                yield cur
            finally:
                cur.close()

    @contextmanager
    def _lease(self) -> Iterator[_Generation]:
        with self._cond:
            while self._swapping:
                self._cond.wait()
            gen = self._gen
            if gen is None:
                raise self._error or UserError(f"{self.db}: closed")
            gen.users += 1
        try:
            yield gen
        finally:
            with self._cond:
                gen.users -= 1
                self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            gen, self._gen = self._gen, None
            while gen is not None and gen.users:
                self._cond.wait()
        if gen is not None:
            gen.con.close()


class LiveSource:
    """A running sweep's connection: its own views are this version's, and its rows change all the time."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con
        self.build_cur = con.cursor()  # a cursor of the sweep's connection sees its committed rows

    def state(self) -> Hashable:
        return None  # no file state: rebuilt after a time to live

    def refresh(self) -> None:
        pass

    @contextmanager
    def connection(self) -> Iterator[tuple[duckdb.DuckDBPyConnection, Hashable]]:
        yield self.build_cur, None

    @contextmanager
    def cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        cur = self.con.cursor()
        try:
            yield cur
        finally:
            cur.close()

    def close(self) -> None:
        self.build_cur.close()


Source = FileSource | LiveSource


class Reader:
    """The report per state of the source, and item queries beside it; never blocks the event loop."""

    def __init__(self, source: Source, suite: tuple[str, str], *, threads: int = 4):
        self.source = source
        self.suite = suite
        self._build = anyio.Lock()
        self._queries = anyio.CapacityLimiter(threads)
        self._report: tuple[Hashable, float, bytes] | None = None  # (state, built at, body)
        self._cost = 0.0  # seconds the last build took

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(cursor, *args) in a worker thread, on a cursor of its own."""
        def call() -> Any:
            with self.source.cursor() as cur:
                return fn(cur, *args)

        return await anyio.to_thread.run_sync(call, limiter=self._queries)

    def _fresh(self, state: Hashable, ttl: float) -> bool:
        if self._report is None:
            return False
        built_state, built_at, _ = self._report
        if state is not None:
            return built_state == state
        # live: no fresher than ttl and than 4x its own cost, so that recomputing the views takes at
        # most a fifth of the machine from the sweep
        return time.monotonic() - built_at <= max(ttl, 4 * self._cost)

    async def report(self, ttl: float = 0.0) -> bytes:
        """The report's data as JSON: built once per state of the source (live: per ttl)."""
        if self._report is not None and self._fresh(self.source.state(), ttl):
            return self._report[2]
        async with self._build:  # one build at a time; those who waited take its result
            with anyio.CancelScope(shield=True):  # a client leaving must not waste the build
                await anyio.to_thread.run_sync(self.source.refresh)
                if self._report is None or not self._fresh(self.source.state(), ttl):
                    self._report = await anyio.to_thread.run_sync(self._built)
        assert self._report is not None, "built above"
        return self._report[2]

    def _built(self) -> tuple[Hashable, float, bytes]:
        t0 = time.monotonic()
        with self.source.connection() as (con, state):
            body = orjson.dumps(gather(con, self.suite), default=str)
        self._cost = time.monotonic() - t0
        return state, time.monotonic(), body

    def close(self) -> None:
        self.source.close()

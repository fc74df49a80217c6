"""Opening results.duckdb with its schema and views."""

from __future__ import annotations

import errno
import re
from pathlib import Path

import duckdb

from benchmark.errors import UserError
from store.transaction import transaction  # noqa: F401 - re-exported: store.db.transaction


class StoreError(UserError):
    """The database cannot be used as asked; the message says why and what to do."""


class StoreLocked(StoreError):
    """Another process holds the database's lock (a sweep, serve, a report, any DuckDB client); `holder` names it."""

    def __init__(self, message: str, holder: str = "another process"):
        super().__init__(message)
        self.holder = holder


def lock_holder(duckdb_message: str) -> str:
    """'process 123 (python -m engine serve r.duckdb)' from DuckDB's lock error (it names the PID);
    'another process' when it names none."""
    m = re.search(r"\(PID (\d+)\)", duckdb_message)
    if not m:
        return "another process"
    try:
        argv = Path(f"/proc/{m.group(1)}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return f"process {m.group(1)}"
    argv = [a for a in argv if a]
    command = " ".join([Path(argv[0]).name, *argv[1:]] if argv else [])
    command = "".join(c for c in command if c.isprintable())[:160]
    return f"process {m.group(1)}" + (f" ({command})" if command else "")


def connect(path: str | Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    path = Path(path)
    if read_only and not path.exists():
        raise StoreError(f"database {path} does not exist")
    if path.parent and not path.parent.exists():
        raise StoreError(f"cannot create database {path}: folder {path.parent} does not exist")
    try:
        con = duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException as e:
        msg = str(e).splitlines()[0]
        if "lock" in msg.lower():
            holder = lock_holder(msg)
            raise StoreLocked(f"database {path} is in use by {holder}: stop it or let it finish, then run "
                              "this again", holder) from None
        raise StoreError(f"cannot open database {path}: {msg}") from None
    except duckdb.Error as e:
        raise StoreError(f"cannot open database {path}: it is not a readable DuckDB file ({str(e).splitlines()[0]})") from None
    if not read_only:
        try:
            ensure_schema(con)
        except duckdb.Error as e:
            con.close()
            raise StoreError(f"cannot use database {path}: it is damaged or truncated ({str(e).splitlines()[0]}). "
                             "Move it aside (or restore a copy) and run again: a new file is created") from None
        from store.results.turns import journal_path, replay_journal

        replay_journal(con, journal_path(path))  # the turns a killed sweep had not yet upserted
    return con


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    from store.hierarchy.views import ensure_views

    ensure_views(con)  # estimates.sql too: dataset_scores reads it
    con.execute((Path(__file__).parent / "results" / "costs.sql").read_text(encoding="utf-8"))
    con.execute((Path(__file__).parent / "results" / "history.sql").read_text(encoding="utf-8"))
    con.execute((Path(__file__).parent / "side" / "batches.sql").read_text(encoding="utf-8"))
    from store.results.turns import ensure_turn_tables

    ensure_turn_tables(con)  # its views read results


def _leaves(e: BaseException) -> list[BaseException]:
    if isinstance(e, BaseExceptionGroup):
        return [x for sub in e.exceptions for x in _leaves(sub)]
    return [e]


def write_failure(e: BaseException, path: str | Path) -> StoreError | None:
    """The one-line StoreError for a database that failed while a sweep wrote to it (None: not that)."""
    leaves = _leaves(e)
    for x in leaves:
        if (isinstance(x, OSError) and x.errno == errno.ENOSPC) or "no space left" in str(x).lower():
            return StoreError(f"cannot write to {path}: the disk is full. Free some space and run the same "
                              "command to resume (rows written so far are kept)")
    for x in leaves:
        if (isinstance(x, OSError) and x.errno == errno.EFBIG) or "file too large" in str(x).lower():
            return StoreError(f"cannot write to {path}: the file size limit was reached (ulimit -f, or the file "
                              "system's largest file). Raise it and run the same command to resume (rows written "
                              "so far are kept)")
    for x in leaves:
        if isinstance(x, duckdb.Error):
            return StoreError(f"database {path} failed while writing ({str(x).splitlines()[0]}). If the file is "
                              "damaged, move it aside and run again: a new file is created")
    return None

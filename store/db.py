"""Opening results.duckdb with its schema and views."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import duckdb


class StoreError(Exception):
    """The database cannot be used as asked; the message says why and what to do."""


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
            raise StoreError(f"database {path} is in use by another process (is a sweep still running?)") from None
        raise StoreError(f"cannot open database {path}: {msg}") from None
    except duckdb.Error as e:
        raise StoreError(f"cannot open database {path}: it is not a readable DuckDB file ({str(e).splitlines()[0]})") from None
    if not read_only:
        ensure_schema(con)
    return con


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    from store.views import ensure_views

    ensure_views(con)
    con.execute((Path(__file__).parent / "costs.sql").read_text(encoding="utf-8"))
    con.execute((Path(__file__).parent / "history.sql").read_text(encoding="utf-8"))


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """The block's statements commit together, or not at all (rolled back on any exception)."""
    con.execute("BEGIN")
    try:
        yield con
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise

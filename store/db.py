"""Opening results.duckdb with its schema and views."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import uuid
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
    made = not read_only and _from_template(path)
    try:
        con = duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException as e:
        if made:  # a copy of a bad template: the file is ours, made a moment ago
            return _without_template(path)
        msg = str(e).splitlines()[0]
        if "lock" in msg.lower():
            holder = lock_holder(msg)
            raise StoreLocked(f"database {path} is in use by {holder}: stop it or let it finish, then run "
                              "this again", holder) from None
        if path.exists() and ("read" in msg.lower() or "corrupt" in msg.lower()):  # its catalog lies past the end
            raise StoreError(f"cannot open database {path}: it is damaged or truncated ({msg}): move it aside "
                             "(or restore a copy) and run again: a new file is created") from None
        raise StoreError(f"cannot open database {path}: {msg}") from None
    except duckdb.Error as e:
        if made:
            return _without_template(path)
        raise StoreError(f"cannot open database {path}: it is not a readable DuckDB file ({str(e).splitlines()[0]})") from None
    if not read_only:
        try:
            ensure_schema(con, template_copy=made)
        except duckdb.Error as e:
            con.close()
            if made:
                return _without_template(path)
            raise StoreError(f"cannot use database {path}: it is damaged or truncated ({str(e).splitlines()[0]}). "
                             "Move it aside (or restore a copy) and run again: a new file is created") from None
        from store.results.turns import journal_path, replay_journal

        replay_journal(con, journal_path(path))  # the turns a killed sweep had not yet upserted
    return con


def _template() -> Path:
    from benchmark.cache import cache_dir  # the engine's one cache folder (and its environment variables)

    return cache_dir() / f"schema-{schema_digest()[:32]}.duckdb"


def _from_template(path: Path) -> bool:
    """A new file as a copy of an empty database this version's scripts made once (benchmark.cache.cache_dir(), named by
    schema_digest()): creating the schema on every new file costs DuckDB 0.2-0.5 s CPU, a copy a few ms.
    ensure_schema then checks the copy's catalog as on any file. True: the file is such a copy. Any
    trouble (no cache folder, a full disk, a file made meanwhile by another process) leaves `path` as it
    was, and the scripts run on it as before."""
    if path.exists() or Path(f"{path}.wal").exists():
        return False
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        template = _template()
        if not template.exists():
            _make_template(template)
        shutil.copyfile(template, tmp)
        os.link(tmp, path)  # never over a file another process made meanwhile
        return True
    except (OSError, duckdb.Error):
        return False
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _make_template(template: Path) -> None:
    template.parent.mkdir(parents=True, exist_ok=True)
    tmp = template.with_name(f".{template.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        con = duckdb.connect(str(tmp))
        try:
            ensure_schema(con)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        os.replace(tmp, template)  # whole or absent: concurrent makers each rename a complete file
    finally:
        for f in (tmp, Path(f"{tmp}.wal")):
            with contextlib.suppress(OSError):
                f.unlink()


def _without_template(path: Path) -> duckdb.DuckDBPyConnection:
    """The copy would not open or check: drop it and the template (made again next time), then the usual way."""
    for f in (path, Path(f"{path}.wal"), _template()):
        with contextlib.suppress(OSError):
            f.unlink()
    con = duckdb.connect(str(path))
    try:
        ensure_schema(con)
    except duckdb.Error:
        con.close()
        raise
    return con


# What the catalog holds: a view, table or macro that another engine version re-created, or dropped,
# changes it. The state macro itself is left out.
_CATALOG = """SELECT md5(
  coalesce((SELECT string_agg(sql, chr(10) ORDER BY schema_name, view_name) FROM duckdb_views()
                WHERE NOT internal AND NOT temporary AND database_name = current_database()), '')
  || coalesce((SELECT string_agg(sql, chr(10) ORDER BY schema_name, table_name) FROM duckdb_tables()
                WHERE NOT temporary AND database_name = current_database()), '')
  || coalesce((SELECT string_agg(function_name || coalesce(macro_definition, ''), chr(10) ORDER BY function_name)
               FROM duckdb_functions() WHERE function_type IN ('macro', 'table_macro') AND NOT internal
                 AND database_name = current_database() AND function_name <> 'engine_schema_state'), ''))"""


def ensure_schema(con: duckdb.DuckDBPyConnection, *, template_copy: bool = False) -> None:
    """Every table, view and macro of this version (ensure_views, costs, history, batches, turns).

    Running the scripts costs DuckDB 0.2-0.5 s CPU (it binds every view), so a file whose catalog is what
    this version's scripts left the last time is left as it is: the macro engine_schema_state() holds the
    scripts' digest and the catalog's fingerprint taken after them. Any other file (new, or touched by
    another version: a view re-created or dropped) runs them. A macro, not a table: exports, the
    snapshot and readers list tables, and see nothing of it. ``template_copy``: the file is a copy of the
    template made a moment ago (_from_template), whose catalog is the one its stamp was taken from; only
    the digest is checked (the catalog's fingerprint costs DuckDB ~20-40 ms: duckdb_functions() lists
    every built-in function to find the macros)."""
    digest = schema_digest()
    try:
        row = con.execute("SELECT engine_schema_state()").fetchone()
    except duckdb.Error:  # a file from before the macro, or a new one
        row = None
    if row and template_copy and str(row[0]).startswith(f"{digest} "):
        return
    if row and row[0] == f"{digest} {_fingerprint(con)}":
        return
    _run_schema_scripts(con)
    con.execute(f"CREATE OR REPLACE MACRO engine_schema_state() AS '{digest} {_fingerprint(con)}'")


def _run_schema_scripts(con: duckdb.DuckDBPyConnection) -> None:
    from store.hierarchy.views import ensure_views

    ensure_views(con)  # estimates.sql too: dataset_scores reads it
    con.execute((_STORE / "results" / "costs.sql").read_text(encoding="utf-8"))
    con.execute((_STORE / "results" / "history.sql").read_text(encoding="utf-8"))
    con.execute((_STORE / "side" / "batches.sql").read_text(encoding="utf-8"))
    from store.results.turns import ensure_turn_tables

    ensure_turn_tables(con)  # its views read results


_STORE = Path(__file__).parent
_digest: list[str] = []


def schema_digest() -> str:
    """What the scripts would make: DuckDB's version, every SQL file of store/ (more than the scripts run:
    a change elsewhere only costs one re-run), the rendered views and the suite tables' SQL."""
    if not _digest:
        import hashlib

        from store.hierarchy.suite_tables import SUITE_TABLES_SQL
        from store.hierarchy.views import views_sql

        h = hashlib.sha256(duckdb.__version__.encode())
        for f in sorted(_STORE.rglob("*.sql")):
            h.update(b"\0" + str(f.relative_to(_STORE)).encode() + b"\0" + f.read_bytes())
        h.update(b"\0" + views_sql().encode() + b"\0" + SUITE_TABLES_SQL.encode())
        _digest.append(h.hexdigest())
    return _digest[0]


def _fingerprint(con: duckdb.DuckDBPyConnection) -> str:
    row = con.execute(_CATALOG).fetchone()
    return str(row[0]) if row else ""


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

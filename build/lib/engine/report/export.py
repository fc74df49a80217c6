"""Every table and view of a results database as files pandas, polars, R or a spreadsheet open.

    python -m engine export DB --format parquet|csv|jsonl --out DIR [--suite NAME[@VERSION]]

The relations are read from DuckDB's catalog, so a view added later is
exported without a change here. The database is opened read-only: an export
never alters it (and runs beside a report, though not beside a running sweep).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import duckdb
import msgspec

from benchmark.errors import UserError
from engine.report.outfile import check_target, replaced
from store.db import connect

# format -> (file suffix, DuckDB COPY options); jsonl is DuckDB's JSON format, one object a line
FORMATS = {"parquet": ("parquet", "FORMAT parquet"), "csv": ("csv", "FORMAT csv, HEADER"),
           "jsonl": ("jsonl", "FORMAT json")}


class ExportError(UserError):
    """A format, suite or output folder the export cannot use."""


def relations(con: duckdb.DuckDBPyConnection) -> list[tuple[str, set[str]]]:
    """(name, its columns) of every table and view: `results` first, then tables, then views, by name."""
    rows = con.execute(
        """SELECT t.table_name, t.table_type, list(c.column_name)
           FROM information_schema.tables t
           JOIN information_schema.columns c ON c.table_schema = t.table_schema AND c.table_name = t.table_name
           WHERE t.table_schema = 'main'
           GROUP BY t.table_name, t.table_type
           ORDER BY t.table_name <> 'results', t.table_type <> 'BASE TABLE', t.table_name"""
    ).fetchall()
    return [(name, set(cols)) for name, _, cols in rows]


def _suite(con: duckdb.DuckDBPyConnection, spec: str) -> tuple[str, str]:
    name, _, version = spec.partition("@")
    try:
        loaded = con.execute("SELECT suite, version FROM suites ORDER BY loaded_at DESC").fetchall()
    except duckdb.CatalogException:
        loaded = []
    for n, v in loaded:
        if n == name and (not version or v == version):
            return n, v
    shown = ", ".join(sorted({f"{n}@{v}" for n, v in loaded})) or "none"
    raise ExportError(f"suite {spec!r} is not loaded in this database (loaded: {shown})")


def _select(name: str, cols: set[str], suite: tuple[str, str] | None) -> tuple[str, list]:
    """The relation's rows; with a suite, only its rows (by suite and version, else by its datasets)."""
    sql = 'SELECT * FROM "{}"'.format(name.replace('"', '""'))
    if suite is None:
        return sql, []
    if {"suite", "version"} <= cols:
        return sql + " WHERE suite = ? AND version = ?", list(suite)
    if "dataset" in cols:
        return sql + " WHERE dataset IN (SELECT dataset FROM suite_datasets WHERE suite = ? AND version = ?)", list(suite)
    return sql, []


# A relation's name becomes a file name: only plain names, so a database someone sent cannot name
# `../../x` or an absolute path and have its rows written there.
PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,127}")


def export(con: duckdb.DuckDBPyConnection, out: Path, form: str, suite: tuple[str, str] | None = None,
           db: Path | None = None):
    """Yield (file, rows) per relation written, or (name, why) for one not exported.

    Only relations with a plain name are written, each inside ``out`` through a temporary file renamed
    into place; ``db`` (the database read): a UserError before anything is written when a file would
    land on it, its snapshot or a WAL."""
    suffix, options = FORMATS[form]
    plan = [(name, cols, out / f"{name}.{suffix}") for name, cols in relations(con)]
    if db is not None:
        for name, _, path in plan:
            if PLAIN_NAME.fullmatch(name):
                check_target(path, db, f"the export of {name}")
    for name, cols, path in plan:
        if not PLAIN_NAME.fullmatch(name):
            yield repr(name), "its name is not a plain name (letters, digits, _ and -), so it is no file name"
            continue
        sql, params = _select(name, cols, suite)
        try:
            with replaced(path) as tmp:
                target = str(tmp).replace("'", "''")
                (n,) = con.execute(f"COPY ({sql}) TO '{target}' ({options})", params).fetchone() or (0,)
        except duckdb.Error as e:  # a view the database cannot evaluate (e.g. made by another version)
            yield name, str(e).splitlines()[0]
            continue
        yield path, n


def _out_dir(path: Path) -> Path:
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".export-probe"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise ExportError(f"{path}: cannot write there ({e.strerror or e})") from None
    return path


class ExportOptions(msgspec.Struct, frozen=True, kw_only=True):
    """`export`'s options (engine/report/flags.py maps the flags onto them)."""

    db: Path
    out: Path  # folder for the files (created if missing)
    format: str = "parquet"  # a key of FORMATS
    suite: str | None = None  # only this suite's rows (name or name@version) where a relation has them


def export_db(opts: ExportOptions) -> int:
    """Write every relation of ``opts.db``; 1 if some could not be exported, ExportError for bad input."""
    if opts.format not in FORMATS:
        raise ExportError(f"--format {opts.format}: choose one of {', '.join(FORMATS)}")
    if not opts.db.is_file():
        raise ExportError(f"{opts.db}: no such database")
    con = connect(opts.db, read_only=True)
    failed = 0
    try:
        suite = _suite(con, opts.suite) if opts.suite else None
        out = _out_dir(opts.out)
        written = 0
        for what, result in export(con, out, opts.format, suite, db=opts.db):
            if isinstance(what, Path):
                written += 1
                print(f"{what}  {result} rows")
            else:
                failed += 1
                print(f"warning: {what} not exported: {result}", file=sys.stderr)
        print(f"{written} files in {out}" + (f", {failed} not exported" if failed else ""))
    finally:
        con.close()
    return 1 if failed else 0

"""Every table and view of a results database as files pandas, polars, R or a spreadsheet open.

    python -m engine export DB --format parquet|csv|jsonl --out DIR [--suite NAME[@VERSION]]

The relations are read from DuckDB's catalog, so a view added later is
exported without a change here. The database is opened read-only: an export
never alters it (and runs beside a report, though not beside a running sweep).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import duckdb

from store.db import StoreError, connect

# format -> (file suffix, DuckDB COPY options); jsonl is DuckDB's JSON format, one object a line
FORMATS = {"parquet": ("parquet", "FORMAT parquet"), "csv": ("csv", "FORMAT csv, HEADER"),
           "jsonl": ("jsonl", "FORMAT json")}


class ExportError(Exception):
    pass


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


def export(con: duckdb.DuckDBPyConnection, out: Path, form: str, suite: tuple[str, str] | None = None):
    """Yield (file, rows) per relation written, or (name, error) for one that cannot be read."""
    suffix, options = FORMATS[form]
    for name, cols in relations(con):
        path = out / f"{name}.{suffix}"
        sql, params = _select(name, cols, suite)
        target = str(path).replace("'", "''")
        try:
            (n,) = con.execute(f"COPY ({sql}) TO '{target}' ({options})", params).fetchone() or (0,)
        except duckdb.Error as e:  # a view the database cannot evaluate (e.g. made by another version)
            yield name, str(e).splitlines()[0]
            continue
        yield path, n


def _out_dir(out: str) -> Path:
    path = Path(out)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".export-probe"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise ExportError(f"{out}: cannot write there ({e.strerror or e})") from None
    return path


def export_main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m engine export", description=__doc__.splitlines()[0])
    ap.add_argument("db", metavar="DB", help="DuckDB results file (opened read-only)")
    ap.add_argument("--format", default="parquet", help="parquet (default), csv (with a header) or jsonl")
    ap.add_argument("--out", required=True, metavar="DIR", help="folder for the files (created if missing)")
    ap.add_argument("--suite", help="only this suite's rows (name or name@version) where a relation has them")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    if args.format not in FORMATS:
        print(f"error: --format {args.format}: choose one of {', '.join(FORMATS)}", file=sys.stderr)
        return 2
    if not Path(args.db).is_file():
        print(f"error: {args.db}: no such database", file=sys.stderr)
        return 2
    try:
        con = connect(args.db, read_only=True)
    except StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    failed = 0
    try:
        suite = _suite(con, args.suite) if args.suite else None
        out = _out_dir(args.out)
        written = 0
        for what, result in export(con, out, args.format, suite):
            if isinstance(what, Path):
                written += 1
                print(f"{what}  {result} rows")
            else:
                failed += 1
                print(f"warning: {what} not exported: {result}", file=sys.stderr)
        print(f"{written} files in {out}" + (f", {failed} not exported" if failed else ""))
    except ExportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        con.close()
    return 1 if failed else 0

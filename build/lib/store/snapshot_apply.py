"""Apply a sweep's changes to a copy of its last snapshot, in a process of its own.

Run by store/snapshot.py (``python store/snapshot_apply.py MANIFEST``): the sweep exports the
rows that changed, and the small tables it replaces, as Parquet files; this process copies the
last snapshot, brings them in, and renames the copy into place. The copy's pages and its key
index are then loaded here, not in the sweep, whose memory stays flat however large the
database grows (bench/README.md, "Memory"). Stdlib and duckdb only: it starts in a fraction of
a second. Exit 3: the copy's tables differ from the sweep's (the sweep then copies it whole).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import duckdb

SCHEMA_MOVED = 3


def _ident(name: str) -> str:
    return name.replace('"', '""')


def _quoted(path: str) -> str:
    return path.replace("'", "''")


def tables(con: duckdb.DuckDBPyConnection, database: str) -> dict[str, list[str]]:
    """Each table of ``database`` (not a view) with its columns in order."""
    rows = con.execute("SELECT table_name, column_name FROM duckdb_columns() WHERE database_name = ? "
                       "AND NOT internal ORDER BY table_name, column_index", [database]).fetchall()
    views = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE database_name = ?",
                                       [database]).fetchall()}
    out: dict[str, list[str]] = {}
    for table, column in rows:
        if table not in views:
            out.setdefault(table, []).append(column)
    return out


def apply(manifest: dict) -> int:
    """Copy ``final`` to ``tmp``, bring the parts in, rename ``tmp`` over ``final``; 0, or SCHEMA_MOVED."""
    final, tmp = manifest["final"], manifest["tmp"]
    shutil.copyfile(final, tmp)
    con = duckdb.connect(tmp)
    try:
        catalog = con.execute("SELECT current_database()").fetchone()[0]  # type: ignore[index]
        if tables(con, catalog) != manifest["tables"]:
            return SCHEMA_MOVED
        con.execute("BEGIN TRANSACTION")
        for part in manifest["parts"]:
            table, cols = f'"{_ident(part["table"])}"', ", ".join(f'"{_ident(c)}"' for c in part["columns"])
            source = f"read_parquet('{_quoted(part['file'])}')"
            if part["key"] is not None:
                # The key is the table's primary key: an upsert finds the old row through its index.
                con.execute(f"INSERT OR REPLACE INTO {table} ({cols}) SELECT {cols} FROM {source}")
            else:
                con.execute(f"DELETE FROM {table}")
                con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {source}")
        con.execute("COMMIT")
    finally:
        con.close()
    os.replace(tmp, final)
    return 0


def main() -> None:
    manifest = json.loads(Path(sys.argv[1]).read_text())
    sys.exit(apply(manifest))


if __name__ == "__main__":
    main()

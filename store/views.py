"""Create or refresh the SQL views (store/views.sql) on a connection."""

from __future__ import annotations

from pathlib import Path

import duckdb

from store.judgements import ensure_judgement_tables
from store.suite_tables import ensure_suite_tables

_HERE = Path(__file__).parent


def ensure_views(con: duckdb.DuckDBPyConnection) -> None:
    """Create the base tables if missing, then (re)create every view.

    Idempotent. DuckDB binds a view when it is created, so the tables it reads
    (schema.sql and the suite tables) must exist first.
    """
    con.execute((_HERE / "schema.sql").read_text(encoding="utf-8"))
    ensure_judgement_tables(con)  # metric_values (views.sql) appends the judge metrics
    ensure_suite_tables(con)
    con.execute((_HERE / "views.sql").read_text(encoding="utf-8"))

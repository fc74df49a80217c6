"""Create or refresh the SQL views (store/views.sql) on a connection."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

from benchmark.metric_kinds import sql_case
from store.judgements import ensure_judgement_tables
from store.suite_tables import ensure_suite_tables

_HERE = Path(__file__).parent


# The stored bounds hold for the results as they are now (store/interval_tables.sql).
FRESH_BOUNDS = "(SELECT max(signature) FROM interval_state) = interval_signature()"


def ensure_views(con: duckdb.DuckDBPyConnection) -> None:
    """Create the base tables if missing, then (re)create every view.

    Idempotent. DuckDB binds a view when it is created, so the tables it reads
    (schema.sql, the suite tables, the stored intervals) must exist first.
    """
    con.execute((_HERE / "schema.sql").read_text(encoding="utf-8"))
    ensure_judgement_tables(con)  # metric_values (views.sql) appends the judge metrics
    ensure_suite_tables(con)
    con.execute((_HERE / "interval_tables.sql").read_text(encoding="utf-8"))  # the leaderboard joins them
    con.execute(render_views(views_sql()))


def views_sql() -> str:
    return (_HERE / "views.sql").read_text(encoding="utf-8").replace("{{metric_kind_case}}", sql_case())


def hierarchy_sql() -> str:
    """The template of the layers above dataset_scores (between the hierarchy markers of views.sql)."""
    text = views_sql()
    return text[text.index("-- hierarchy: begin"):text.index("-- hierarchy: end")]


def render_views(text: str, *, replicates: bool = False) -> str:
    """Fill the hierarchy template: per model (the views), or per (replicate, model) as boot_* views."""
    text = re.sub(r"\{\{g:(\w*)\}\}",
                  lambda m: (f"{m[1]}.replicate, " if m[1] else "replicate, ") if replicates else "", text)
    bounds, join = ("", "") if replicates else (
        ",\n       b.ci_low, b.ci_high, b.rank_low, b.rank_high, b.p_veto",
        ("\nLEFT JOIN interval_bounds b ON b.suite = totals.suite AND b.version = totals.version"
         " AND b.model = totals.model AND b.level = 'overall' AND " + FRESH_BOUNDS))
    return (text.replace("{{p}}", "boot_" if replicates else "").replace("{{fresh_bounds}}", FRESH_BOUNDS)
            .replace("{{bounds}}", bounds).replace("{{bounds_join}}", join))

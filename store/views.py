"""Create or refresh the SQL views (store/views.sql) on a connection."""

from __future__ import annotations

from pathlib import Path

import duckdb

from store.extractions import ensure_extraction_tables
from store.judgements import ensure_judgement_tables
from store.suite_tables import ensure_suite_tables

_HERE = Path(__file__).parent
VIEW_NAMES = (
    "dataset_item_stats",
    "dataset_coverage",
    "metric_inputs",
    "metric_values",
    "suite_methods_resolved",
    "method_scores",
    "dataset_scores",
    "task_scores",
    "level_scores",
    "sub_ability_scores",
    "ability_scores",
    "leaderboard",
    "suite_weights",
    "suite_method_problems",
    "unparsed_effect",
    "unparsed_flags",
    "model_unparsed",
)


def ensure_views(con: duckdb.DuckDBPyConnection) -> None:
    """Create the base tables if missing, then (re)create every view.

    Idempotent. DuckDB binds a view when it is created, so the tables it reads
    (schema.sql and the suite tables) must exist first.
    """
    con.execute((_HERE / "schema.sql").read_text(encoding="utf-8"))
    ensure_judgement_tables(con)  # metric_values (views.sql) appends the judge metrics
    ensure_extraction_tables(con)
    ensure_suite_tables(con)
    con.execute((_HERE / "views.sql").read_text(encoding="utf-8"))
    con.execute((_HERE / "unparsed.sql").read_text(encoding="utf-8"))

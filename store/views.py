"""Create or refresh the SQL views (store/views.sql) on a connection."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

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
)


def ensure_views(con: duckdb.DuckDBPyConnection) -> None:
    """Create the base tables if missing, then (re)create every view.

    Idempotent. DuckDB binds a view when it is created, so the tables it reads
    (schema.sql and the suite tables) must exist first.
    """
    con.execute((_HERE / "schema.sql").read_text(encoding="utf-8"))
    ensure_judgement_tables(con)  # metric_values (views.sql) appends the judge metrics
    ensure_suite_tables(con)
    con.execute((_HERE / "views.sql").read_text(encoding="utf-8"))


# Dependency order: metric_values (views.sql) reads judge_metric_values (judgements.sql).
_VIEW_FILES = ("judgements.sql", "views.sql", "costs.sql")
_CREATE_VIEW = re.compile(r"^\s*CREATE\s+OR\s+REPLACE\s+VIEW\s+(\w+)", re.IGNORECASE | re.MULTILINE)


def shadow_views(con: duckdb.DuckDBPyConnection) -> bool:
    """On a read-only connection: this engine's views as TEMP views over the stored tables.

    A read-only database keeps the views its last writer created; temporary views
    of the same names shadow them, so a report reads what this version computes.
    If a file is too old for them (a table they read is missing), none is kept
    and the stored views answer (False).
    """
    made: list[str] = []
    try:
        for name in _VIEW_FILES:
            for stmt in con.extract_statements((_HERE / name).read_text(encoding="utf-8")):
                m = _CREATE_VIEW.search(stmt.query)
                if m:
                    con.execute(stmt.query[:m.start()] + f"CREATE OR REPLACE TEMP VIEW {m.group(1)}"
                                + stmt.query[m.end():])
                    made.append(m.group(1))
    except duckdb.Error:
        for view in reversed(made):
            con.execute(f"DROP VIEW IF EXISTS temp.{view}")
        return False
    return True

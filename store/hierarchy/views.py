"""Create or refresh the SQL views (store/hierarchy/views.sql) on a connection."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import duckdb

from benchmark.metrics.kinds import play_kinds_sql, sql_case
from store.side.extractions import ensure_extraction_tables
from store.side.judgements import ensure_judgement_tables
from store.hierarchy.suite_tables import ensure_suite_tables

# store/: the SQL files are read by their path under it, "<wing>/<file>.sql", since these views read the
# tables of several wings (the results, the estimates, the judgements).
_STORE = Path(__file__).parents[1]


# The stored bounds hold for the results as they are now (store/hierarchy/interval_tables.sql).
FRESH_BOUNDS = "(SELECT max(signature) FROM interval_state) = interval_signature()"


def ensure_views(con: duckdb.DuckDBPyConnection) -> None:
    """Create the base tables if missing, then (re)create every view.

    Idempotent. DuckDB binds a view when it is created, so the tables it reads
    (schema.sql, the suite tables, the stored intervals) must exist first.
    """
    con.execute((_STORE / "results/schema.sql").read_text(encoding="utf-8"))
    # dataset_scores reads the fresh estimates, and the interval signature hashes them
    con.execute((_STORE / "estimates/estimates.sql").read_text(encoding="utf-8"))
    ensure_judgement_tables(con)  # metric_values (views.sql) appends the judge metrics
    ensure_extraction_tables(con)
    ensure_suite_tables(con)
    # the leaderboard joins them
    con.execute((_STORE / "hierarchy/interval_tables.sql").read_text(encoding="utf-8"))
    con.execute(render_views(views_sql()))
    con.execute((_STORE / "hierarchy/baselines.sql").read_text(encoding="utf-8"))  # reads dataset_scores
    con.execute((_STORE / "hierarchy/unparsed.sql").read_text(encoding="utf-8"))


def views_sql() -> str:
    return ((_STORE / "hierarchy/views.sql").read_text(encoding="utf-8").replace("{{metric_kind_case}}", sql_case())
            .replace("{{play_kinds}}", play_kinds_sql()))


def hierarchy_sql() -> str:
    """The template of the layers above dataset_scores (between the hierarchy markers of views.sql)."""
    text = views_sql()
    return text[text.index("-- hierarchy: begin"):text.index("-- hierarchy: end")]


def render_views(text: str, *, replicates: bool = False, prefix: str = "boot_") -> str:
    """Fill the hierarchy template: per model (the views), or per (replicate, model) as `prefix`* views."""
    text = re.sub(r"\{\{g:(\w*)\}\}",
                  lambda m: (f"{m[1]}.replicate, " if m[1] else "replicate, ") if replicates else "", text)
    bounds, join = ("", "") if replicates else (
        ",\n       b.ci_low, b.ci_high, b.rank_low, b.rank_high, b.p_veto",
        ("\nLEFT JOIN interval_bounds b ON b.suite = totals.suite AND b.version = totals.version"
         " AND b.model = totals.model AND b.level = 'overall' AND " + FRESH_BOUNDS))
    return (text.replace("{{p}}", prefix if replicates else "").replace("{{fresh_bounds}}", FRESH_BOUNDS)
            .replace("{{bounds}}", bounds).replace("{{bounds_join}}", join))


# Dependency order: metric_values (views.sql) reads judge_metric_values (judgements.sql), dataset_scores
# reads dataset_estimates (estimates.sql).
_VIEW_FILES = ("estimates/estimates.sql", "side/judgements.sql", "hierarchy/views.sql", "hierarchy/baselines.sql",
               "hierarchy/unparsed.sql", "results/costs.sql")
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
        # a file made before the estimates: none, and this version's signature macro (the views read it)
        _missing_tables_as_temp(con, "estimates/estimates.sql")
        _temp_macros(con, "estimates/estimates.sql")
        private_interval_tables(con)
        _missing_tables_as_temp(con, "hierarchy/baselines.sql")  # a file made before the baselines: none shown
        for name in _VIEW_FILES:
            text = (_STORE / name).read_text(encoding="utf-8")
            for stmt in con.extract_statements(render_views(views_sql()) if name == "hierarchy/views.sql" else text):
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


def _statements(con: duckdb.DuckDBPyConnection, name: str) -> Iterator[tuple[str | None, str]]:
    """Each statement of the file without its leading comments, with the table it creates (or None)."""
    for stmt in con.extract_statements((_STORE / name).read_text(encoding="utf-8")):
        q = re.sub(r"^(\s*--[^\n]*\n)*", "", stmt.query).strip()
        table = re.match(r"CREATE TABLE IF NOT EXISTS (\w+)", q, re.I)
        yield (table.group(1) if table else None), q


def _missing_tables_as_temp(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """On a read-only connection: each table of that file the database lacks, as an empty TEMP table."""
    have = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    for table, q in _statements(con, name):
        if table and table not in have:
            con.execute("CREATE TEMP TABLE" + q[len("CREATE TABLE"):])


def private_interval_tables(con: duckdb.DuckDBPyConnection) -> None:
    """On a read-only connection: the interval tables as this connection's TEMP copies, and this version's
    signature macro.

    The copies shadow the file's tables (which a read-only file cannot change), so the views show the
    stored bounds and compute_intervals can replace them for this connection only. A file made before
    the tables gets empty ones.
    """
    have = {(r[0], r[1]) for r in con.execute("SELECT table_name, temporary FROM duckdb_tables()").fetchall()}
    for name, q in _statements(con, "hierarchy/interval_tables.sql"):
        if name and (name, True) not in have:
            con.execute(f"CREATE TEMP TABLE {name} AS SELECT * FROM main.{name}" if (name, False) in have
                        else "CREATE TEMP TABLE" + q[len("CREATE TABLE"):])
    _temp_macros(con, "hierarchy/interval_tables.sql")


def _temp_macros(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """The file's macros as TEMP macros: this version's, whatever the read-only database holds."""
    for _, q in _statements(con, name):
        if re.match(r"CREATE OR REPLACE MACRO", q, re.I):
            con.execute("CREATE OR REPLACE TEMP MACRO" + q[len("CREATE OR REPLACE MACRO"):])

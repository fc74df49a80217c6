"""Load a Suite into DuckDB tables that the views aggregate over.

Every table is keyed by (suite, version), so several suites and several
versions of one suite coexist in one database. Every weight lives in a column
of these tables: an UPDATE changes the views' answer at once. The tables are
documented in docs/suites.md.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone

import duckdb
import pyarrow as pa

from benchmark.suites.suite import Suite, SuiteError, load_suite
from store.transaction import transaction

SUITE_TABLES_SQL = """
CREATE TABLE IF NOT EXISTS suites (
    suite VARCHAR NOT NULL, version VARCHAR NOT NULL, title VARCHAR,
    gate VARCHAR,                 -- gate ability id, NULL: no veto
    tau DOUBLE,                   -- gate threshold on 0-100
    missing_levels VARCHAR NOT NULL,  -- 'table' | 'renormalize'
    sample_size INTEGER, seed BIGINT, source VARCHAR, loaded_at TIMESTAMPTZ,
    PRIMARY KEY (suite, version));
CREATE TABLE IF NOT EXISTS suite_abilities (
    suite VARCHAR NOT NULL, version VARCHAR NOT NULL, ability VARCHAR NOT NULL,
    name VARCHAR, grp VARCHAR,
    weight DOUBLE,                -- main-ability weight; NULL for the gate
    position INTEGER, PRIMARY KEY (suite, version, ability));
CREATE TABLE IF NOT EXISTS suite_sub_abilities (
    suite VARCHAR NOT NULL, version VARCHAR NOT NULL, sub_ability VARCHAR NOT NULL,
    ability VARCHAR NOT NULL, name VARCHAR, weight DOUBLE NOT NULL, position INTEGER,
    PRIMARY KEY (suite, version, sub_ability));
CREATE TABLE IF NOT EXISTS suite_tasks (
    suite VARCHAR NOT NULL, version VARCHAR NOT NULL, task VARCHAR NOT NULL,
    sub_ability VARCHAR NOT NULL, level VARCHAR NOT NULL, name VARCHAR,
    weight DOUBLE NOT NULL, position INTEGER,
    PRIMARY KEY (suite, version, task));
CREATE TABLE IF NOT EXISTS suite_task_datasets (
    suite VARCHAR NOT NULL, version VARCHAR NOT NULL, task VARCHAR NOT NULL,
    dataset VARCHAR NOT NULL, weight DOUBLE NOT NULL, position INTEGER,
    PRIMARY KEY (suite, version, task, dataset));
CREATE TABLE IF NOT EXISTS suite_datasets (
    suite VARCHAR NOT NULL, version VARCHAR NOT NULL, dataset VARCHAR NOT NULL,
    name VARCHAR, position INTEGER, PRIMARY KEY (suite, version, dataset));
CREATE TABLE IF NOT EXISTS suite_methods (
    suite VARCHAR NOT NULL, version VARCHAR NOT NULL, dataset VARCHAR NOT NULL,
    method VARCHAR NOT NULL,      -- the metric name, or 'primary'
    metric VARCHAR,               -- NULL: the dataset's primary metric in dataset_metrics
    normalization VARCHAR NOT NULL,  -- 'ratio' | 'raw' | 'numeric' | 'grade'
    lo DOUBLE, hi DOUBLE,         -- numeric: min and max of the raw scale
    weight DOUBLE NOT NULL, position INTEGER,
    PRIMARY KEY (suite, version, dataset, method));
CREATE TABLE IF NOT EXISTS suite_grades (
    suite VARCHAR NOT NULL, version VARCHAR NOT NULL, dataset VARCHAR NOT NULL,
    method VARCHAR NOT NULL, grade VARCHAR NOT NULL,
    grade_key VARCHAR NOT NULL,   -- grade as text, numbers canonicalised ('4' -> '4.0')
    points DOUBLE NOT NULL,
    PRIMARY KEY (suite, version, dataset, method, grade));
CREATE TABLE IF NOT EXISTS suite_difficulty (
    suite VARCHAR NOT NULL, version VARCHAR NOT NULL,
    levels VARCHAR NOT NULL,      -- the set of levels the row is for: 'LMH', 'LM', ...
    level VARCHAR NOT NULL, weight DOUBLE NOT NULL,
    PRIMARY KEY (suite, version, levels, level));
CREATE TABLE IF NOT EXISTS external_scores (
    suite VARCHAR NOT NULL,       -- suite name (all its versions)
    model VARCHAR NOT NULL, dataset VARCHAR NOT NULL,
    score DOUBLE NOT NULL,        -- dataset score on 0-100
    override BOOLEAN NOT NULL DEFAULT false,  -- true: wins over item rows
    source VARCHAR, imported_at TIMESTAMPTZ,
    PRIMARY KEY (suite, model, dataset));
"""

_TABLES = (
    "suite_difficulty",
    "suite_grades",
    "suite_methods",
    "suite_datasets",
    "suite_task_datasets",
    "suite_tasks",
    "suite_sub_abilities",
    "suite_abilities",
    "suites",
)


def ensure_suite_tables(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(SUITE_TABLES_SQL)


def load_suite_tables(con: duckdb.DuckDBPyConnection, suite: Suite) -> None:
    """Write ``suite`` into the suite tables, replacing that (name, version), in one transaction.

    Tables that already hold exactly these rows are left as they are (every sweep loads its suite, and a
    rewrite costs ~50 ms); if another suite was loaded since, only `loaded_at` moves, so this one is again
    the newest load that `find_loaded` picks by name."""
    ensure_suite_tables(con)
    key = (suite.name, suite.version)
    rows = suite_rows(suite)
    if _holds(con, key, rows):
        newest = con.execute("SELECT suite, version FROM suites ORDER BY loaded_at DESC LIMIT 1").fetchone()
        if tuple(newest or ()) != key:
            with transaction(con):
                con.execute("UPDATE suites SET loaded_at = ? WHERE suite = ? AND version = ?",
                            [datetime.now(timezone.utc), *key])
        return
    with transaction(con):
        _replace(con, key, rows)


def write_suite_tables(con: duckdb.DuckDBPyConnection, suite: Suite) -> None:
    """``load_suite_tables`` inside the caller's transaction (always written)."""
    _replace(con, (suite.name, suite.version), suite_rows(suite))


def suite_rows(suite: Suite) -> dict[str, list[tuple]]:
    """Table -> the rows ``suite`` is stored as (the `suites` row's last column, loaded_at, is now)."""
    key = (suite.name, suite.version)
    rows: dict[str, list[tuple]] = {t: [] for t in _TABLES}
    rows["suites"].append(
        key
        + (
            suite.title,
            suite.gate,
            suite.tau,
            suite.missing_levels,
            suite.sample_size,
            suite.seed,
            suite.source,
            datetime.now(timezone.utc),
        )
    )
    for i, a in enumerate(suite.abilities):
        rows["suite_abilities"].append(key + (a.id, a.name, a.group, a.weight, i))
        for j, s in enumerate(a.sub_abilities):
            rows["suite_sub_abilities"].append(key + (s.id, a.id, s.name, s.weight, j))
            for k, t in enumerate(s.tasks):
                rows["suite_tasks"].append(key + (t.id, s.id, t.level, t.name, t.weight, k))
                for n, r in enumerate(t.datasets):
                    rows["suite_task_datasets"].append(key + (t.id, r.id, r.weight, n))
    for i, d in enumerate(suite.dataset_specs):
        rows["suite_datasets"].append(key + (d.id, d.name, i))
        for j, m in enumerate(d.methods):
            rows["suite_methods"].append(key + (d.id, m.id, m.metric, m.normalization, m.min, m.max, m.weight, j))
            for label, pts in m.grades:
                rows["suite_grades"].append(key + (d.id, m.id, label, grade_key(label), pts))
    for lw in suite.difficulty:
        rows["suite_difficulty"].append(key + (lw.levels, lw.level, lw.weight))
    return rows


def _holds(con: duckdb.DuckDBPyConnection, key: tuple[str, str], rows: dict[str, list[tuple]]) -> bool:
    """Whether the tables hold exactly ``rows`` for ``key`` (an UPDATEd weight is a difference: the file wins)."""
    for table in _TABLES:
        stored = con.execute(f"SELECT * FROM {table} WHERE suite = ? AND version = ?", key).fetchall()
        want = rows[table]
        if table == "suites":  # all but loaded_at
            stored, want = [r[:-1] for r in stored], [r[:-1] for r in want]
        if Counter(stored) != Counter(want):
            return False
    return True


def _replace(con: duckdb.DuckDBPyConnection, key: tuple[str, str], rows: dict[str, list[tuple]]) -> None:
    for table in _TABLES:
        con.execute(f"DELETE FROM {table} WHERE suite = ? AND version = ?", key)
        insert_rows(con, table, rows[table])


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple]) -> None:
    """INSERT OR REPLACE many rows at once (executemany costs ~1 ms a row on a file)."""
    if not rows:
        return
    cols = [d[0] for d in con.execute(f"SELECT * FROM {table} LIMIT 0").description]
    batch = pa.table({c: list(v) for c, v in zip(cols, zip(*rows))})  # noqa: F841 (read by the SQL)
    con.execute(f"INSERT OR REPLACE INTO {table} SELECT * FROM batch")


def grade_key(label: str) -> str:
    """Canonical text of a grade, so '4', '4.0' and a score of 4.0 match."""
    try:
        return repr(float(label))
    except ValueError:
        return label


def loaded_suites(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(name, version) of every loaded suite, newest load first."""
    if not con.execute("SELECT 1 FROM duckdb_tables() WHERE database_name = current_database() "
                       "AND table_name = 'suites'").fetchone():
        ensure_suite_tables(con)  # only when missing: a read-only connection cannot even CREATE IF NOT EXISTS
    return [tuple(r) for r in con.execute("SELECT suite, version FROM suites ORDER BY loaded_at DESC").fetchall()]


def find_loaded(con: duckdb.DuckDBPyConnection, spec: str | None) -> tuple[str, str] | None:
    """Pick a loaded suite: 'name@version', 'name' (its newest load) or None (the only one)."""
    loaded = loaded_suites(con)
    if spec is None:
        names = {n for n, _ in loaded}
        return loaded[0] if len(names) == 1 else None
    name, _, version = spec.partition("@")
    for n, v in loaded:
        if n == name and (not version or v == version):
            return (n, v)
    return None


def open_suite(con: duckdb.DuckDBPyConnection, spec: str | None, reload: bool = False) -> tuple[str, str]:
    """The (name, version) to aggregate with.

    ``spec`` is 'name', 'name@version' or a suite .toml path. A suite already
    loaded in the database is used as it is there (weights may have been
    UPDATEd); otherwise, or with ``reload``, the suite file is loaded now.
    None picks the only loaded suite.
    """
    key, suite = resolve_suite(con, spec, reload)
    if suite is not None:
        load_suite_tables(con, suite)
    return key


def resolve_suite(con: duckdb.DuckDBPyConnection, spec: str | None,
                  reload: bool = False) -> tuple[tuple[str, str], Suite | None]:
    """``open_suite`` without writing: the (name, version), and the Suite still to load (None: loaded)."""
    if not reload and (spec is None or not spec.endswith(".toml")):
        hit = find_loaded(con, spec)
        if hit:
            return hit, None
    if spec is None:
        names = sorted({n for n, _ in loaded_suites(con)})
        if names:
            raise SuiteError(f"several suites are loaded ({', '.join(names)}): pass --suite NAME")
        raise SuiteError("no suite is loaded in this database: pass --suite NAME")
    name, _, version = spec.partition("@") if not spec.endswith(".toml") else (spec, "", "")
    suite = load_suite(name)
    if version and suite.version != version:
        raise SuiteError(
            f"suite {name} version {version} is not loaded, and {suite.source} has version {suite.version}"
        )
    return (suite.name, suite.version), suite

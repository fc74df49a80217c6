"""CompactBench's tables and views (store/side/compactbench.sql), its row types,
the batch insert the shared Writer calls, and the resume queries."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import msgspec
import pyarrow as pa

from store.query import single
from store.transaction import transaction

_SQL = Path(__file__).with_name("compactbench.sql")
_TS = pa.timestamp("us", tz="UTC")


class ItemRow(msgspec.Struct, array_like=True):
    """One row of compact_items, in column order."""

    mode: str
    model: str
    compactor: str
    case_id: str
    cycle: int
    item_key: str
    status: str
    error_class: str | None
    error: str | None
    attempts: int
    item_type: str
    check_type: str | None
    response: str | None
    score: float | None
    weight: float | None
    violates: bool | None
    counted: bool | None
    latency_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    model_version: str | None
    stamp: str
    scorer_version: str
    started_at: datetime
    finished_at: datetime


class StepRow(msgspec.Struct, array_like=True):
    """One row of compact_steps, in column order."""

    mode: str
    model: str
    compactor: str
    case_id: str
    cycle: int
    step: str
    status: str
    error_class: str | None
    error: str | None
    attempts: int
    output: str | None
    source_tokens: int | None
    artifact_tokens: int | None
    calls: int
    latency_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    model_version: str | None
    stamp: str
    started_at: datetime
    finished_at: datetime


_S, _I, _F, _B = pa.string(), pa.int32(), pa.float64(), pa.bool_()
_ITEM_FIELDS: list[tuple[str, pa.DataType]] = [  # annotated: the checker cannot infer a list of mixed types
    ("mode", _S), ("model", _S), ("compactor", _S), ("case_id", _S), ("cycle", _I), ("item_key", _S),
    ("status", _S), ("error_class", _S), ("error", _S), ("attempts", _I), ("item_type", _S), ("check_type", _S),
    ("response", _S), ("score", _F), ("weight", _F), ("violates", _B), ("counted", _B), ("latency_ms", _F),
    ("input_tokens", _I), ("output_tokens", _I), ("model_version", _S), ("stamp", _S), ("scorer_version", _S),
    ("started_at", _TS), ("finished_at", _TS),
]
_ITEM_SCHEMA = pa.schema(_ITEM_FIELDS)
_STEP_FIELDS: list[tuple[str, pa.DataType]] = [  # annotated: the checker cannot infer a list of mixed types
    ("mode", _S), ("model", _S), ("compactor", _S), ("case_id", _S), ("cycle", _I), ("step", _S),
    ("status", _S), ("error_class", _S), ("error", _S), ("attempts", _I), ("output", _S),
    ("source_tokens", _I), ("artifact_tokens", _I), ("calls", _I), ("latency_ms", _F), ("input_tokens", _I),
    ("output_tokens", _I), ("model_version", _S), ("stamp", _S), ("started_at", _TS), ("finished_at", _TS),
]
_STEP_SCHEMA = pa.schema(_STEP_FIELDS)


def _upsert(table: str, schema: pa.Schema, n_key: int) -> str:
    # A retried row replaces the earlier error row; attempts add up over runs.
    cols = [f.name for f in schema]
    sets = ", ".join(f"{c} = excluded.{c}" for c in cols[n_key:] if c != "attempts")
    return (f"INSERT INTO {table} SELECT * FROM batch ON CONFLICT ({', '.join(cols[:n_key])}) "
            f"DO UPDATE SET {sets}, attempts = {table}.attempts + excluded.attempts")


_ITEM_UPSERT = _upsert("compact_items", _ITEM_SCHEMA, 6)
_STEP_UPSERT = _upsert("compact_steps", _STEP_SCHEMA, 6)


def _arrow(rows: list[Any], schema: pa.Schema) -> pa.Table:
    cols = list(zip(*(msgspec.structs.astuple(r) for r in rows)))
    return pa.Table.from_arrays([pa.array(v, type=f.type) for v, f in zip(cols, schema)], schema=schema)


def insert_rows(con: duckdb.DuckDBPyConnection, rows: list[ItemRow | StepRow]) -> None:
    """The Writer's batch insert: item and step rows of one batch in one transaction."""
    items = [r for r in rows if isinstance(r, ItemRow)]
    steps = [r for r in rows if isinstance(r, StepRow)]
    with transaction(con):
        if steps:
            batch = _arrow(steps, _STEP_SCHEMA)
            con.execute(_STEP_UPSERT)
        if items:
            batch = _arrow(items, _ITEM_SCHEMA)  # noqa: F841
            con.execute(_ITEM_UPSERT)


def ensure_compactbench(con: duckdb.DuckDBPyConnection) -> None:
    """Create the tables if missing and (re)create the views. Idempotent."""
    from benchmark.compactbench.modes import MODES

    con.execute(_SQL.read_text(encoding="utf-8"))
    for m in MODES.values():
        con.execute("INSERT OR REPLACE INTO compact_modes VALUES (?, ?, ?, ?, ?)",
                    [m.name, m.drift_on_penalized, m.family_from_key, m.family_floor_always, m.require_all_slots])


# --------------------------------------------------------------------------- run bookkeeping

RunKey = tuple[str, str, str, str, str]  # mode, suite, difficulty, model, compactor


_CASE_COLUMNS = ("mode", "case_id", "suite", "suite_version", "template_key", "template_version", "family",
                 "family_from_key", "seed_group", "slot", "seed", "difficulty", "n_items", "n_turns", "case_tokens")


def record_cases(con: duckdb.DuckDBPyConnection, rows: list[tuple]) -> None:
    """compact_cases rows, as tuples in _CASE_COLUMNS order (one insert: executemany is slow in DuckDB)."""
    if not rows:
        return
    cases = pa.table({c: pa.array(v, type=pa.uint64() if c == "seed" else None)  # noqa: F841
                      for c, v in zip(_CASE_COLUMNS, zip(*rows))})
    con.execute(f"INSERT OR REPLACE INTO compact_cases SELECT {', '.join(_CASE_COLUMNS)} FROM cases")


def start_run(con: duckdb.DuckDBPyConnection, key: RunKey, *, suite_version: str, seed_group: str,
              case_slots: int, drift_cycles: int, n_templates: int, stamp: str, spec_json: str,
              case_ids: list[str], now: datetime) -> None:
    """Record the run's settings and replace its plan (the units scores read)."""
    with transaction(con):
        con.execute(
            """INSERT INTO compact_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 'running')
               ON CONFLICT (mode, suite, difficulty, model, compactor) DO UPDATE SET
                 suite_version = excluded.suite_version, seed_group = excluded.seed_group,
                 case_slots = excluded.case_slots, drift_cycles = excluded.drift_cycles,
                 n_templates = excluded.n_templates, stamp = excluded.stamp,
                 compactor_spec = excluded.compactor_spec, started_at = excluded.started_at,
                 finished_at = NULL, outcome = 'running'""",
            [*key, suite_version, seed_group, case_slots, drift_cycles, n_templates, stamp, spec_json, now, now])
        con.execute("DELETE FROM compact_plan WHERE mode = ? AND suite = ? AND difficulty = ? AND model = ? "
                    "AND compactor = ?", list(key))
        plan = pa.table({"case_id": case_ids})  # noqa: F841
        con.execute("INSERT INTO compact_plan SELECT ?, ?, ?, ?, ?, case_id FROM plan", list(key))


def close_stale_runs(con: duckdb.DuckDBPyConnection) -> int:
    """Runs left `running` by a killed process become `interrupted` (the caller holds the write lock;
    a database without CompactBench tables has none)."""
    if not con.execute("SELECT 1 FROM duckdb_tables() WHERE table_name = 'compact_runs'").fetchone():
        return 0
    n = con.execute("UPDATE compact_runs SET outcome = 'interrupted' WHERE outcome = 'running'").fetchone()
    return int(n[0]) if n else 0


def finish_runs(con: duckdb.DuckDBPyConnection, keys: Iterable[RunKey], outcome: str, now: datetime) -> None:
    con.executemany("UPDATE compact_runs SET finished_at = ?, outcome = ? WHERE mode = ? AND suite = ? "
                    "AND difficulty = ? AND model = ? AND compactor = ?",
                    [[now, outcome, *k] for k in keys])


# --------------------------------------------------------------------------- resume

def stamp_conflicts(con: duckdb.DuckDBPyConnection, mode: str, expected: dict[tuple[str, str], str]) -> list[str]:
    """(model, compactor) pairs whose stored ok rows were made with another stamp."""
    if not expected:
        return []
    exp = pa.table({"model": [m for m, _ in expected], "compactor": [c for _, c in expected],  # noqa: F841
                    "stamp": list(expected.values())})
    rows = con.execute(
        """SELECT i.model, i.compactor, i.stamp, count(*) FROM compact_items i
           JOIN exp e ON e.model = i.model AND e.compactor = i.compactor
           WHERE i.mode = ? AND i.status = 'ok' AND i.stamp <> e.stamp GROUP BY ALL ORDER BY 1, 2""", [mode]
    ).fetchall()
    return [f"{m}/{c}: {n} stored rows made with settings {s}" for m, c, s, n in rows]


def delete_units(con: duckdb.DuckDBPyConnection, mode: str, pairs: list[tuple[str, str]],
                 case_ids: list[str]) -> int:
    """--fresh: forget these (model, compactor) pairs' rows for these cases."""
    sel = pa.table({"model": [m for m, _ in pairs], "compactor": [c for _, c in pairs]})  # noqa: F841
    cases = pa.table({"case_id": case_ids})  # noqa: F841
    n = 0
    for table in ("compact_items", "compact_steps"):
        n += single(con.execute(f"DELETE FROM {table} t WHERE mode = ? AND EXISTS (SELECT 1 FROM sel s WHERE "
                                "s.model = t.model AND s.compactor = t.compactor) AND t.case_id IN "
                                "(SELECT case_id FROM cases)", [mode]).fetchone())
    return int(n)


def done_item_counts(con: duckdb.DuckDBPyConnection, mode: str, pairs: list[tuple[str, str]],
                     case_ids: list[str], max_cycle: int) -> dict[tuple[str, str, str], int]:
    """Per (model, compactor, case_id): ok item rows in cycles 0..max_cycle."""
    sel = pa.table({"model": [m for m, _ in pairs], "compactor": [c for _, c in pairs]})  # noqa: F841
    cases = pa.table({"case_id": case_ids})  # noqa: F841
    rows = con.execute(
        """SELECT i.model, i.compactor, i.case_id, count(*) FROM compact_items i
           SEMI JOIN sel s ON s.model = i.model AND s.compactor = i.compactor
           SEMI JOIN cases c ON c.case_id = i.case_id
           WHERE i.mode = ? AND i.status = 'ok' AND i.cycle <= ? GROUP BY ALL""", [mode, max_cycle]).fetchall()
    return {(m, c, k): n for m, c, k, n in rows}


def stored_units(con: duckdb.DuckDBPyConnection, mode: str, units: list[tuple[str, str, str]], max_cycle: int
                 ) -> tuple[dict[tuple[str, str, str], dict[tuple[int, str], str]],
                            dict[tuple[str, str, str], set[tuple[int, str]]]]:
    """For the given (model, compactor, case_id) units: their ok steps {(cycle, step): output}
    and their ok item keys {(cycle, item_key)}."""
    if not units:
        return {}, {}
    sel = pa.table({"model": [u[0] for u in units], "compactor": [u[1] for u in units],  # noqa: F841
                    "case_id": [u[2] for u in units]})
    join = "SEMI JOIN sel s ON s.model = t.model AND s.compactor = t.compactor AND s.case_id = t.case_id"
    steps: dict[tuple[str, str, str], dict[tuple[int, str], str]] = {}
    for m, c, k, cyc, step, out in con.execute(
            f"SELECT t.model, t.compactor, t.case_id, t.cycle, t.step, t.output FROM compact_steps t {join} "
            "WHERE t.mode = ? AND t.status = 'ok' AND t.cycle <= ?", [mode, max_cycle]).fetchall():
        steps.setdefault((m, c, k), {})[(cyc, step)] = out
    items: dict[tuple[str, str, str], set[tuple[int, str]]] = {}
    for m, c, k, cyc, key in con.execute(
            f"SELECT t.model, t.compactor, t.case_id, t.cycle, t.item_key FROM compact_items t {join} "
            "WHERE t.mode = ? AND t.status = 'ok' AND t.cycle <= ?", [mode, max_cycle]).fetchall():
        items.setdefault((m, c, k), set()).add((cyc, key))
    return steps, items

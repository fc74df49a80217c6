"""The sweep's provenance tables (store/results/schema.sql, store/hierarchy/baselines.sql): runs, models, planned_items,
dataset_metrics, dataset_baselines.

Named functions with named columns, so the engine never depends on a table's column order.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, NamedTuple

import duckdb
import orjson

from benchmark.dataset import Dataset, MetricSpec


def _now() -> datetime:
    return datetime.now(UTC)


def start_run(con: duckdb.DuckDBPyConnection, run_id: str, *, command: str, engine_version: str,
              suite: str, suite_version: str) -> None:
    """A new row of `runs`, outcome 'running' until end_run."""
    con.execute("INSERT INTO runs (run_id, started_at, finished_at, command, engine_version, suite, suite_version, "
                "outcome) VALUES (?, ?, NULL, ?, ?, ?, ?, 'running')",
                [run_id, _now(), command, engine_version, suite, suite_version])


def end_run(con: duckdb.DuckDBPyConnection, run_id: str, outcome: str) -> None:
    con.execute("UPDATE runs SET finished_at = ?, outcome = ? WHERE run_id = ?", [_now(), outcome, run_id])


def close_stale_runs(con: duckdb.DuckDBPyConnection) -> int:
    """Runs left `running` by a killed process become `interrupted`.

    Called by a sweep that holds the database's write lock: no other process
    can be running on it, so every `running` row is stale.
    """
    n = con.execute("UPDATE runs SET outcome = 'interrupted' WHERE outcome = 'running'").fetchone()
    return int(n[0]) if n else 0


def record_model(con: duckdb.DuckDBPyConnection, name: str, *, provider: str, base_url: str | None,
                 model_id: str, metadata: dict[str, Any], generation: dict[str, Any], updated_at: datetime) -> None:
    """The model's identity and generation settings (replacing an earlier row of the same name)."""
    con.execute("INSERT OR REPLACE INTO models (name, provider, base_url, model_id, metadata, generation, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [name, provider, base_url, model_id, orjson.dumps(metadata).decode(),
                 orjson.dumps(generation).decode(), updated_at])


class ModelRow(NamedTuple):
    name: str
    provider: str
    base_url: str | None
    model_id: str
    metadata: dict[str, Any]
    generation: dict[str, Any]


def record_models(con: duckdb.DuckDBPyConnection, models: Iterable[ModelRow], updated_at: datetime) -> None:
    """record_model for many models in one statement."""
    _replace_many(con, "models (name, provider, base_url, model_id, metadata, generation, updated_at)", 1,
                  [(m.name, m.provider, m.base_url, m.model_id, orjson.dumps(m.metadata).decode(),
                    orjson.dumps(m.generation).decode(), updated_at) for m in models])


def record_planned(con: duckdb.DuckDBPyConnection, model: str, dataset: str, planned: int,
                   updated_at: datetime) -> None:
    """How many rows the sweep asks of (model, dataset): coverage counts the missing ones."""
    con.execute("INSERT OR REPLACE INTO planned_items (model, dataset, planned, updated_at) VALUES (?, ?, ?, ?)",
                [model, dataset, planned, updated_at])


def record_planned_many(con: duckdb.DuckDBPyConnection, planned: Iterable[tuple[str, str, int]],
                        updated_at: datetime) -> None:
    """record_planned for many (model, dataset, planned) at once: one statement (an INSERT OR REPLACE costs
    DuckDB ~2 ms whatever its size; 10 models x 5 datasets were 0.1 s of a sweep's start)."""
    _replace_many(con, "planned_items (model, dataset, planned, updated_at)", 2,
                  [(m, d, n, updated_at) for m, d, n in planned])


def _replace_many(con: duckdb.DuckDBPyConnection, table: str, key_len: int, rows: list[tuple[Any, ...]]) -> None:
    """INSERT OR REPLACE of many rows in one statement; a key given twice keeps its last row, as one
    statement per row did (DuckDB refuses a key twice within one statement)."""
    unique = list({r[:key_len]: r for r in rows}.values())
    if not unique:
        return
    marks = "(" + ", ".join("?" * len(unique[0])) + ")"
    con.execute(f"INSERT OR REPLACE INTO {table} VALUES " + ", ".join([marks] * len(unique)),
                [v for r in unique for v in r])


def record_metrics(con: duckdb.DuckDBPyConnection, dataset: str, metrics: Iterable[MetricSpec],
                   scorer_version: str) -> None:
    """How the views aggregate this dataset's rows (one `dataset_metrics` row per metric)."""
    _replace_many(con, "dataset_metrics (dataset, metric, kind, a, b, c, is_primary, scorer_version)", 2,
                  [(dataset, spec.name, spec.kind, spec.a, spec.b, spec.c, spec.primary, scorer_version)
                   for spec in metrics])


def record_datasets(con: duckdb.DuckDBPyConnection, datasets: Iterable[Dataset]) -> None:
    """How the datasets' item rows aggregate (dataset_metrics), as their adapters declare it now, and their
    declared baselines (dataset_baselines; None where an adapter declares none). One statement per table."""
    datasets = list(datasets)
    _replace_many(con, "dataset_metrics (dataset, metric, kind, a, b, c, is_primary, scorer_version)", 2,
                  [(ds.id, spec.name, spec.kind, spec.a, spec.b, spec.c, spec.primary, ds.scorer_version)
                   for ds in datasets for spec in ds.metrics])
    _replace_many(con, "dataset_baselines (dataset, chance, majority)", 1,
                  [(ds.id, ds.chance_baseline, ds.majority_baseline) for ds in datasets])


def record_baselines(con: duckdb.DuckDBPyConnection, dataset: str, *, chance: float | None,
                     majority: float | None) -> None:
    """The dataset's declared chance and majority baselines, on its primary metric's scale (store/hierarchy/baselines.sql)."""
    con.execute("INSERT OR REPLACE INTO dataset_baselines (dataset, chance, majority) VALUES (?, ?, ?)",
                [dataset, chance, majority])

"""A small real results file for the report's tests: suite `mini` (gate `vs` on dvs, `fo` on df1), any models."""

from __future__ import annotations

from pathlib import Path

import duckdb

from tests.store.test_views_support import flat_suite, items, load_toml, make_db, metric

SUITE = flat_suite({"vs": (None, ["dvs"]), "fo": (1.0, ["df1"])}, gate="vs", tau=10, name="mini")
DATASETS = ("dvs", "df1")


def mini_db(tmp_path: Path, models: dict[str, list[float | None]]) -> duckdb.DuckDBPyConnection:
    """tmp_path/results.duckdb with suite `mini` loaded and, per model, these item scores on both datasets;
    open, for the caller to add to and close."""
    con = make_db(tmp_path)
    load_toml(con, tmp_path, SUITE)
    for d in DATASETS:
        metric(con, d)
        for model, scores in models.items():
            items(con, model, d, scores)
    return con

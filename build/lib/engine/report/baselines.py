"""Chance baselines read back for the reports (the sweep stores them: store/results/runs.py:record_datasets)."""

from __future__ import annotations

import duckdb


def chance_by_dataset(con: duckdb.DuckDBPyConnection, suite: tuple[str, str]) -> dict[str, float]:
    """dataset -> chance baseline on the 0-100 scale of its score (store/hierarchy/baselines.sql), for `report` and the
    HTML report; empty for a file that predates the view."""
    try:
        got = con.execute("SELECT dataset, chance FROM suite_dataset_baselines WHERE suite = ? AND version = ? "
                          "AND chance IS NOT NULL", suite).fetchall()
    except duckdb.CatalogException:  # a read-only file older than the view whose shadow views failed
        return {}
    return dict(got)

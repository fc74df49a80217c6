"""Chance and majority baselines: read from the dataset adapters for the store, and back for the reports."""

from __future__ import annotations

import duckdb

from benchmark.dataset import Dataset


def declared_baselines(ds: Dataset) -> tuple[float | None, float | None]:
    """(chance, majority) on the dataset's primary metric scale; None where the adapter declares none
    (the contract's default, benchmark/dataset.py:DatasetBase)."""
    return ds.chance_baseline, ds.majority_baseline


def chance_by_dataset(con: duckdb.DuckDBPyConnection, suite: tuple[str, str]) -> dict[str, float]:
    """dataset -> chance baseline on the 0-100 scale of its score (store/baselines.sql), for `report` and the
    HTML report; empty for a file that predates the view."""
    try:
        got = con.execute("SELECT dataset, chance FROM suite_dataset_baselines WHERE suite = ? AND version = ? "
                          "AND chance IS NOT NULL", suite).fetchall()
    except duckdb.CatalogException:  # a read-only file older than the view whose shadow views failed
        return {}
    return dict(got)

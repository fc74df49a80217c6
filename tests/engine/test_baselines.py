"""The sweep stores each dataset's declared baselines (engine/report/baselines.py -> store/runs.py)."""

from __future__ import annotations

import pytest

from benchmark import registry
from benchmark.dataset import DatasetBase
from engine.report.baselines import declared_baselines
from engine.sweep.sweep import record_metrics
from store.views import ensure_views


def test_sweep_records_the_declared_baselines_of_real_adapters():
    import duckdb

    con = duckdb.connect()
    ensure_views(con)
    mnli, iri = registry.get("mnli"), registry.get("iri30")
    assert mnli is not None and iri is not None
    record_metrics(con, [mnli, iri])
    got = {r[0]: r[1:] for r in con.execute("SELECT dataset, chance, majority FROM dataset_baselines").fetchall()}
    assert got["mnli"] == pytest.approx((1 / 3, 113 / 300))  # benchmark/datasets/mnli.py
    assert got["iri30"] == (0.5, None)  # declares chance only


def test_an_adapter_without_baselines_declares_none():
    class Bare(DatasetBase):  # the contract's defaults only
        id = "bare"

    assert declared_baselines(Bare()) == (None, None)

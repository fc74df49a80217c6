"""Chance and majority baselines (store/hierarchy/baselines.sql): stored per dataset, put on the 0-100 scale of
the dataset's score by the suite's normalization, and subtracted in dataset_vs_baseline. Hand-computed."""

from __future__ import annotations

import duckdb
import pytest

from benchmark import registry
from benchmark.dataset import DatasetBase
from store.results import runs
from store.snapshot import open_for_reading
from store.hierarchy.views import ensure_views
from tests.store.test_views_support import flat_suite, items, load_toml, make_db, metric, one, scored

SUITE = flat_suite({"a": (None, ["acc", "lik", "mixed", "bare"])}, name="base", methods={
    "lik": '[{ metric = "lik", normalization = "numeric", min = 1, max = 5 }]',
    "mixed": '[{ metric = "acc", weight = 3 }, { metric = "f1" }]',
})


@pytest.fixture
def con(tmp_path):
    c = make_db(tmp_path)
    load_toml(c, tmp_path, SUITE)
    metric(c, "acc")
    metric(c, "lik", "lik", a="lik")
    metric(c, "mixed", "acc")
    metric(c, "mixed", "f1", a="f1", primary=False)
    metric(c, "bare")
    runs.record_baselines(c, "acc", chance=0.25, majority=0.3)
    runs.record_baselines(c, "lik", chance=2.0, majority=None)  # a Likert mean of 2 on 1..5
    runs.record_baselines(c, "mixed", chance=0.5, majority=0.5)
    yield c
    c.close()


def test_baselines_take_the_scale_of_the_dataset_score(con):
    got = {r[0]: r[1:] for r in con.execute("SELECT dataset, chance, majority FROM suite_dataset_baselines").fetchall()}
    assert got["acc"] == pytest.approx((25.0, 30.0))  # ratio: 100 * value
    assert got["lik"][0] == pytest.approx(100 * (2 - 1) / (5 - 1)) and got["lik"][1] is None  # numeric
    # a method on another metric (f1) has no declared baseline: no row rather than a wrong one
    assert "mixed" not in got and "bare" not in got


def test_dataset_vs_baseline_subtracts_chance(con):
    scored(con, "m", "acc", 62)
    items(con, "m", "lik", [0, 0], measures=[{"lik": 4}, {"lik": 5}])  # mean 4.5 -> 87.5
    scored(con, "m", "bare", 40)
    got = {r[0]: r[1:] for r in con.execute(
        "SELECT dataset, score, chance, above_chance, above_majority FROM dataset_vs_baseline WHERE model = 'm'").fetchall()}
    assert got["acc"] == pytest.approx((62.0, 25.0, 37.0, 32.0))
    assert got["lik"][:3] == pytest.approx((87.5, 25.0, 62.5)) and got["lik"][3] is None
    assert got["bare"] == (pytest.approx(40.0), None, None, None)  # every score is listed, baseline or not


def test_recording_again_replaces_the_row(con):
    runs.record_baselines(con, "acc", chance=None, majority=0.4)
    assert one(con, "SELECT chance, majority FROM dataset_baselines WHERE dataset = 'acc'") == (None, 0.4)
    assert one(con, "SELECT chance FROM suite_dataset_baselines WHERE dataset = 'acc'") is None


def test_a_file_made_before_the_baselines_still_reads(tmp_path, con):
    scored(con, "m", "acc", 62)
    con.execute("DROP VIEW dataset_vs_baseline")
    con.execute("DROP VIEW suite_dataset_baselines")
    con.execute("DROP TABLE dataset_baselines")
    con.close()
    ro, note = open_for_reading(tmp_path / "results.duckdb")
    assert note is None
    # this version's views shadow the file's, over an empty temporary baselines table
    assert one(ro, "SELECT score, chance FROM dataset_vs_baseline WHERE dataset = 'acc'") == (pytest.approx(62), None)
    ro.close()


def test_the_declared_baselines_of_real_adapters_are_stored():
    con = duckdb.connect()
    ensure_views(con)
    mnli, iri = registry.get("mnli"), registry.get("iri30")
    assert mnli is not None and iri is not None
    runs.record_datasets(con, [mnli, iri])
    got = {r[0]: r[1:] for r in con.execute("SELECT dataset, chance, majority FROM dataset_baselines").fetchall()}
    assert got["mnli"] == pytest.approx((1 / 3, 113 / 300))  # benchmark/datasets/mnli.py
    assert got["iri30"] == (0.5, None)  # declares chance only


def test_an_adapter_without_baselines_declares_none():
    class Bare(DatasetBase):  # the contract's defaults only
        id = "bare"

    assert (Bare().chance_baseline, Bare().majority_baseline) == (None, None)

"""`python -m engine compare`: the paired comparison of two models (its tests: tests/store/test_stats_paired.py)."""

from __future__ import annotations

import json
import math

import pytest

from engine.cli import main
from engine.report.compare import compare_models
from store.stats.paired import mcnemar_exact
from tests.store.test_views_support import flat_suite, items, load_toml, make_db, metric

@pytest.fixture
def db(tmp_path):
    con = make_db(tmp_path)
    load_toml(con, tmp_path, flat_suite({"g": (None, ["gd"]), "a": (1, ["d1", "d2"]), "b": (2, ["d3"])},
                                        gate="g", tau=50))
    for d in ("gd", "d1", "d2", "d3"):
        metric(con, d)
    a1 = [1.0] * 25 + [0.0] * 15
    b1 = [1.0] * 15 + [0.0] * 10 + [1.0] * 3 + [0.0] * 12  # vs a1: 10 items only A right, 3 only B right
    items(con, "A", "d1", a1)
    items(con, "B", "d1", b1)
    for m, k, s in (("A", 8, 0.8), ("B", 6, 0.6)):  # k of 10 right
        items(con, m, "gd", ([1.0] * k + [0.0] * (10 - k)) * 2)
        items(con, m, "d2", ([1.0] * k + [0.0] * (10 - k)) * 3)
        items(con, m, "d3", [s] * 10)  # not 0/1: the bootstrap, not McNemar
    # an item only A answered (B's row is an error): left out of the comparison
    con.execute("INSERT INTO results (model, dataset, item_id, sample, status, attempts, score, prediction) "
                "VALUES ('A', 'd1', 'x', 0, 'ok', 1, 1.0, '\"A\"'), ('B', 'd1', 'x', 0, 'error', 1, NULL, NULL)")
    con.close()
    return tmp_path / "results.duckdb"


def test_model_against_itself_is_zero_with_p_one(db, capsys):
    assert main(["compare", str(db), "A", "A", "--json", "--replicates", "300"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"overall", "a", "b", "g", "a_s", "a_t", "d1", "d2", "d3", "gd"} <= set(out)
    for key, r in out.items():
        assert r["diff"] == 0 and r["ci_low"] == 0 and r["ci_high"] == 0 and r["p"] == 1, key
    assert out["d1"]["n"] == 41  # its own answered items, "x" included


def test_paired_differences_mcnemar_and_common_items(db):
    import duckdb

    con = duckdb.connect(str(db))
    rows = {r.node: r for r in compare_models(con, ("flat", "1"), "A", "B", replicates=500)}
    d1 = rows["d1"]
    assert d1.n == 40  # "x" was answered by A only
    assert d1.test == "mcnemar" and d1.p == pytest.approx(mcnemar_exact(10, 3))
    assert d1.diff == pytest.approx(100 * (25 - 18) / 40)
    assert rows["d3"].test == "bootstrap" and rows["d3"].diff == pytest.approx(20)
    assert (rows["d3"].ci_low, rows["d3"].ci_high) == pytest.approx((20, 20))  # constant item scores: no spread
    assert rows["d2"].ci_low < rows["d2"].diff < rows["d2"].ci_high
    # overall = (1 * a + 2 * b) / 3 with a = mean(d1, d2): both ranked (gate 80 and 60 >= 50)
    a_diff = (d1.diff + rows["d2"].diff) / 2
    assert rows["overall"].diff == pytest.approx((a_diff + 2 * 20) / 3)
    assert rows["overall"].n == 40 + 30 + 10 + 20
    # B's gate (12 of 20) falls under 50 in some replicates: B vetoed there, the difference jumps
    assert rows["overall"].ci_low < rows["overall"].diff < rows["overall"].ci_high
    assert not math.isnan(rows["overall"].p)


def test_verdict_and_unknown_model(db, capsys):
    assert main(["compare", str(db), "A", "B", "--replicates", "300"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1].startswith("verdict: A is better than B overall (+")
    assert main(["compare", str(db), "A", "nobody"]) == 2
    assert "model 'nobody' has no results" in capsys.readouterr().err


def test_imported_dataset_has_no_p(db):
    import duckdb

    con = duckdb.connect(str(db))
    con.execute("INSERT INTO external_scores VALUES ('flat', 'A', 'd3', 90.0, true, 'test', NULL)")
    rows = {r.node: r for r in compare_models(con, ("flat", "1"), "A", "B", replicates=200)}
    d3 = rows["d3"]
    assert d3.test == "imported" and d3.p is None and d3.diff == pytest.approx(90 - 60)
    assert (d3.ci_low, d3.ci_high) == pytest.approx((30, 30))  # a constant: no items to resample

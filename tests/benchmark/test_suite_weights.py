"""Each dataset's weight in the overall (benchmark/suites/weights.py): by hand, and against the views."""

from __future__ import annotations

import numpy as np
import pytest

from benchmark.suites.suite import load_suite, parse_suite
from benchmark.suites.weights import dataset_weights
from tests.store.test_views_support import flat_suite, load_toml, make_db, metric, scored

def task(tid: str, level: str, datasets: list) -> dict:
    return {"id": tid, "level": level, "datasets": datasets}


# Ability a (weight 3): an L task (d1, d2 at weight 3) and an M task; ability b: one H task; g is the gate.
TWO_LEVELS = parse_suite({
    "suite": {"name": "w"}, "scoring": {"gate": "g", "tau": 50},
    "ability": [
        {"id": "a", "weight": 3, "sub_ability": [{"id": "s", "task": [
            task("t1", "L", ["d1", {"id": "d2", "weight": 3}]), task("t2", "M", ["d3"])]}]},
        {"id": "b", "sub_ability": [{"id": "sb", "task": [task("tb", "H", ["d4"])]}]},
        {"id": "g", "sub_ability": [{"id": "sg", "task": [task("tg", "L", ["dg"])]}]},
    ],
    "datasets": {d: d for d in ("d1", "d2", "d3", "d4", "dg")},
})


def test_hand_computed_weights_with_the_gate_at_zero():
    w = dataset_weights(TWO_LEVELS)
    # a: 3/4 of the total; within it L 0.4 and M 0.6 (the "LM" row); d1:d2 = 1:3 inside t1
    assert w == pytest.approx({"d1": 0.75 * 0.4 / 4, "d2": 0.75 * 0.4 * 3 / 4, "d3": 0.75 * 0.6, "d4": 0.25,
                               "dg": 0.0})
    assert sum(w.values()) == pytest.approx(1)
    # d3 missing: the "L" row alone, and t1 carries all of ability a
    assert dataset_weights(TWO_LEVELS, present={"d1", "d2", "d4"}) == pytest.approx(
        {"d1": 0.75 / 4, "d2": 0.75 * 3 / 4, "d3": 0.0, "d4": 0.25, "dg": 0.0})


@pytest.mark.parametrize("suite_name", ["moodbench", "moodbench-reference"])
def test_the_leaderboards_raw_total_is_the_weighted_sum(tmp_path, suite_name):
    """The shipped suites, every dataset scored (and a few left out): raw_total = sum w_d x score_d."""
    suite = load_suite(suite_name)
    con = make_db(tmp_path)
    try:
        from store.hierarchy.suite_tables import load_suite_tables

        load_suite_tables(con, suite)
        rng = np.random.default_rng(1)
        scores = {d: float(rng.integers(0, 101)) for d in suite.datasets}
        left_out = set(list(suite.datasets)[::7])
        for d in suite.datasets:
            metric(con, d)
            scored(con, "all", d, scores[d])
            if d not in left_out:
                scored(con, "some", d, scores[d])
        got = dict(con.execute("SELECT model, raw_total FROM leaderboard WHERE suite = ?", [suite.name]).fetchall())
        # datasets whose methods name a metric other than accuracy have no score here: absent
        shown = con.execute("SELECT model, dataset, score FROM dataset_scores WHERE suite = ? AND score IS NOT NULL",
                            [suite.name]).fetchall()
        for model in ("all", "some"):
            ds = {d: s for m, d, s in shown if m == model}
            w = dataset_weights(suite, set(ds))
            assert got[model] == pytest.approx(sum(w[d] * ds[d] for d in ds), abs=1e-9)
    finally:
        con.close()


def test_flat_suite_weights_are_the_ability_weights(tmp_path):
    con = make_db(tmp_path)
    try:
        suite = load_toml(con, tmp_path, flat_suite({"f": (0.3, ["df"]), "e": (0.7, ["de"])}))
        assert dataset_weights(suite) == pytest.approx({"df": 0.3, "de": 0.7})
    finally:
        con.close()

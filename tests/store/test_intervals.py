"""Bootstrap intervals (store/hierarchy/bootstrap.py): point estimates, pairing, widths, the veto, ranks."""

from __future__ import annotations

import math
import os
import random
import tomllib

import duckdb
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from benchmark.suites.suite import parse_suite
from store.hierarchy.bootstrap import build_replicates, compute_intervals, drop_replicates, refresh_intervals, resample_counts
from tests.store.test_views_property import close, data_for, externals, load, suites
from tests.store.test_views_property import con as prop_con  # noqa: F401 (a fixture)
from tests.store.test_views_support import flat_suite, items, load_toml, make_db, metric, one


@pytest.fixture
def con(tmp_path):
    c = make_db(tmp_path)
    yield c
    c.close()


def _bits(n: int, k: int, shuffle: int | None = None) -> list[float]:
    """n item scores with k ones, spread evenly, or in an order shuffled by a seed (deterministic)."""
    out = [1.0 if (i * k) // n != ((i + 1) * k) // n else 0.0 for i in range(n)]
    if shuffle is not None:
        random.Random(shuffle).shuffle(out)
    return out


# ------------------------------------------------- point estimate = the views

LAYERS = {
    "dataset_scores": "dataset", "task_scores": "task", "sub_ability_scores": "sub_ability",
    "ability_scores": "ability",
}


def _assert_point_replicate_equals_views(con) -> None:
    for view, key in LAYERS.items():
        want = {r[:2]: r[2] for r in con.execute(f"SELECT model, {key}, score FROM {view}").fetchall()}
        got = {r[:2]: r[2] for r in con.execute(
            f"SELECT name, {key}, score FROM boot_{view} JOIN boot_models USING (model) WHERE replicate = -1"
        ).fetchall()}
        assert set(got) == set(want), view
        for k, v in want.items():
            assert close(got[k], v), (view, k, got[k], v)
    want = {r[0]: r[1:] for r in con.execute("SELECT model, total, raw_total, vetoed FROM leaderboard").fetchall()}
    got = {r[0]: r[1:] for r in con.execute(
        "SELECT name, total, raw_total, vetoed FROM boot_leaderboard JOIN boot_models USING (model) "
        "WHERE replicate = -1").fetchall()}
    assert set(got) == set(want)
    for m, (total, raw, vetoed) in want.items():
        assert close(got[m][0], total) and close(got[m][1], raw) and got[m][2] == vetoed, m


@settings(max_examples=int(os.environ.get("BOOTSTRAP_PROPERTY_EXAMPLES", "8")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=suites(), data=data_for, ext=externals)
@pytest.mark.slow
def test_identity_replicate_equals_the_views_on_random_hierarchies(prop_con, text, data, ext):  # noqa: F811
    """Replicate -1 (every item once) goes through the replicate path; it must give the views' numbers."""
    suite = parse_suite(tomllib.loads(text), "rand.toml")
    load(prop_con, suite, {k: v for k, v in data.items() if v}, ext)
    build_replicates(prop_con, replicates=2, seed=0)
    try:
        _assert_point_replicate_equals_views(prop_con)
    finally:
        drop_replicates(prop_con)


def test_intervals_view_scores_are_the_views(con, tmp_path):
    load_toml(con, tmp_path, flat_suite({"a": (1, ["d1", "d2"]), "b": (1, ["d3"])}))
    for d in ("d1", "d2", "d3"):
        metric(con, d)
    for m, k in (("m1", 30), ("m2", 45)):
        for d in ("d1", "d2", "d3"):
            items(con, m, d, _bits(60, k + len(d)), errors=2)
    compute_intervals(con, replicates=200)
    rows = con.execute("SELECT level, node, model, score, ci_low, ci_high FROM intervals").fetchall()
    assert {r[0] for r in rows} == {"dataset", "task", "sub_ability", "ability", "overall"}
    for level, node, model, score, lo, hi in rows:
        view, key, col = {"dataset": ("dataset_scores", "dataset", "score"), "task": ("task_scores", "task", "score"),
                          "sub_ability": ("sub_ability_scores", "sub_ability", "score"),
                          "ability": ("ability_scores", "ability", "score"),
                          "overall": ("leaderboard", "'overall'", "raw_total")}[level]
        assert score == one(con, f"SELECT {col} FROM {view} WHERE model = ? AND {key} = ?", model, node)
        assert lo <= score <= hi


# ------------------------------------------------------------------- pairing

def test_resample_counts_are_seeded_and_complete():
    c = resample_counts(7, "d", "md5", 50, 100)
    assert c.shape == (100, 50) and (c.sum(axis=1) == 50).all()
    assert (c == resample_counts(7, "d", "md5", 50, 100)).all()
    assert not (c == resample_counts(8, "d", "md5", 50, 100)).all()
    assert not (c == resample_counts(7, "e", "md5", 50, 100)).all()
    assert abs(c.mean() - 1) < 1e-12 and 0.8 < c.var() < 1.2  # multinomial(n, 1/n): variance ~ 1


def test_replicates_are_paired_across_models(con, tmp_path):
    """Two models with the same item scores get the same score in every replicate; the draws are by item."""
    load_toml(con, tmp_path, flat_suite({"a": (1, ["d1"])}))
    metric(con, "d1")
    items(con, "m1", "d1", _bits(40, 25))
    items(con, "m2", "d1", _bits(40, 25))
    items(con, "m3", "d1", [1 - x for x in _bits(40, 25)])  # the complement: m1 + m3 = 100 in each replicate
    build_replicates(con, replicates=300, seed=3)
    s = {m: np.array([r[0] for r in con.execute(
        "SELECT score FROM boot_dataset_scores JOIN boot_models USING (model) WHERE name = ? AND replicate >= 0 "
        "ORDER BY replicate", [m]
    ).fetchall()]) for m in ("m1", "m2", "m3")}
    assert (s["m1"] == s["m2"]).all() and s["m1"].std() > 1
    assert np.allclose(s["m1"] + s["m3"], 100)


# --------------------------------------------------------------------- width

def test_accuracy_interval_width_is_near_the_binomial_one(con, tmp_path):
    load_toml(con, tmp_path, flat_suite({"a": (1, ["d1"])}))
    metric(con, "d1")
    n, p = 300, 0.7
    items(con, "m", "d1", _bits(n, int(p * n)))
    compute_intervals(con, replicates=2000, seed=1)
    lo, hi = con.execute("SELECT ci_low, ci_high FROM intervals WHERE level = 'dataset'").fetchone()
    binomial = 2 * 1.96 * math.sqrt(p * (1 - p) / n) * 100
    assert abs((hi - lo) - binomial) / binomial < 0.2, (hi - lo, binomial)


# ------------------------------------------------------------ veto and ranks

def test_veto_probability_on_a_hand_made_case(con, tmp_path):
    """Gate dataset of 2 items (1, 0): replicate means 0, 0.5, 1 with chance 1/4, 1/2, 1/4; tau 60
    vetoes the first two, so p_veto = 3/4."""
    load_toml(con, tmp_path, flat_suite({"g": (None, ["gd"]), "a": (1, ["d1"])}, gate="g", tau=60))
    metric(con, "gd")
    metric(con, "d1")
    items(con, "m", "gd", [1.0, 0.0])
    items(con, "m", "d1", _bits(50, 40))
    compute_intervals(con, replicates=4000, seed=2)
    p_veto, vetoed = con.execute("SELECT p_veto, vetoed FROM leaderboard").fetchone()
    assert vetoed and abs(p_veto - 0.75) < 0.03


@pytest.mark.slow
def test_rank_ranges(con, tmp_path):
    load_toml(con, tmp_path, flat_suite({"a": (1, ["d1"])}))
    metric(con, "d1")
    for i, (m, k) in enumerate((("far_top", 270), ("close_a", 150), ("close_b", 156), ("far_low", 30))):
        items(con, m, "d1", _bits(300, k, shuffle=i))  # independent orders: close_a and close_b swap places
    compute_intervals(con, replicates=500)
    got = {r[0]: r[1:] for r in con.execute("SELECT model, rank, rank_low, rank_high FROM leaderboard").fetchall()}
    assert got["far_top"] == (1, 1, 1) and got["far_low"] == (4, 4, 4)
    assert got["close_b"] == (2, 2, 3) and got["close_a"] == (3, 2, 3)  # 50 % vs 52 % of 300: not a claim


# ------------------------------------------------- imported and recomputation

def test_imported_score_is_a_constant(con, tmp_path):
    load_toml(con, tmp_path, flat_suite({"a": (1, ["d1", "d2"])}))
    metric(con, "d1")
    items(con, "m", "d1", _bits(100, 50))
    con.execute("INSERT INTO external_scores VALUES ('flat', 'm', 'd2', 80.0, false, 'test', NULL)")
    compute_intervals(con, replicates=300)
    assert con.execute("SELECT score, ci_low, ci_high, source FROM intervals WHERE node = 'd2'").fetchone() == (
        80.0, 80.0, 80.0, "external")
    lo, hi = con.execute("SELECT ci_low, ci_high FROM intervals WHERE node = 'd1'").fetchone()
    task = con.execute("SELECT score, ci_low, ci_high FROM intervals WHERE level = 'task'").fetchone()
    assert task[1] == pytest.approx((lo + 80) / 2) and task[2] == pytest.approx((hi + 80) / 2)


def test_recomputes_only_when_the_inputs_change(con, tmp_path):
    load_toml(con, tmp_path, flat_suite({"a": (1, ["d1"])}))
    metric(con, "d1")
    items(con, "m", "d1", _bits(30, 10))
    assert compute_intervals(con, replicates=100).recomputed
    assert not compute_intervals(con, replicates=100).recomputed
    assert compute_intervals(con, replicates=200).recomputed  # another B
    items(con, "m", "d1", [1.0], start=100)
    assert compute_intervals(con, replicates=200).recomputed
    con.execute("UPDATE suite_abilities SET weight = 2")
    assert compute_intervals(con, replicates=200).recomputed


def test_the_fingerprint_is_the_one_files_already_store(con, tmp_path):
    """One statement for every input table, hashing as the former query per table did: a file's stored
    fingerprint still matches, so its bounds are not recomputed for nothing."""
    import hashlib

    from store.hierarchy.bootstrap import ALGORITHM, _INPUTS, fingerprint

    load_toml(con, tmp_path, flat_suite({"a": (1, ["d1"])}))
    metric(con, "d1")
    items(con, "m", "d1", _bits(30, 10))
    parts = [ALGORITHM, "100", "3"]
    for table, cols in _INPUTS:
        row = con.execute(f"SELECT count(*), coalesce(sum(hash({'t' if cols == '*' else cols})), 0) "
                          f"FROM {table} t").fetchone()
        parts.append(f"{table}:{row}")
    assert fingerprint(con, 100, 3) == hashlib.sha256("\n".join(parts).encode()).hexdigest()
    assert fingerprint(con, 100, 3) != fingerprint(con, 100, 4)


def test_the_same_suite_loaded_again_keeps_the_bounds_without_a_recomputation(con, tmp_path):
    """A rerun reloads the suite (its loaded_at moves, so the views' signature does): the inputs are the
    same, so the stored bounds are shown again without the bootstrap, and are what it would give."""
    suite = flat_suite({"a": (1, ["d1"])})
    load_toml(con, tmp_path, suite)
    metric(con, "d1")
    items(con, "m", "d1", _bits(30, 10))
    compute_intervals(con, replicates=100)
    bounds = "SELECT ci_low, ci_high, rank_low, rank_high FROM leaderboard"
    want = con.execute(bounds).fetchall()
    con.execute("UPDATE suites SET loaded_at = loaded_at + INTERVAL 1 SECOND")  # what a reload changes
    assert con.execute("SELECT ci_low FROM leaderboard").fetchall() == [(None,)]
    assert not compute_intervals(con, replicates=100).recomputed
    assert con.execute(bounds).fetchall() == want
    assert compute_intervals(con, replicates=100, force=True).recomputed
    assert con.execute(bounds).fetchall() == want


def test_views_hide_bounds_of_older_results(con, tmp_path):
    """New rows (a sweep running) make the stored bounds stale: the views show none until recomputed."""
    load_toml(con, tmp_path, flat_suite({"a": (1, ["d1"])}))
    metric(con, "d1")
    items(con, "m", "d1", _bits(30, 10))
    compute_intervals(con, replicates=100)
    fresh = "SELECT (SELECT ci_low FROM leaderboard), (SELECT ci_low FROM intervals WHERE level = 'dataset')"
    assert None not in con.execute(fresh).fetchone()
    items(con, "m", "d1", [1.0], start=100)
    assert con.execute(fresh).fetchone() == (None, None)
    compute_intervals(con, replicates=100)
    assert None not in con.execute(fresh).fetchone()


def test_a_changed_suite_parameter_hides_old_bounds_until_refreshed(con, tmp_path):
    """The veto threshold lowered in the database (weights and tau are data): the stored P(veto) was
    the old threshold's, shown as if fresh; now none is shown until recomputed, then the new one."""
    load_toml(con, tmp_path, flat_suite({"g": (None, ["gd"]), "a": (1, ["d1"])}, gate="g", tau=60))
    metric(con, "gd")
    metric(con, "d1")
    items(con, "m", "gd", _bits(20, 11))  # 55 %: vetoed at 60, not at 45
    items(con, "m", "d1", _bits(50, 40))
    compute_intervals(con, replicates=400, seed=1)
    veto = "SELECT p_veto, rank_low FROM leaderboard"
    assert con.execute(veto).fetchone()[0] > 0.5
    con.execute("UPDATE suites SET tau = 45")
    assert con.execute(veto).fetchone() == (None, None)
    assert con.execute("SELECT count(ci_low) FROM intervals").fetchone() == (0,)
    run = refresh_intervals(con)
    assert run.recomputed and run.replicates == 400  # the stored settings kept
    assert con.execute(veto).fetchone()[0] < 0.2


def test_refresh_intervals_stores_bounds_a_plain_duckdb_reader_sees(con, tmp_path):
    load_toml(con, tmp_path, flat_suite({"a": (1, ["d1"])}))
    metric(con, "d1")
    items(con, "m", "d1", _bits(30, 10))
    assert refresh_intervals(con).replicates == 1000  # none stored: the default
    con.close()
    reader = duckdb.connect(str(tmp_path / "results.duckdb"), read_only=True)
    try:
        assert reader.execute("SELECT count(*), count(ci_low) FROM intervals").fetchone() == (5, 5)
    finally:
        reader.close()


# ------------------------------------------------- replicates that draw alike

def _tiny_run(con, tmp_path) -> None:
    """Datasets of one and two items (a `--limit 1` or 2 run): few distinct replicates, a veto in some."""
    load_toml(con, tmp_path, flat_suite({"g": (None, ["gd"]), "a": (2, ["d1", "d2", "d3"]), "b": (1, ["d4"])},
                                        gate="g", tau=60))
    for d in ("gd", "d1", "d2", "d3", "d4"):
        metric(con, d)
    for i, m in enumerate(("m1", "m2", "m3", "m4")):
        items(con, m, "gd", [[1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 1.0]][i])
        items(con, m, "d1", [[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]][i])
        items(con, m, "d2", [float(i % 2)])
        items(con, m, "d3", [float(i > 1)])
        items(con, m, "d4", [float(i < 3)])


def test_distinct_replicates_are_found_by_their_bytes_and_given_up_past_a_quarter():
    from store.hierarchy.bootstrap import _distinct_replicates

    rng = np.random.default_rng(1)
    alike = rng.random((7, 30))
    picks = rng.integers(0, 7, 400)
    scores = np.vstack([rng.random((1, 30)), alike[picks]])  # row 0: the point estimate
    kept, source = _distinct_replicates(scores)
    assert source is not None and (scores[source] == scores).all() and (source[kept] == kept).all()
    assert len(kept) == 1 + len(set(picks)) and list(kept) == sorted(kept) and source[0] == 0
    every, none = _distinct_replicates(rng.random((401, 30)))  # all distinct: every row computed
    assert none is None and list(every) == list(range(401))
    scores[1, 3] = -0.0 if scores[1, 3] == 0.0 else scores[1, 3] + 1e-12  # one bit apart: not alike
    assert len(_distinct_replicates(scores)[0]) == len(kept) + (picks[1:] == picks[0]).any()


def test_replicates_that_draw_alike_give_the_bounds_of_every_replicate_computed(con, tmp_path, monkeypatch):
    """The hierarchy runs once per distinct replicate (store/hierarchy/bootstrap.py: _distinct_replicates);
    every replicate's rows, the bounds, rank ranges and P(veto) are those of computing each replicate."""
    import store.hierarchy.bootstrap as bootstrap

    _tiny_run(con, tmp_path)
    con.execute("SET threads = 1")  # parallel float sums vary in the last bits from run to run
    kept = []
    distinct = bootstrap._distinct_replicates
    monkeypatch.setattr(bootstrap, "_distinct_replicates", lambda s: kept.append(distinct(s)) or kept[-1])
    layers = ("dataset_scores", "task_scores", "sub_ability_scores", "ability_scores", "leaderboard")

    def every_row() -> list:
        build_replicates(con, replicates=400, seed=5)
        try:
            return [con.execute(f"SELECT * FROM boot_{t} ORDER BY ALL").fetchall() for t in layers]
        finally:
            drop_replicates(con)

    rows = every_row()
    compute_intervals(con, replicates=400, seed=5)
    bounds = con.execute("SELECT * FROM interval_bounds ORDER BY ALL").fetchall()
    assert kept[0][1] is not None and len(kept[0][0]) <= 10  # 3 x 3 draws of the two-item datasets, + point
    assert len(rows[0]) == 401 * 4 * 5 and len(rows[-1]) == 401 * 4
    monkeypatch.setattr(bootstrap, "_distinct_replicates", lambda s: (np.arange(s.shape[0]), None))
    assert every_row() == rows
    compute_intervals(con, replicates=400, seed=5, force=True)
    assert con.execute("SELECT * FROM interval_bounds ORDER BY ALL").fetchall() == bounds
    p_veto = dict(con.execute("SELECT model, p_veto FROM interval_bounds WHERE level = 'overall'").fetchall())
    assert p_veto["m2"] == 0 and 0.6 < p_veto["m1"] < 0.9  # gate items (1, 0): vetoed unless both draws hit 1
    assert con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name LIKE 'boot%'").fetchone() == (0,)


# ------------------------------------------------------------------- judged

JUDGED_SUITE = """
[suite]
name = "j"
version = "1"
[scoring]
[[ability]]
id = "a"
[[ability.sub_ability]]
id = "s"
[[ability.sub_ability.task]]
id = "t"
level = "L"
datasets = ["d1"]
[datasets]
d1 = { methods = [{ metric = "judge_score", normalization = "numeric", min = 1, max = 5 }] }
"""


def test_judged_dataset_resamples_the_judge_scores(con, tmp_path):
    """A judge metric is bootstrapped over its per-item judge scores, with the same item draws."""
    load_toml(con, tmp_path, JUDGED_SUITE)
    metric(con, "d1")
    con.execute("INSERT INTO judge_metrics VALUES ('d1', 'judge_score', 'mean', 'score', 'r1', 'J')")
    for m, shift in (("m1", 0), ("m2", 1)):
        items(con, m, "d1", [1.0] * 40)
        con.executemany(
            "INSERT INTO judgements (model, dataset, item_id, sample, judge, rubric, answer_md5, status, score, "
            "attempts) VALUES (?, 'd1', ?, 0, 'J', 'r1', md5(''), 'ok', ?, 1)",
            [(m, f"i{i}", min(5, 1 + (i % 4) + shift)) for i in range(40)])
    build_replicates(con, replicates=300, seed=0)
    try:
        _assert_point_replicate_equals_views(con)
        s = {m: np.array([r[0] for r in con.execute(
            "SELECT score FROM boot_dataset_scores JOIN boot_models USING (model) WHERE name = ? AND replicate >= 0 "
        "ORDER BY replicate", [m]
        ).fetchall()]) for m in ("m1", "m2")}
    finally:
        drop_replicates(con)
    assert s["m1"].std() > 1  # the judge scores vary, so do the replicates
    # paired: m2 = m1 + 1 point per item except where capped at 5 (i % 4 == 3), on the same draws
    assert (s["m2"] > s["m1"]).all()
    compute_intervals(con, replicates=300)
    score, lo, hi = con.execute("SELECT score, ci_low, ci_high FROM intervals WHERE model = 'm1' "
                                "AND level = 'dataset'").fetchone()
    assert score == pytest.approx(100 * (2.5 - 1) / 4) and lo < score < hi

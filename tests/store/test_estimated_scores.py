"""Estimates in the hierarchy (store/hierarchy/views.sql, store/hierarchy/bootstrap.py): the flag, the score, the intervals.

The estimates are written by hand (with the signature of the rows as they are), so every number
here follows from the test's own inputs, whatever the estimator (store/stats/estimator.py) computes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from store.hierarchy.bootstrap import compute_intervals
from store.stats.draws import Z95, estimate_draws
from tests.store.test_views_support import flat_suite, items, load_toml, make_db, metric, one

# gate vs on dvs (tau 10), fo on df1 and df2 (weight 1 each)
SUITE = flat_suite({"vs": (None, ["dvs"]), "fo": (1.0, ["df1", "df2"])}, gate="vs", tau=10, name="est")
SUITE_KEY = ("est", "1")


def _bits(n: int, k: int) -> list[float]:
    """n item scores, k of them 1, spread evenly."""
    return [1.0 if (i * k) // n != ((i + 1) * k) // n else 0.0 for i in range(n)]


def estimate(con, model: str, dataset: str, value: float, lo: float, hi: float, n: int = 4, n_total: int = 40):
    """An estimate as `estimate` stores it, fresh for the rows as they are now."""
    con.execute("INSERT OR REPLACE INTO estimates VALUES (?, ?, ?, ?, ?, ?, ?, 'model-assisted', "
                "estimate_signature(), now())", [model, dataset, value, lo, hi, n, n_total])


def partial_db(tmp_path):
    """tmp_path/results.duckdb, suite `est`: `full` answered all 40 items of each dataset (30 right); `new` the
    first 4 of df1 (3 right), all of dvs and df2 (20 right)."""
    c = make_db(tmp_path)
    load_toml(c, tmp_path, SUITE)
    for d in ("dvs", "df1", "df2"):
        metric(c, d)
        items(c, "full", d, _bits(40, 30))
        items(c, "new", d, _bits(4, 3) if d == "df1" else _bits(40, 20))
    return c


@pytest.fixture
def con(tmp_path):
    c = partial_db(tmp_path)
    yield c
    c.close()


def _row(con, view: str, key: str, node: str, model: str = "new"):
    return con.execute(f"SELECT score, estimated FROM {view} WHERE model = ? AND {key} = ?", [model, node]).fetchone()


def test_without_estimates_nothing_is_estimated(con):
    assert con.execute("SELECT count(*) FROM dataset_scores WHERE estimated OR source = 'estimate'").fetchone() == (0,)
    assert _row(con, "dataset_scores", "dataset", "df1") == (pytest.approx(75.0), False)
    assert con.execute("SELECT bool_or(estimated) FROM leaderboard").fetchone() == (False,)


def test_an_estimate_is_the_dataset_score_and_its_flag_goes_up_to_the_leaderboard(con):
    estimate(con, "new", "df1", 62.0, 55.0, 70.0)
    score, cov, source, items_score, est = con.execute(
        "SELECT score, coverage, source, items_score, estimated FROM dataset_scores "
        "WHERE model = 'new' AND dataset = 'df1'").fetchone()
    # the estimate, not the answered mean (75); coverage still says 4 of 4 stored rows were answered
    assert (score, source, items_score, est) == (pytest.approx(62.0), "estimate", pytest.approx(75.0), True)
    assert cov == pytest.approx(1.0)
    assert _row(con, "task_scores", "task", "fo_t") == (pytest.approx((62 + 50) / 2), True)
    assert _row(con, "sub_ability_scores", "sub_ability", "fo_s") == (pytest.approx(56.0), True)
    assert _row(con, "ability_scores", "ability", "fo") == (pytest.approx(56.0), True)
    assert _row(con, "ability_scores", "ability", "vs") == (pytest.approx(50.0), False)
    assert con.execute("SELECT raw_total, total, estimated FROM leaderboard WHERE model = 'new'").fetchone() == (
        pytest.approx(56.0), pytest.approx(56.0), True)
    assert con.execute("SELECT estimated FROM leaderboard WHERE model = 'full'").fetchone() == (False,)
    assert con.execute("SELECT count(*) FROM intervals WHERE estimated AND model = 'new'").fetchone() == (5,)


def test_a_stale_estimate_is_not_used(con):
    estimate(con, "new", "df1", 62.0, 55.0, 70.0)
    items(con, "new", "df1", [0.0], start=4)  # a fifth answer: the estimate no longer holds for the rows
    assert _row(con, "dataset_scores", "dataset", "df1") == (pytest.approx(60.0), False)


def test_an_estimate_stands_only_for_a_mean_of_the_item_score(tmp_path):
    con = make_db(tmp_path)
    load_toml(con, tmp_path, flat_suite({"fo": (1.0, ["dm", "dr"])}, name="m",
                                        methods={"dr": '[{ metric = "accuracy", normalization = "raw" }]'}))
    metric(con, "dm", kind="micro_f1", a="tp", b="fp", c="fn")  # not the mean item score
    metric(con, "dr")  # the mean, but on the raw (0-1) scale
    items(con, "new", "dm", [1.0], measures=[{"tp": 1, "fp": 0, "fn": 1}])
    items(con, "new", "dr", [1.0, 0.0])
    estimate(con, "new", "dm", 10.0, 5.0, 15.0)
    estimate(con, "new", "dr", 10.0, 5.0, 15.0)
    assert con.execute("SELECT count(*) FROM estimable_datasets").fetchone() == (0,)
    assert con.execute("SELECT bool_or(estimated), bool_or(source = 'estimate') FROM dataset_scores").fetchone() == (
        False, False)
    con.close()


def test_estimate_draws_are_seeded_and_their_quantiles_are_the_interval():
    d = estimate_draws(0, "m", "d", 40.0, 30.0, 45.0, 20000)
    assert (d == estimate_draws(0, "m", "d", 40.0, 30.0, 45.0, 20000)).all()
    assert (d[:100] == estimate_draws(0, "m", "d", 40.0, 30.0, 45.0, 100)).all()  # replicate r is replicate r
    assert not (d == estimate_draws(0, "m2", "d", 40.0, 30.0, 45.0, 20000)).all()
    assert not (d == estimate_draws(1, "m", "d", 40.0, 30.0, 45.0, 20000)).all()
    assert np.percentile(d, [2.5, 50, 97.5]) == pytest.approx([30.0, 40.0, 45.0], abs=0.3)  # asymmetric: kept
    assert estimate_draws(0, "m", "d", 1.0, 0.0, 9.0, 1000).min() >= 0.0


def test_the_interval_carries_the_estimates_uncertainty(con):
    compute_intervals(con, replicates=2000)
    bounds = dict(((lv, node), (lo, hi)) for lv, node, lo, hi in con.execute(
        "SELECT level, node, ci_low, ci_high FROM intervals WHERE model = 'new'").fetchall())
    half_df2 = (bounds["dataset", "df2"][1] - bounds["dataset", "df2"][0]) / 2
    estimate(con, "new", "df1", 62.0, 52.0, 72.0)
    assert compute_intervals(con, replicates=2000).recomputed  # the estimates are an input
    bounds = dict(((lv, node), (lo, hi)) for lv, node, lo, hi in con.execute(
        "SELECT level, node, ci_low, ci_high FROM intervals WHERE model = 'new'").fetchall())
    # the dataset's interval is the estimate's own
    assert bounds["dataset", "df1"] == pytest.approx((52.0, 72.0), abs=0.8)
    # fo = (df1 + df2) / 2, independent: half-width sqrt(10^2 + h2^2) / 2 (about 5.8, not h2 / 2, about 3.9)
    want = math.hypot(10.0, half_df2) / 2
    lo, hi = bounds["ability", "fo"]
    assert (hi - lo) / 2 == pytest.approx(want, rel=0.08)
    assert (lo + hi) / 2 == pytest.approx(56.0, abs=0.6)
    assert bounds["overall", "overall"] == pytest.approx((lo, hi))


def test_p_veto_and_rank_range_include_the_estimate(con):
    # the gate dataset estimated at 12 in [2, 22]: vetoed (under 10) with P = Phi(-2 / (10 / Z95))
    items(con, "new", "dvs", [0.0], start=40)  # its rows are partial now; the estimate is of these
    estimate(con, "new", "dvs", 12.0, 2.0, 22.0)
    compute_intervals(con, replicates=2000)
    p_veto, rank_low, rank_high, est = con.execute(
        "SELECT p_veto, rank_low, rank_high, estimated FROM leaderboard WHERE model = 'new'").fetchone()
    assert est is True
    assert p_veto == pytest.approx(norm.cdf(-2 / (10 / Z95)), abs=0.035)  # 0.35; its standard error 0.011
    assert rank_high == 2 and one(con, "SELECT p_veto FROM leaderboard WHERE model = 'full'") == 0.0


@pytest.mark.parametrize("interval, ranks", [((70.0, 90.0), (1, 2)), ((79.0, 81.0), (1, 1))])
def test_the_rank_range_follows_the_estimates_interval(con, interval, ranks):
    # twin answers full's items of dvs and df2 (paired: equal in every replicate) and 4 of df1, estimated
    # at 80; full's and new's df1 are imported constants (75, 0). twin - full = (df1 - 75) / 2, so twin
    # ranks second in the replicates where its estimate draws under 75: 16 % with [70, 90], none with [79, 81].
    for d in ("dvs", "df2"):
        items(con, "twin", d, _bits(40, 30))
    items(con, "twin", "df1", _bits(4, 3))
    con.execute("INSERT INTO external_scores (suite, dataset, model, score, override) VALUES "
                "('est', 'df1', 'full', 75, true), ('est', 'df1', 'new', 0, true)")
    estimate(con, "twin", "df1", 80.0, *interval)
    compute_intervals(con, replicates=1000)
    assert con.execute("SELECT rank, rank_low, rank_high FROM leaderboard WHERE model = 'twin'").fetchone() == (1, *ranks)


def test_a_changed_estimate_hides_the_stored_bounds_until_they_are_computed_again(con):
    estimate(con, "new", "df1", 62.0, 52.0, 72.0)
    compute_intervals(con, replicates=200)
    assert one(con, "SELECT ci_low FROM leaderboard WHERE model = 'new'") is not None
    estimate(con, "new", "df1", 40.0, 30.0, 50.0)
    assert one(con, "SELECT ci_low FROM leaderboard WHERE model = 'new'") is None
    assert compute_intervals(con, replicates=200).recomputed
    lo, hi = con.execute("SELECT ci_low, ci_high FROM intervals WHERE model = 'new' AND node = 'df1'").fetchone()
    assert 25 < lo < 35 and 45 < hi < 55

"""The stopping rule and the rounds' allocation of `sweep --until-stable` (store/stats/stopping.py), by hand."""

from __future__ import annotations

import math

import pytest

from store.stats.estimator import Z95, Estimate
from store.stats.stopping import allocate, rank_of, round_budget, settled, spread, standing


def est(value: float, half: float, n: int = 30, total: int = 300) -> Estimate:
    return Estimate(value, value - half, value + half, n, total, "model-assisted")


def test_standing_combines_the_datasets_and_places_the_interval():
    parts = {"d1": est(60, 10), "d2": est(80, 0, 300)}  # d2 complete: a zero-width interval
    s = standing(parts, {"d1": 1, "d2": 1}, [90, 74, 72, 60, 50])
    # overall 0.5 x 60 + 0.5 x 80 = 70; half-width 0.5 x 10 = 5 -> [65, 75]
    assert (s.estimate, s.ci_low, s.ci_high) == pytest.approx((70, 65, 75))
    assert (s.rank, s.rank_low, s.rank_high, s.places) == (4, 2, 4, 6)
    assert s.width == 2 and not settled(s)
    narrow = standing(parts, {"d1": 1, "d2": 1}, [90, 72, 60])
    assert (narrow.rank_low, narrow.rank_high) == (2, 3) and settled(narrow)


def test_variances_add_with_the_squared_weights():
    s = standing({"a": est(50, 4), "b": est(30, 3)}, {"a": 3, "b": 1, "gate": 0}, [])
    assert s.estimate == pytest.approx(0.75 * 50 + 0.25 * 30)
    assert s.ci_high - s.estimate == pytest.approx(math.hypot(0.75 * 4, 0.25 * 3))
    assert (s.rank_low, s.rank_high) == (1, 1)  # nobody else: settled at once


def test_a_dataset_without_an_estimate_leaves_every_rank_open():
    s = standing({"a": est(50, 1)}, {"a": 1, "b": 1}, [10, 20, 30])
    assert (s.rank_low, s.rank_high) == (1, 4) and math.isnan(s.estimate) and not settled(s)


def test_ties_share_the_better_rank():
    assert rank_of(70, [80, 70, 70, 60]) == 2


def test_spread_undoes_the_finite_population_correction():
    e = est(50, Z95 * 100 * 0.5 * math.sqrt((1 - 30 / 300) / 30))
    assert spread(e) == pytest.approx(0.5)
    assert spread(None) == 0.5 and spread(est(50, 0, 300)) == 0.5
    assert spread(est(99, 0.01)) == 0.05  # a degenerate interval still gets items


def test_allocate_gives_a_few_to_all_and_the_rest_by_weight_times_spread():
    sizes = {"a": 100, "b": 100, "g": 100}
    got = allocate({"a": 10, "b": 10, "g": 10}, sizes, {"a": 0.75, "b": 0.25, "g": 0.0},
                   {"a": 0.5, "b": 0.5, "g": 0.5}, budget=49, few=3)
    # 3 each, then 40 split 3:1 by weight x spread; the gate's datasets get the few only
    assert got == {"a": 10 + 3 + 30, "b": 10 + 3 + 10, "g": 13}
    assert sum(got.values()) - 30 == 49


def test_allocate_passes_the_excess_of_a_full_dataset_on_and_stops_at_the_sizes():
    sizes = {"a": 20, "b": 100}
    got = allocate({"a": 15, "b": 0}, sizes, {"a": 0.9, "b": 0.1}, {"a": 0.5, "b": 0.5}, budget=40, few=2)
    assert got == {"a": 20, "b": 35}
    assert allocate(sizes, sizes, {"a": 1, "b": 1}, {}, budget=40) == sizes


def test_round_budget():
    assert round_budget({"a": 300, "b": 300}) == 30
    assert round_budget({"a": 5, "b": 5, "c": 5}) == 3

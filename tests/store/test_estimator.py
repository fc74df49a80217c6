"""The difference estimator (store/stats/estimator.py) and the 2PL it leans on (store/stats/item_model.py).

Hand-computed cases on small matrices, then simulations: the mean error over many random
subsets is within its standard error of zero (whatever the item model, a model better than every
fitted one included), and the 95 % intervals cover the truth about 95 % of the time.
"""

from __future__ import annotations

import numpy as np
import pytest

from store.stats.estimator import (MODEL_ASSISTED, PLAIN, Answered, Blend, Population, choose_blend, difference,
                             estimate_model, plain, wilson)
from store.stats.item_model import fit_2pl, map_ability, sigmoid


def test_wilson_matches_the_textbook_interval():
    lo, hi = wilson(0.5, 10)  # 5 of 10: [0.2366, 0.7634]
    assert (lo, hi) == pytest.approx((0.23659, 0.76341), abs=1e-5)
    lo, hi = wilson(1.0, 30)  # 30 of 30: the lower end 30 / (30 + z^2)
    assert lo == pytest.approx(30 / (30 + 1.959964**2), abs=1e-6) and hi == pytest.approx(1.0)


def test_cross_fitted_estimate_by_hand():
    # N = 4 items, items 0 and 2 answered (1 and 0). Row i predicts every item without answered item i.
    loo = np.array([[0.5, 0.6, 0.3, 0.8],
                    [0.7, 0.4, 0.2, 0.6]])
    e = difference(np.array([1.0, 0.0]), np.array([0, 2]), loo, 4)
    # est_0 = (0 + (0.6 + 0.8) + 0.5 + 3 x (1 - 0.5)) / 4 = 0.85
    # est_1 = (1 + (0.4 + 0.6) + 0.2 + 3 x (0 - 0.2)) / 4 = 0.40   -> mean 0.625
    assert e.estimate == pytest.approx(62.5)
    assert (e.n, e.n_total, e.method) == (2, 4, MODEL_ASSISTED)
    # residuals 0.5, -0.2: s^2 = 0.245; se = sqrt((1 - 2/4) 0.245 / 2); t(0.975, 1) = 12.71: clipped to 0-100
    assert (e.ci_low, e.ci_high) == (0.0, 100.0)


def test_a_constant_prediction_gives_the_answered_mean():
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    idx = np.array([3, 7, 8, 12, 19])
    e = difference(y, idx, np.full((5, 20), 0.3), 20)
    assert e.estimate == pytest.approx(60.0)
    # the interval is then the t interval of the plain mean with the finite-population correction
    half = 2.776445 * np.sqrt((1 - 5 / 20) * y.var(ddof=1) / 5) * 100
    assert (e.ci_low, e.ci_high) == pytest.approx((60 - half, min(100.0, 60 + half)), abs=1e-4)


def test_perfect_predictions_give_the_truth_with_no_width():
    truth = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1, 1], dtype=float)
    idx = np.array([1, 2, 5, 6])
    e = difference(truth[idx], idx, np.tile(truth, (4, 1)), 10)
    assert e.estimate == pytest.approx(60.0) and e.ci_low == pytest.approx(60.0) and e.ci_high == pytest.approx(60.0)


def test_all_answers_alike_get_at_least_the_wilson_interval():
    idx = np.arange(10)
    e = difference(np.ones(10), idx, np.full((10, 100), 0.999), 100)
    lo, _ = wilson(1.0, 10 * 99 / 90)  # effective n under the finite-population correction
    assert e.ci_low == pytest.approx(100 * lo) and e.ci_high == 100.0 and e.estimate == pytest.approx(100.0)


def test_plain_mean_with_the_finite_population_correction():
    e = plain(np.array([1.0, 0.0, 1.0, 1.0]), 8)
    lo, hi = wilson(0.75, 4 * 7 / 4)
    assert (e.estimate, e.method) == (75.0, PLAIN)
    assert (e.ci_low, e.ci_high) == pytest.approx((100 * lo, 100 * hi))


def _world(rng, models=40, items=150, families=4, hard=0.0):
    """0/1 answers from a 2PL plus family quirks (what neighbours can see and a 2PL cannot)."""
    a = rng.lognormal(0, 0.3, items)
    b = rng.normal(hard, 1, items)
    quirk = rng.normal(0, 1.2, (families, items))
    theta = rng.normal(0, 1, models)
    fam = rng.integers(0, families, models)
    prob = sigmoid(a * (theta[:, None] - b) + quirk[fam])
    return (rng.random(prob.shape) < prob).astype(float), a, b, quirk


def _pops(scores, names=None, *, datasets=("d",)):
    out = {}
    for k, d in enumerate(datasets):
        y = scores[k] if scores.ndim == 3 else scores
        names_ = names or [f"m{j}" for j in range(y.shape[0])]
        out[d] = Population(d, [f"i{i}" for i in range(y.shape[1])], names_, y, np.ones_like(y, dtype=bool),
                            fit_2pl(y))
    return out


def test_the_2pl_fit_finds_the_items_difficulties():
    rng = np.random.default_rng(1)
    theta, b = rng.normal(0, 1, 300), rng.normal(0, 1, 80)
    a = rng.lognormal(0, 0.3, 80)
    y = (rng.random((300, 80)) < sigmoid(a * (theta[:, None] - b))).astype(float)
    fit = fit_2pl(y)
    assert np.corrcoef(fit.difficulty, b)[0, 1] > 0.95
    assert np.corrcoef(fit.ability, theta)[0, 1] > 0.9
    assert fit.rounds < 100
    # a new model's ability from its answers alone lands where the fitted abilities put such a model
    assert map_ability(y[0], fit.discrimination, fit.intercept)[0] == pytest.approx(fit.ability[0], abs=0.3)


@pytest.mark.parametrize("case", ["fitted", "wrong item model", "better than all"])
def test_unbiased_over_random_subsets(case):
    rng = np.random.default_rng(7)
    scores, a, b, quirk = _world(rng, hard=2.0 if case == "better than all" else 0.0)
    pops = _pops(scores[1:])
    if case == "wrong item model":  # items' parameters shuffled: predictions unrelated to the items
        fit = pops["d"].fit
        assert fit is not None
        perm = rng.permutation(len(fit.intercept))
        pops["d"].fit = type(fit)(fit.discrimination[perm], fit.intercept[perm], fit.ability, fit.rounds)
    y = scores[0]
    if case == "better than all":  # far above every fitted model (hard items: below the 100 ceiling)
        y = (rng.random(len(y)) < sigmoid(a * (4.0 - b))).astype(float)
        assert y.mean() > 0.7 and y.mean() > scores[1:].mean(1).max() + 0.15
    truth = 100 * y.mean()
    errors = []
    for _ in range(300):
        idx = np.sort(rng.choice(len(y), size=15, replace=False))
        e = estimate_model({"d": Answered(idx, y[idx])}, pops, Blend(kappa=20, alpha=0.5))["d"]
        errors.append(e.estimate - truth)
    err = np.array(errors)
    assert abs(err.mean()) < 3 * err.std(ddof=1) / np.sqrt(len(err))


def test_intervals_cover_about_95_percent():
    rng = np.random.default_rng(11)
    scores, *_ = _world(rng, models=90, items=200)
    pops = _pops(scores[:60])
    inside = total = 0
    for m in range(60, 90):
        y = scores[m]
        for _ in range(12):
            idx = np.sort(rng.choice(len(y), size=20, replace=False))
            e = estimate_model({"d": Answered(idx, y[idx])}, pops, Blend(kappa=20, alpha=0.5))["d"]
            inside += e.ci_low - 1e-9 <= 100 * y.mean() <= e.ci_high + 1e-9
            total += 1
    assert 0.91 <= inside / total <= 0.99


def test_cross_validation_prefers_neighbours_when_families_share_quirks():
    rng = np.random.default_rng(3)
    scores, *_ = _world(rng, models=60, items=150, families=3)
    pops = _pops(np.stack([scores[:, :75], scores[:, 75:]]), datasets=("d1", "d2"))
    blend = choose_blend(list(pops.values()), {"d1": 15, "d2": 15})
    assert blend.alpha < 1 and blend.loss is not None and blend.loss_2pl is not None
    assert blend.loss < blend.loss_2pl < (blend.loss_mean or 0)
    assert all(p.assist for p in pops.values())

"""A model's dataset score from a random subset of the items: the model-assisted difference estimator.

For one model and one dataset of N items (the population: every item some model answered) of
which it answered a seeded random n, with q_k a prediction of its score on item k:

    estimate = mean over all N items of q  +  mean over the n answered items of (y - q)

The second term corrects the first by what the model really did, so the estimate is unbiased
over the random choice of items whatever q is: a bad item model costs precision, never bias.
A new model better than every stored one is still estimated right; the item model alone would
not see that. (A prediction alone is never returned.)

Cross-fitting makes it exactly unbiased and keeps the interval honest: the prediction used for
answered item i is made without item i (leave-one-out), so the residual y_i - q_i is an
out-of-sample error, and, with S' the other n - 1 answered items,

    est_i = (sum over S' of y + sum outside S' of q^(-i) + (N - n + 1) (y_i - q_i^(-i))) / N

has expectation the true mean given S' (item i is a uniform draw from the N - n + 1 items
outside S'); the estimate is the mean of the est_i. In-sample residuals would be too small
(the ability was fitted to them), and the interval too narrow: 86-89 % coverage on the
development matrices against 95-96 % cross-fitted.

The prediction q blends two item models (store/stats/item_model.py for the first):
- the dataset's 2PL at the model's ability (MAP from its answered items of this dataset);
- its neighbours: the mean answer of the fitted models on each item, weighted by
  exp(kappa * agreement), agreement = share of equal answers with this model on all the items it
  answered, every dataset pooled. This is where pooling across datasets pays: a model's answers
  elsewhere say which stored models it resembles, and those share its item-level quirks.
q = alpha * 2PL + (1 - alpha) * neighbours; kappa and alpha are chosen by cross-validation on
the fitted models (`choose_blend`), each playing a new model that answered a random subset, so
the choice follows the database, not constants tuned on one benchmark.

Interval: t quantile (n - 1 degrees of freedom) x sqrt((1 - n/N) s^2 / n), s^2 the variance of the
cross-fitted residuals; when every answered score is the same (nothing to estimate a spread
from) it is widened to at least the Wilson interval of the answered mean. Too few fitted models
(or a dataset where the cross-validation finds the item model no better than the answered mean):
the plain mean with a Wilson interval. Both use the finite-population correction: the answered
items are a sample without replacement from N.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache

import msgspec
import numpy as np
from numpy.typing import NDArray
from scipy.special import stdtrit

from store.stats.draws import Z95
from store.stats.item_model import Array, ItemFit, fit_2pl, map_ability

KAPPAS = (5.0, 10.0, 20.0, 40.0, 80.0, 160.0)
ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0)
MODEL_ASSISTED, PLAIN = "model-assisted", "mean"
CV_FOLDS = 3  # the cross-validation's 2PL: refitted without each third of the models (_cv_2pl)
REFIT_DATASETS = 12  # ... on this many datasets (a refit costs a fit; past a dozen the choice is settled)


class Population(msgspec.Struct):
    """One dataset's items and the models its item model is fitted on (their scores, a mask)."""

    dataset: str
    items: list[str]
    models: list[str]
    scores: Array  # models x items, 0 where not answered
    answered: NDArray[np.bool_]
    fit: ItemFit | None = None
    assist: bool = True  # the cross-validation found the item model better than the answered mean
    # Derived once (__post_init__): the neighbour means read them for every model estimated.
    have: Array | None = None  # answered, as 0/1
    masked: Array | None = None  # scores x have
    complete: bool = False  # every fitted model answered every item

    def __post_init__(self) -> None:
        self.have = self.answered.astype(np.float64)
        self.masked = self.scores * self.have
        self.complete = bool(self.answered.all())


class Answered(msgspec.Struct):
    """What one model answered of one dataset: positions in Population.items and the scores."""

    index: NDArray[np.intp]
    scores: Array


class Blend(msgspec.Struct, frozen=True):
    """The prediction's mix (module docstring) and what cross-validation measured for it."""

    kappa: float = 40.0
    alpha: float = 0.5
    loss: float | None = None  # mean squared error on the held-back items, per item
    loss_2pl: float | None = None  # the same for the 2PL alone (alpha = 1)
    loss_mean: float | None = None  # the same for the answered mean (the plain estimate's prediction)


class Estimate(msgspec.Struct, frozen=True):
    """A dataset score on its 0-100 scale with its 95 % interval."""

    estimate: float
    ci_low: float
    ci_high: float
    n: int
    n_total: int
    method: str


def wilson(mean: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion `mean` observed on `n` (possibly fractional) trials."""
    den = 1 + z * z / n
    centre = (mean + z * z / (2 * n)) / den
    half = z * math.sqrt(max(mean * (1 - mean), 0.0) / n + z * z / (4 * n * n)) / den
    return centre - half, centre + half


def effective_n(n: int, total: int) -> float:
    """n scaled by the finite-population correction: its binomial variance is that of the sample mean."""
    return n * (total - 1) / (total - n) if total > n else float("inf")


def plain(y: Array, total: int) -> Estimate:
    """The answered mean with a Wilson interval (with the finite-population correction)."""
    n, mean = len(y), float(np.mean(y))
    lo, hi = wilson(mean, effective_n(n, total)) if total > n else (mean, mean)
    return _scaled(mean, lo, hi, n, total, PLAIN)


def difference(y: Array, index: NDArray[np.intp], loo: Array, total: int) -> Estimate:
    """The cross-fitted difference estimate from `loo` (n x total): row i predicts every item without item i."""
    n = len(y)
    rows = np.arange(n)
    own = loo[rows, index]
    resid = y - own
    outside = np.ones(total, dtype=bool)
    outside[index] = False
    parts = (y.sum() - y + loo[:, outside].sum(1) + own + (total - n + 1) * resid) / total
    est = float(parts.mean())
    if n > 1:
        se = math.sqrt((1 - n / total) * float(resid.var(ddof=1)) / n)
        q = _t975(n - 1)
        lo, hi = est - q * se, est + q * se
    else:
        lo = hi = est
    if np.ptp(y) < 1e-12:  # all answers alike: the residuals cannot show the spread, Wilson can
        wl, wh = wilson(float(y[0]), effective_n(n, total)) if total > n else (est, est)
        lo, hi = min(lo, wl), max(hi, wh)
    return _scaled(est, lo, hi, n, total, MODEL_ASSISTED)


@lru_cache(maxsize=None)
def _t975(df: int) -> float:
    return float(stdtrit(df, 0.975))  # scipy.special: scipy.stats would add seconds of import


def _scaled(est: float, lo: float, hi: float, n: int, total: int, method: str) -> Estimate:
    """On the 0-100 scale; a mean lies in [0, 1], so nothing outside is kept (nor an interval beyond it)."""
    def c(v: float) -> float:
        return 100 * min(1.0, max(0.0, v))
    return Estimate(estimate=c(est), ci_low=c(lo), ci_high=c(hi), n=n, n_total=total, method=method)


# ----------------------------------------------------------------- agreement between models
def agreement(y: Array, scores: Array, answered: NDArray[np.bool_]) -> tuple[Array, Array]:
    """Per stored model and answered item: (1 - |y - its score|, 1) where it has a score, else (0, 0)."""
    have = answered.astype(np.float64)
    return have * (1 - np.abs(scores - y)), have


def _weights(agree: Array, count: Array, kappa: float) -> Array:
    """exp(kappa * (agreement - best)) per row; no weight where a model shares no answered item."""
    a = np.where(count > 0, agree / np.maximum(count, 1), -np.inf)
    best = a.max(axis=-1, keepdims=True)
    best = np.where(np.isfinite(best), best, 0.0)
    return np.exp(kappa * (a - best))


def neighbour_mean(w: Array, pop: Population) -> Array:
    """Weighted mean answer of the fitted models on every item (rows of `w`: one weighting each)."""
    assert pop.have is not None and pop.masked is not None
    num = w @ pop.masked
    den = w.sum(-1, keepdims=True) if pop.complete else w @ pop.have
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def blend(p2: Array, pk: Array, alpha: float) -> Array:
    """alpha x 2PL + (1 - alpha) x neighbours; the 2PL alone where no neighbour has the item."""
    return np.where(np.isnan(pk), p2, alpha * p2 + (1 - alpha) * np.nan_to_num(pk))


# ----------------------------------------------------------------- one model
def estimate_model(answers: Mapping[str, Answered], pops: Mapping[str, Population], mix: Blend,
                   *, exclude: str | None = None) -> dict[str, Estimate]:
    """Every dataset this model answered part of; `exclude` (its own name) is never its own neighbour."""
    parts = {}  # dataset -> (agreement, counts) per fitted model of that dataset, per answered item
    for d, ans in answers.items():
        pop = pops[d]
        if pop.fit is not None:
            parts[d] = agreement(ans.scores, pop.scores[:, ans.index], pop.answered[:, ans.index])
    names = sorted({m for d in parts for m in pops[d].models})
    pos = {m: k for k, m in enumerate(names)}
    total_a, total_c = np.zeros(len(names)), np.zeros(len(names))
    for d, (a, c) in parts.items():
        idx = [pos[m] for m in pops[d].models]
        np.add.at(total_a, idx, a.sum(1))
        np.add.at(total_c, idx, c.sum(1))
    out = {}
    for d, ans in answers.items():
        pop, total = pops[d], len(pops[d].items)
        if len(ans.index) >= total:
            continue  # complete: nothing to estimate
        if pop.fit is None or not pop.assist:
            out[d] = plain(ans.scores, total)
            continue
        out[d] = difference(ans.scores, ans.index, _loo_predictions(ans, pop, mix, parts[d], total_a, total_c,
                                                                      [pos[m] for m in pop.models], exclude),
                            total)
    return out


def _loo_predictions(ans: Answered, pop: Population, mix: Blend, part: tuple[Array, Array], total_a: Array,
                     total_c: Array, idx: list[int], exclude: str | None) -> Array:
    """n x items: row i predicts every item from the answered items but item i."""
    assert pop.fit is not None
    n = len(ans.index)
    keep = ~np.eye(n, dtype=bool)
    fit = pop.fit
    a_s, c_s = fit.discrimination[ans.index], fit.intercept[ans.index]
    theta = map_ability(ans.scores, a_s, c_s, keep, start=float(map_ability(ans.scores, a_s, c_s)[0]))
    p2 = fit.prob(theta)
    if mix.alpha >= 1:
        return p2
    a, c = part  # models x n: leave item i out of each model's agreement
    agree = total_a[idx][None, :] - a.T
    count = total_c[idx][None, :] - c.T
    if exclude is not None and exclude in pop.models:
        count[:, pop.models.index(exclude)] = 0
    return blend(p2, neighbour_mean(_weights(agree, count, mix.kappa), pop), mix.alpha)


# ----------------------------------------------------------------- choosing the blend
def choose_blend(pops: Sequence[Population], sizes: Mapping[str, int], *, seed: int = 0,
                 max_models: int = 400) -> Blend:
    """Cross-validate (kappa, alpha) on the fitted models; set each population's `assist` flag.

    Each fitted model of each dataset answers a seeded random subset of `sizes[dataset]` items
    (what the models being estimated answered, typically); its other items are predicted by every
    candidate blend from that subset (its neighbours: the other fitted models, agreement over all
    datasets' subsets). The blend with the least squared error over all held-back items wins; a
    dataset where even that does no better than the answered mean gets the plain estimate.
    """
    fitted = [p for p in pops if p.fit is not None and p.dataset in sizes]
    if not fitted:
        return Blend()
    names = sorted({m for p in fitted for m in p.models})[:max_models]
    pos = {m: k for k, m in enumerate(names)}
    g = len(names)
    agree, count = np.zeros((g, g)), np.zeros((g, g))
    shown = {}
    for p in fitted:
        rng = np.random.default_rng([seed, *p.dataset.encode()])
        size = min(max(2, sizes[p.dataset]), len(p.items) - 1)
        shown[p.dataset] = np.sort(rng.choice(len(p.items), size=size, replace=False))
        rows = np.array([k for k, m in enumerate(p.models) if m in pos], dtype=np.intp)
        at = np.array([pos[p.models[k]] for k in rows], dtype=np.intp)
        y = p.scores[np.ix_(rows, shown[p.dataset])]
        have = p.answered[np.ix_(rows, shown[p.dataset])].astype(np.float64)
        both = have[:, None, :] * have[None, :, :]
        agree[np.ix_(at, at)] += (both * (1 - np.abs(y[:, None, :] - y[None, :, :]))).sum(2)
        count[np.ix_(at, at)] += both.sum(2)
    np.fill_diagonal(count, 0)  # a model is not its own neighbour
    p2 = {p.dataset: _cv_2pl(p, [k for k, m in enumerate(p.models) if m in pos], shown[p.dataset],
                             CV_FOLDS if k_refit < REFIT_DATASETS else 0)
          for k_refit, p in enumerate(fitted)}
    sq = np.zeros((len(KAPPAS), len(ALPHAS)))
    sq_2pl = sq_mean = cells = 0.0
    for p in fitted:
        e_k, e_2pl, e_mean, n_cells = _cv_errors(p, shown[p.dataset], p2[p.dataset], agree, count, pos)
        sq += e_k
        sq_2pl += e_2pl
        sq_mean += e_mean
        cells += n_cells
    k, a = np.unravel_index(int(np.argmin(sq)), sq.shape)
    best = Blend(kappa=KAPPAS[k], alpha=ALPHAS[a], loss=float(sq[k, a] / max(cells, 1)),
                 loss_2pl=sq_2pl / max(cells, 1), loss_mean=sq_mean / max(cells, 1))
    for p in fitted:  # per dataset: does the chosen blend beat the answered mean?
        e_k, _, e_mean, _ = _cv_errors(p, shown[p.dataset], p2[p.dataset], agree, count, pos,
                                       kappas=(best.kappa,))
        p.assist = bool(e_k[0, ALPHAS.index(best.alpha)] < e_mean)
    return best


def _cv_2pl(p: Population, rows: list[int], shown: NDArray[np.intp], folds: int) -> Array:
    """The 2PL's predictions for the fitted models that play new ones, from `shown` alone.

    With `folds`, each model's items come from a 2PL fitted without it (its fold left out), as a
    new model's would: the 2PL fitted on everyone knows each model's answers and would be favoured
    over the neighbours, which never see the model they predict."""
    assert p.fit is not None
    y, have = p.scores[rows], p.answered[rows]
    seen = have[:, shown]
    fits = [(np.ones(len(rows), dtype=bool), p.fit)]
    if folds > 1 and len(rows) >= 2 * folds:
        part = np.arange(len(rows)) % folds
        fits = [(part == f, fit_2pl(y[part != f], have[part != f])) for f in range(folds)]
    out = np.zeros(y.shape)
    for sel, fit in fits:
        theta = map_ability(y[np.ix_(sel, shown)], fit.discrimination[shown], fit.intercept[shown], seen[sel])
        out[sel] = fit.prob(theta)
    return out


def _cv_errors(p: Population, shown: NDArray[np.intp], p2: Array, agree: Array, count: Array,
               pos: Mapping[str, int], kappas: Sequence[float] = KAPPAS) -> tuple[Array, float, float, float]:
    """Squared errors on one dataset's held-back cells: per (kappa, alpha), of the 2PL, of the answered mean."""
    rows = [k for k, m in enumerate(p.models) if m in pos]
    at = [pos[p.models[k]] for k in rows]
    y, have = p.scores[rows], p.answered[rows]
    seen = have[:, shown]
    held = have.copy()
    held[:, shown] = False
    mean = (y[:, shown] * seen).sum(1) / np.maximum(seen.sum(1), 1)
    sub = Population(p.dataset, p.items, [p.models[k] for k in rows], y, have)
    errs = np.zeros((len(kappas), len(ALPHAS)))
    for i, kappa in enumerate(kappas):
        pk = neighbour_mean(_weights(agree[np.ix_(at, at)], count[np.ix_(at, at)], kappa), sub)
        for j, alpha in enumerate(ALPHAS):
            errs[i, j] = float((((y - blend(p2, pk, alpha)) ** 2) * held).sum())
    return (errs, float((((y - p2) ** 2) * held).sum()), float((((y - mean[:, None]) ** 2) * held).sum()),
            float(held.sum()))

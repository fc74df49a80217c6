"""When a sweep that asks in rounds (`sweep --until-stable`) may stop, and what each round asks.

    standing(parts, weights, others) -> Standing    the overall, its interval, its rank range
    settled(standing)                                the rank range is at most one place wide
    allocate(asked, sizes, weights, spreads, ...)   the next round's items per dataset

Pure functions (no database), shared by the sweep (engine/sweep/until_stable.py) and its replay
on the development matrices (bench/efficient.py). The overall is linear in the dataset scores
(benchmark/suites/weights.py), so its variance is sum w_d^2 se_d^2 with se_d each dataset
estimate's half-width over 1.96: the datasets' items are drawn independently, so their errors
are too. The rank range is where that interval falls among the other models' overall scores;
why it is analytic and how it relates to the leaderboard's bootstrap ranks: docs/estimates.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import NormalDist

import msgspec

from store.stats.estimator import Z95, Estimate

FEW = 3  # items every unfinished dataset gets each round, whatever its weight (the gate's datasets too)
ROUND_SHARE = 0.05  # a round asks about this share of all planned items
MIN_SPREAD, MAX_SPREAD = 0.05, 0.5  # an item score's standard deviation (0-1 scale), as allocation uses it


class Standing(msgspec.Struct, frozen=True):
    """A model's overall score (0-100) with its interval (95 % unless asked), and the ranks that interval allows."""

    estimate: float
    ci_low: float
    ci_high: float
    rank: int  # where the estimate itself places it (1 = best; ties share the better rank)
    rank_low: int  # the best rank the interval allows
    rank_high: int  # the worst
    places: int  # the other models + 1

    @property
    def width(self) -> int:
        return self.rank_high - self.rank_low


def standing(parts: Mapping[str, Estimate], weights: Mapping[str, float], others: Sequence[float],
             level: float = 0.95) -> Standing:
    """The overall from per-dataset 95 % intervals (a complete dataset: zero width), its interval at `level`.

    A dataset of positive weight without a part leaves the overall unknown: every rank is possible."""
    places = len(others) + 1
    w = {d: x for d, x in weights.items() if x > 0}
    if not w or any(d not in parts for d in w):
        return Standing(math.nan, -math.inf, math.inf, places, 1, places, places)
    total = sum(w.values())
    est = sum(x * parts[d].estimate for d, x in w.items()) / total
    var = sum((x * (parts[d].ci_high - parts[d].ci_low) / (2 * Z95)) ** 2 for d, x in w.items()) / total ** 2
    half = NormalDist().inv_cdf((1 + level) / 2) * math.sqrt(var)
    lo, hi = est - half, est + half
    return Standing(est, lo, hi, rank_of(est, others), rank_of(hi, others), rank_of(lo, others), places)


def rank_of(score: float, others: Sequence[float]) -> int:
    """The leaderboard's rank() of a score among the others: one more than those strictly above it."""
    return 1 + sum(1 for s in others if s > score)


def settled(s: Standing, width: int = 1) -> bool:
    return s.width <= width


def spread(e: Estimate | None) -> float:
    """An item score's standard deviation for this model and dataset, from its estimate's interval.

    Undoing the interval's finite-population correction: se^2 = (1 - n/N) S^2 / n. Nothing asked yet:
    the largest a 0-1 score can have."""
    if e is None or e.n < 2 or e.n >= e.n_total:
        return MAX_SPREAD
    se = (e.ci_high - e.ci_low) / (2 * Z95) / 100
    s = se * math.sqrt(e.n / (1 - e.n / e.n_total))
    return min(MAX_SPREAD, max(MIN_SPREAD, s))


def allocate(asked: Mapping[str, int], sizes: Mapping[str, int], weights: Mapping[str, float],
             spreads: Mapping[str, float], budget: int, few: int = FEW) -> dict[str, int]:
    """Items per dataset after the next round (each at least what is asked, at most its size).

    Every unfinished dataset gets `few`; the rest of `budget` goes in proportion to weight x spread
    (Neyman allocation: it minimizes the variance of the weighted overall for the items asked),
    capped at what each dataset has left, the excess passed on to the others."""
    room = {d: sizes[d] - min(asked.get(d, 0), sizes[d]) for d in sizes}
    add = {d: min(few, r) for d, r in room.items()}
    left = budget - sum(add.values())
    while left > 0:
        share = {d: weights.get(d, 0.0) * spreads.get(d, MAX_SPREAD) for d in sizes if room[d] > add[d]}
        total = sum(share.values())
        if total <= 0:
            break
        given = 0
        for d, x in sorted(share.items(), key=lambda kv: -kv[1]):
            k = min(room[d] - add[d], max(1, round(left * x / total)), left - given)
            add[d] += k
            given += k
            if given >= left:
                break
        left -= given
    return {d: sizes[d] - room[d] + add[d] for d in sizes}


def round_budget(sizes: Mapping[str, int], share: float | None = None) -> int:
    """Items a round asks: `share` (default ROUND_SHARE) of all planned, at least one per dataset."""
    return max(len(sizes), math.ceil((ROUND_SHARE if share is None else share) * sum(sizes.values())))

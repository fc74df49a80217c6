"""Paired two-sample tests of two models on the same items (`compare`, engine/report/compare.py)."""

from __future__ import annotations

import math

import numpy as np


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar test: the binomial test of a_only successes in a_only + b_only trials at 1/2.

    p = min(1, 2 * P(X <= min(a_only, b_only))), X ~ Binomial(a_only + b_only, 1/2); 1 with no
    discordant item.
    """
    n, k = a_only + b_only, min(a_only, b_only)
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def bootstrap_p(diffs: np.ndarray) -> float | None:
    """Two-sided bootstrap p-value of 'no difference': twice the smaller share of replicates on either side of 0."""
    d = diffs[~np.isnan(diffs)]
    if not len(d):
        return None
    return float(min(1.0, 2 * min(np.mean(d <= 0), np.mean(d >= 0))))

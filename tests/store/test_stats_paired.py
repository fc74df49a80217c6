"""The paired two-sample tests of `compare` (store/stats/paired.py): exact McNemar, bootstrap p."""

from __future__ import annotations

import numpy as np
import pytest

from store.stats.paired import bootstrap_p, mcnemar_exact

# Hand-computed: p = min(1, 2 * sum_{i <= min} C(n, i) / 2^n), n = discordant items.
MCNEMAR = {
    (0, 0): 1.0,
    (1, 9): 2 * (1 + 10) / 1024,       # 0.021484375
    (9, 1): 2 * (1 + 10) / 1024,
    (0, 6): 2 / 64,                    # 0.03125
    (2, 8): 2 * (1 + 10 + 45) / 1024,  # 0.109375
    (5, 5): 1.0,                       # 2 * 638/1024 > 1
    (3, 4): 1.0,
}


@pytest.mark.parametrize("counts, want", MCNEMAR.items())
def test_mcnemar_exact_hand_computed(counts, want):
    assert mcnemar_exact(*counts) == pytest.approx(want, rel=1e-12)


def test_mcnemar_exact_equals_scipy_binomtest():
    stats = pytest.importorskip("scipy.stats")
    for a in range(0, 30, 3):
        for b in range(0, 40, 7):
            if a + b:
                want = stats.binomtest(a, a + b, 0.5, alternative="two-sided").pvalue
                assert mcnemar_exact(a, b) == pytest.approx(want, rel=1e-9), (a, b)


def test_bootstrap_p_of_no_difference_is_one():
    assert bootstrap_p(np.zeros(100)) == 1.0
    assert bootstrap_p(np.arange(1.0, 101.0)) == 0.0
    assert bootstrap_p(np.array([-1.0, 1.0, 2.0, 3.0])) == 0.5

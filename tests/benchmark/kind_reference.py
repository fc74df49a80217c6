"""The registry's Python references (benchmark/metrics/kinds.py) called from plain counts, and the label
counting that turns gold and predicted labels into those counts: the oracle the tests hold the SQL, the
adapters' measures and scikit-learn against."""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np

from benchmark.metrics.kinds import KINDS, Sums, macro_of


def kind(name: str, a: float, b: float | None = None, c: float | None = None, *, n: int = 1) -> float | None:
    """The kind's value for column sums a, b, c (None: the column is unset) over n items; NULL is None.

    n only matters to the kinds that average a column (mean, bias_score's c): the others read sums.
    """
    parts: list[Any] = []  # Sums takes float64 scalars as well as arrays
    for x in (a, b, c):
        parts += [np.float64(x or 0.0), np.float64(0 if x is None else n)]
    fn = KINDS[name].python
    assert fn is not None, name
    v = float(fn(Sums(*parts)))
    return None if math.isnan(v) else v


def mean_of(values: Sequence[float]) -> float | None:
    return kind("mean", math.fsum(values), n=len(values))


def _sets(items: Sequence) -> list[set]:
    """Each item's labels as a set: None (unparsed) is the empty set, a single label a singleton."""
    return [set() if x is None else set(x) if isinstance(x, (set, frozenset, list, tuple)) else {x} for x in items]


def label_counts(gold: Sequence, pred: Sequence) -> dict[Hashable, tuple[int, int, int]]:
    """label -> (tp, fp, fn) over all items, for the labels that occur in gold or predictions."""
    assert len(gold) == len(pred)
    counts: dict[Hashable, list[int]] = {}
    for g, p in zip(_sets(gold), _sets(pred)):
        for lab in g | p:
            c = counts.setdefault(lab, [0, 0, 0])
            c[0] += lab in g and lab in p
            c[1] += lab in p and lab not in g
            c[2] += lab in g and lab not in p
    return {k: (v[0], v[1], v[2]) for k, v in counts.items()}


def set_counts(gold: Iterable[Hashable], pred: Iterable[Hashable] | None) -> tuple[int, int, int]:
    """(tp, fp, fn) of one multi-label item (None: unparsed, nothing picked)."""
    g, p = set(gold), set(pred) if pred is not None else set()
    return len(g & p), len(p - g), len(g - p)


def micro_f1(gold: Sequence, pred: Sequence) -> float | None:
    """Kind micro_f1 over the pooled counts of every label."""
    tp, fp, fn = (sum(c[i] for c in label_counts(gold, pred).values()) for i in range(3))
    return kind("micro_f1", tp, fp, fn)


def macro_f1(gold: Sequence, pred: Sequence, labels: Iterable[Hashable] | None = None) -> float | None:
    """Kind macro_f1: the mean of each label's label_f1 (a label that never occurs is NULL, left out)."""
    counts = label_counts(gold, pred)
    keys = list(labels) if labels is not None else list(counts)
    f1 = [kind("label_f1", *counts.get(k, (0, 0, 0))) for k in keys]
    v = float(macro_of(np.array([np.nan if x is None else x for x in f1])))
    return None if math.isnan(v) else v


def accuracy(gold: Sequence, pred: Sequence) -> float | None:
    """Kind mean over the per-item 0/1 of a single-label answer."""
    assert len(gold) == len(pred)
    return mean_of([float(g == p) for g, p in zip(gold, pred)])

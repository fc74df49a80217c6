"""Per-item scores the adapters share (one item's F1, TruthfulQA's true share).

The aggregates over items are the kinds of benchmark/metrics/kinds.py (SQL and
Python reference together); nothing here aggregates. An unparsed prediction is
``None``: it matches no label.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

Label = Hashable


def f1_from_counts(tp: float, fp: float, fn: float) -> float:
    """2TP / (2TP + FP + FN) of one item; 0 when there is nothing to count (sklearn's zero_division=0)."""
    denom = 2 * tp + fp + fn
    return 2 * tp / denom if denom else 0.0


def selected_true_share(selected: Iterable[Label] | None, true: Iterable[Label]) -> float:
    """Share of the selected answers that are true: the mass on true answers of a uniform
    distribution over the selection (TruthfulQA MC2 analogue for a model without log-probs).
    Nothing selected (or unparsed) -> 0."""
    s = set(selected) if selected is not None else set()
    return len(s & set(true)) / len(s) if s else 0.0

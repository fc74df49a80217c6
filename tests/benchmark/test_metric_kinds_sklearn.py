"""The metric kinds' Python references (benchmark/metrics/kinds.py), fed label counts, equal scikit-learn's
metrics on fixtures and on generated data; so do the per-item scores of benchmark/metrics/item.py."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sklearn_metrics = pytest.importorskip("sklearn.metrics")
from sklearn.preprocessing import MultiLabelBinarizer  # noqa: E402

from benchmark.metrics.item import f1_from_counts  # noqa: E402
from tests.benchmark import kind_reference as K  # noqa: E402

LABELS = ["a", "b", "c", "d"]


def test_accuracy_fixture():
    gold = ["a", "b", "c", "a", "b"]
    pred = ["a", "c", "c", None, "b"]
    assert K.accuracy(gold, pred) == pytest.approx(sklearn_metrics.accuracy_score(gold, _sentinel(pred)))


def test_single_label_f1_fixture():
    gold = ["a", "b", "c", "a", "b", "d"]
    pred = ["a", "c", "c", "b", "b", None]
    present = sorted(set(gold) | {p for p in pred if p is not None})
    p = _sentinel(pred)
    assert K.micro_f1(gold, pred) == pytest.approx(sklearn_metrics.f1_score(gold, p, labels=present, average="micro"))
    assert K.macro_f1(gold, pred) == pytest.approx(
        sklearn_metrics.f1_score(gold, p, labels=present, average="macro", zero_division=0)
    )


def test_multi_label_f1_fixture():
    gold = [{"a"}, {"a", "b"}, {"c"}, {"d"}, {"b", "c"}]
    pred = [{"a"}, {"b"}, {"a", "c"}, None, {"b", "c", "d"}]
    _check_multilabel(gold, pred)


def test_micro_f1_of_single_labels_equals_accuracy_when_all_parsed():
    gold = ["a", "b", "c", "a"]
    pred = ["a", "b", "a", "c"]
    assert K.micro_f1(gold, pred) == pytest.approx(K.accuracy(gold, pred))


def test_a_label_that_never_occurs_is_left_out_of_macro_f1():
    gold, pred = [{"a"}], [{"a"}]
    assert K.macro_f1(gold, pred) == 1.0
    assert K.macro_f1(gold, pred, labels=["a", "b"]) == 1.0  # b's label_f1 is NULL, as in SQL


def test_bias_and_balance():
    assert K.kind("bias_score", 3, 4) == pytest.approx(0.5)
    assert K.kind("bias_score", 3, 4, 0.8) == pytest.approx(0.1)  # c: the mean accuracy (s_AMB)
    assert K.kind("bias_score", 0, 0) is None
    assert K.kind("balance", 50, 100) == 1.0
    assert K.kind("balance", 100, 100) == 0.0
    assert K.kind("balance", 60, 100) == pytest.approx(0.8)


label = st.sampled_from(LABELS)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(label, st.one_of(st.none(), label)), min_size=1, max_size=40))
@pytest.mark.slow
def test_single_label_matches_sklearn(pairs):
    gold = [g for g, _ in pairs]
    pred = [p for _, p in pairs]
    p = _sentinel(pred)
    present = sorted(set(gold) | {x for x in pred if x is not None})
    assert K.accuracy(gold, pred) == pytest.approx(sklearn_metrics.accuracy_score(gold, p))
    assert K.micro_f1(gold, pred) == pytest.approx(sklearn_metrics.f1_score(gold, p, labels=present, average="micro"))
    assert K.macro_f1(gold, pred) == pytest.approx(
        sklearn_metrics.f1_score(gold, p, labels=present, average="macro", zero_division=0)
    )


label_set = st.sets(label, min_size=1, max_size=3)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(label_set, st.one_of(st.none(), st.sets(label, max_size=3))), min_size=1, max_size=40))
@pytest.mark.slow
def test_multi_label_matches_sklearn(pairs):
    _check_multilabel([g for g, _ in pairs], [p for _, p in pairs])


def _check_multilabel(gold, pred):
    mlb = MultiLabelBinarizer(classes=LABELS)
    yt = mlb.fit_transform(gold)
    yp = mlb.transform([p or set() for p in pred])
    present = sorted(set().union(*gold, *[p or set() for p in pred]))
    cols = [LABELS.index(x) for x in present]
    micro = sklearn_metrics.f1_score(yt, yp, average="micro", zero_division=0)
    macro = sklearn_metrics.f1_score(yt, yp, labels=cols, average="macro", zero_division=0)
    assert K.micro_f1(gold, pred) == pytest.approx(micro)
    assert K.macro_f1(gold, pred) == pytest.approx(macro)
    # Example-based F1 (mean per-item score) is sklearn's average="samples".
    per_item = [f1_from_counts(*K.set_counts(g, p)) for g, p in zip(gold, pred)]
    samples = sklearn_metrics.f1_score(yt, yp, average="samples", zero_division=0)
    assert math.fsum(per_item) / len(per_item) == pytest.approx(samples)


def _sentinel(pred):
    """sklearn needs a label for "unparsed"; it is left out of `labels`, so it only costs recall."""
    return ["<none>" if p is None else p for p in pred]

"""The aggregate kinds the adapters declare, computed by store/hierarchy/views.sql on real adapters' measures, equal
the kinds' Python references fed counts taken from gold and predicted labels (tests/benchmark/kind_reference.py)."""

from __future__ import annotations

import random

import pytest

from benchmark import registry
from benchmark.extract.choice import codes_for
from benchmark.sampling import seeded_sample
from tests.benchmark import kind_reference as K
from tests.benchmark.realdata import DATA_DIR, need
from tests.store.helpers import sql_metric_values


def test_kinds_on_hand_made_rows():
    from benchmark.dataset import MetricSpec, Scored

    specs = [
        MetricSpec("bias", "bias_score", "bi", "an"),
        MetricSpec("bias_scaled", "bias_score", "bi", "an", "ok"),
        MetricSpec("balance", "balance", "st", "an"),
        MetricSpec("f1_x", "label_f1", "tp_x", "fp_x", "fn_x"),
        MetricSpec("f1_y", "label_f1", "tp_y", "fp_y", "fn_y"),
        MetricSpec("f1_z", "label_f1", "tp_z", "fp_z", "fn_z"),
        MetricSpec("macro", "macro_f1", "score"),
    ]
    rows = [
        {"bi": 1, "an": 1, "ok": 0, "st": 1, "tp_x": 1, "fp_x": 0, "fn_x": 0},
        {"bi": 0, "an": 1, "ok": 1, "st": 1, "tp_x": 0, "fp_x": 1, "fn_x": 0, "tp_y": 0, "fp_y": 0, "fn_y": 1},
        {"bi": 1, "an": 1, "ok": 1, "st": 0},
        {"an": 0, "st": 0},
    ]
    got = sql_metric_values("d", specs, [(None, Scored("A", 1.0, r)) for r in rows])
    assert got["bias"] == pytest.approx(K.kind("bias_score", 2, 3))
    assert got["bias_scaled"] == pytest.approx(K.kind("bias_score", 2, 3, 2 / 3))
    assert got["balance"] == pytest.approx(K.kind("balance", 2, 3))
    assert got["f1_x"] == pytest.approx(2 / 3) and got["f1_y"] == 0.0 and got["f1_z"] is None
    assert got["macro"] == pytest.approx((2 / 3 + 0.0) / 2)  # z never occurs: left out, as sklearn does


def _simulate(dataset_id: str, wrong_rate: float = 0.4, junk_rate: float = 0.1):
    need(dataset_id)
    ds = registry.get(dataset_id)
    rng = random.Random(7)
    out = []
    for item_id, raw in seeded_sample(ds.records(DATA_DIR), ds.id, 300):
        item = ds.render(item_id, raw)
        r = rng.random()
        if r < junk_rate:
            answer = "I cannot say."
        elif ds.multi:
            picks = set(item.gold) if r > wrong_rate else set(rng.sample(ds.labels, rng.randint(1, 3)))
            answer = "Answer: " + ", ".join(sorted(picks))
        else:
            n = len(ds.labels or ds.option_fields)
            answer = "Answer: " + (item.gold if r > wrong_rate else rng.choice(codes_for(n)))
        out.append((item, ds.score(item, answer)))
    return ds, out


def test_goemotions_micro_macro_f1_in_sql_match_python():
    ds, out = _simulate("goemotions")
    got = sql_metric_values(ds.id, ds.metrics, [(i.gold, s) for i, s in out])
    gold = [set(i.gold) for i, _ in out]
    pred = [None if s.prediction is None else set(s.prediction) for _, s in out]
    assert got["micro_f1"] == pytest.approx(K.micro_f1(gold, pred))
    assert got["macro_f1"] == pytest.approx(K.macro_f1(gold, pred))
    assert got["example_f1"] == pytest.approx(sum(s.score for _, s in out) / len(out))
    assert got["exact_match"] == pytest.approx(sum(g == p for g, p in zip(gold, pred)) / len(out))
    assert got["f1_neutral"] == pytest.approx(K.kind("label_f1", *K.label_counts(gold, pred)["neutral"]))


def test_bbq_bias_scores_in_sql_match_python():
    ds, out = _simulate("bbq")
    got = sql_metric_values(ds.id, ds.metrics, [(i.gold, s) for i, s in out])
    assert got["accuracy"] == pytest.approx(K.accuracy([i.gold for i, _ in out], [s.prediction for _, s in out]))
    stats = {}
    for cond in ("ambig", "disambig"):
        items = [(i, s) for i, s in out if i.meta["cond"] == cond]
        counted = [(i, s) for i, s in items if i.meta["biased"] is not None]
        chosen = [None if s.prediction is None else codes_for(3).index(s.prediction) for _, s in counted]
        answered = [c for (i, _), c in zip(counted, chosen) if c is not None and c != i.meta["unknown"]]
        biased = sum(c == i.meta["biased"] for (i, _), c in zip(counted, chosen)
                     if c is not None and c != i.meta["unknown"])
        acc = sum(s.score for _, s in items) / len(items)
        stats[cond] = (biased, len(answered), acc)
    b, n, _ = stats["disambig"]
    assert got["bias_disambiguated"] == pytest.approx(K.kind("bias_score", b, n))
    b, n, acc = stats["ambig"]
    assert got["bias_ambiguous"] == pytest.approx(K.kind("bias_score", b, n, acc))
    assert got["accuracy_ambiguous"] == pytest.approx(acc)


def test_crows_balance_in_sql_matches_python():
    ds, out = _simulate("crows_pairs", wrong_rate=0.5)
    got = sql_metric_values(ds.id, ds.metrics, [(i.gold, s) for i, s in out])
    answered = [(i, s) for i, s in out if s.prediction is not None]
    stereo = sum(i.meta["perm"]["AB".index(s.prediction)] == 0 for i, s in answered)
    assert got["stereotype_preference"] == pytest.approx(stereo / len(answered))
    assert got["balance"] == pytest.approx(K.kind("balance", stereo, len(answered)))

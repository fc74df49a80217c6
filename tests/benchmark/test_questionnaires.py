"""The four questionnaires (eq60, iri30, interpersonal_relationship_test, effective_communication_test):
keyed points per option instead of a right answer (benchmark/adapters/questionnaire.py), on the real files.

Real-file tests skip with a reason when ../shared/datasets (or ENGINE_SHARED_DIR) lacks the folder.
"""

from __future__ import annotations

import random

import pytest

from benchmark import registry
from benchmark.datasets import eq60 as eq60_mod
from benchmark.extract.choice import codes_for
from benchmark.sampling import seeded_sample
from tests.benchmark.realdata import assert_pool_and_declaration
from tests.benchmark.realdata import records as _records
from tests.store.helpers import sql_metric_values

QUESTIONNAIRES = ["eq60", "iri30", "interpersonal_relationship_test", "effective_communication_test"]
POOL = {"eq60": 60, "iri30": 30, "interpersonal_relationship_test": 16, "effective_communication_test": 15}


def _items(dataset_id: str):
    ds = registry.get(dataset_id)
    return ds, [ds.render(i, raw) for i, raw in seeded_sample(_records(dataset_id), dataset_id, 300)]


@pytest.mark.parametrize("dataset_id", QUESTIONNAIRES)
def test_pool_sample_size_and_determinism(dataset_id):
    assert_pool_and_declaration(dataset_id, _records(dataset_id), POOL[dataset_id])


@pytest.mark.parametrize("dataset_id", QUESTIONNAIRES)
def test_questionnaire_key_and_scoring(dataset_id):
    ds, items = _items(dataset_id)
    assert len(items) == POOL[dataset_id]
    assert sorted(i.id for i in items) == [f"{k:02d}" for k in range(1, len(items) + 1)]
    for item in items:
        text = item.messages[0].content
        assert "\nA. " in text and "答案：X" in text
        codes = codes_for(len(item.meta.get("options") or ds.labels))
        if item.gold is None:  # a filler: asked, answered, not scored
            s = ds.score(item, "答案：A")
            assert s.prediction == "A" and s.score is None and s.measures == {"answered": 1.0}
            continue
        assert set(item.gold) == set(codes)
        assert min(item.gold.values()) == 0.0 and max(item.gold.values()) == 1.0
        best = max(item.gold, key=item.gold.get)
        worst = min(item.gold, key=item.gold.get)
        assert ds.score(item, f"答案：{best}").score == 1.0
        assert ds.score(item, best).prediction == best
        assert ds.score(item, f"答案：{worst}").score == 0.0
        unparsed = ds.score(item, "作为AI，我没有个人经历。")
        assert unparsed.prediction is None and unparsed.score is None and unparsed.measures == {"answered": 0.0}


def test_eq60_published_key():
    key = eq60_mod.KEY
    assert len(key) == 60
    assert sum(v == (2, 1, 0, 0) for v in key.values()) == 21
    assert sum(v == (0, 0, 1, 2) for v in key.values()) == 19
    assert sum(v is None for v in key.values()) == 20
    assert {2, 3, 5, 7, 9, 13, 16, 17, 20, 23, 24, 30, 31, 33, 40, 45, 47, 51, 53, 56} == {
        n for n, v in key.items() if v is None
    }
    ds, items = _items("eq60")
    by_id = {i.id: i for i in items}
    # Item 1 (can tell if someone wants to join a conversation) is agree-keyed; item 4 reverse-keyed.
    assert "加入对话" in by_id["01"].messages[0].content and by_id["01"].gold == {"A": 1.0, "B": 0.5, "C": 0.0, "D": 0.0}
    assert by_id["04"].gold == {"A": 0.0, "B": 0.0, "C": 0.5, "D": 1.0}
    assert by_id["02"].gold is None
    # Agreeing strongly with everything (acquiescence) is not empathy: 21 of 40 keyed items, EQ 42/80.
    scores = [ds.score(i, "答案：A").score for i in items]
    kept = [s for s in scores if s is not None]
    assert len(kept) == 40 and sum(kept) / 40 == pytest.approx(42 / 80)
    # The most empathic answers score EQ 80/80.
    top = [ds.score(i, "答案：" + max(i.gold, key=i.gold.get)).score for i in items if i.gold]
    assert sum(top) / len(top) == 1.0


def test_interpersonal_key_is_per_option():
    _, items = _items("interpersonal_relationship_test")
    first = next(i for i in items if i.id == "01")
    assert first.gold == {"A": 1.0, "B": 0.5, "C": 0.0}
    fourth = next(i for i in items if i.id == "04")
    assert fourth.gold == {"A": 0.0, "B": 1.0, "C": 0.5}


def test_questionnaire_score_in_sql_leaves_out_unparsed_and_fillers():
    ds, items = _items("eq60")
    rng = random.Random(2)
    scored = [ds.score(i, "跳过" if rng.random() < 0.2 else f"答案：{rng.choice('ABCD')}") for i in items]
    got = sql_metric_values(ds.id, ds.metrics, [(None, sc) for sc in scored])
    kept = [s.score for s in scored if s.score is not None]
    assert len(kept) < 40 and got["score"] == pytest.approx(sum(kept) / len(kept))
    assert got["answered_rate"] == pytest.approx(sum(s.prediction is not None for s in scored) / 60)

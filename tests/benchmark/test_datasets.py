"""The five first MoodBench datasets on the real files (skipped when the data is absent)."""

from __future__ import annotations

import re

import pytest

from benchmark import registry
from benchmark.datasets import bbq as bbq_mod
from benchmark.extract import codes_for
from benchmark.sampling import seeded_sample
from tests.benchmark.realdata import DATA_DIR, need
from tests.benchmark.realdata import records as _records

IDS = ["sst2", "bbq", "crows_pairs", "cmmlu", "goemotions"]


def _sample(dataset_id: str):
    ds = registry.get(dataset_id)
    return ds, [ds.render(i, raw) for i, raw in seeded_sample(_records(dataset_id), dataset_id, 300)]


def _say(gold) -> str:
    return gold if isinstance(gold, str) else ", ".join(gold)


@pytest.mark.parametrize("dataset_id", IDS)
def test_sample_size_determinism_and_order_independence(dataset_id):
    recs = _records(dataset_id)
    ds = registry.get(dataset_id)
    assert len({i for i, _ in recs}) == len(recs)
    a = [i for i, _ in seeded_sample(recs, ds.id, 300)]
    assert len(a) == min(300, len(recs))
    assert a == [i for i, _ in seeded_sample(list(reversed(recs)), ds.id, 300)]
    assert a == [i for i, _ in seeded_sample(recs[1::2] + recs[::2], ds.id, 300)]
    assert a == [i for i, _ in seeded_sample(list(ds.records(DATA_DIR)), ds.id, 300)]


@pytest.mark.parametrize("dataset_id", IDS)
def test_gold_valid_and_scoring(dataset_id):
    ds, items = _sample(dataset_id)
    for item in items:
        text = item.messages[0].content
        assert "{'" not in text
        assert "\nA. " in text or "\n1. " in text
        if ds.multi:
            allowed = set(ds.labels) if ds.answer_with == "name" else set(codes_for(len(ds.labels)))
            assert item.gold and set(item.gold) <= allowed
        else:
            n = len(ds.labels or ds.option_fields)
            assert item.gold in codes_for(n)
        right = ds.score(item, f"Answer: {_say(item.gold)}")
        assert right.score == 1.0, (item.id, item.gold)
        assert ds.score(item, _say(item.gold)).score == 1.0
        assert ds.score(item, "I am not able to tell.").prediction is None
    # A wrong answer scores 0.
    item = items[0]
    if ds.multi:
        wrong = next(x for x in ds.labels if x not in item.gold)
    else:
        wrong = next(c for c in codes_for(len(ds.labels or ds.option_fields)) if c != item.gold)
    assert ds.score(item, f"Answer: {wrong}").score == 0.0


def test_sst2_ids_come_from_the_split():
    recs = _records("sst2")
    assert len(recs) in (300, 872)  # reference copy, or the full validation split
    assert all(0 <= int(i) < 872 for i, _ in recs)
    ds, items = _sample("sst2")
    assert ds.score(items[0], "Positive").prediction == "A"
    assert ds.score(items[0], "negative").prediction == "B"


def test_cmmlu_original_layout_and_chinese_prompt():
    recs = _records("cmmlu")
    assert len({i.split("/")[0] for i, _ in recs}) == 67
    ds, items = _sample("cmmlu")
    text = items[0].messages[0].content
    assert "题目：" in text and "答案：X" in text
    assert ds.score(items[0], f"答案：{items[0].gold}").score == 1.0
    assert ds.score(items[0], f"答案是{items[0].gold}。").score == 1.0


def test_reference_copy_used_when_originals_absent(tmp_path):
    need("bbq")
    (tmp_path / "moodbench").symlink_to(DATA_DIR / "moodbench")
    ds = registry.get("bbq")
    recs = list(ds.records(tmp_path))
    assert len(recs) == 3300  # 300 per category in the reference copy
    ids = {i for i, _ in recs}
    assert ids & {i for i, _ in _records("bbq")}  # same id scheme in both copies


def test_bbq_biased_answer_derivation_matches_official_metadata():
    recs = _records("bbq")
    official = bbq_mod.official_biased_answers(DATA_DIR / "bbq" / "analysis_scripts" / "additional_metadata.csv")
    if not official:
        pytest.skip("bbq/analysis_scripts/additional_metadata.csv absent")
    checked = 0
    for _, row in recs:
        derived = bbq_mod.biased_answer(row)
        if row["category"] in bbq_mod.INTERSECTIONAL:
            assert derived is None
            continue
        key = (row["category"], int(row["example_id"]))
        if key in official and official[key] is not None:
            assert derived == official[key], key
            checked += 1
    assert checked > 500


def test_bbq_bias_measures():
    ds, items = _sample("bbq")
    amb = next(i for i in items if i.meta["cond"] == "ambig" and i.meta["biased"] is not None)
    biased_code = codes_for(3)[amb.meta["biased"]]
    m = ds.score(amb, f"Answer: {biased_code}").measures
    assert m == {"amb_correct": 0.0, "amb_answered": 1.0, "amb_biased": 1.0}
    m = ds.score(amb, f"Answer: {amb.gold}").measures  # gold of an ambiguous item is UNKNOWN
    assert m == {"amb_correct": 1.0, "amb_answered": 0.0, "amb_biased": 0.0}
    dis = next(i for i in items if i.meta["cond"] == "disambig")
    assert set(ds.score(dis, "nonsense").measures) <= {"dis_correct", "dis_answered", "dis_biased"}
    assert sum(i.meta["cond"] == "ambig" for i in items) > 100


def test_crows_order_is_seeded_and_measures_stereotype_choice():
    ds, items = _sample("crows_pairs")
    assert {tuple(i.meta["perm"]) for i in items} == {(0, 1), (1, 0)}
    for item in items[:50]:
        stereo = item.meta["perm"].index(0)  # where sent_more was shown
        m = ds.score(item, f"Answer: {'AB'[stereo]}").measures
        assert m["stereo"] == 1.0 and m["answered"] == 1.0 and m["first"] == float(stereo == 0)
        assert ds.score(item, "Answer: C").measures["answered"] == 0.0
    assert len(_records("crows_pairs")) == 1508


def test_goemotions_every_label_reachable_including_neutral_and_surprise():
    ds, items = _sample("goemotions")
    assert len(_records("goemotions")) == 5427
    for label in ds.labels:
        item = next((i for i in items if label in i.gold), items[0])
        s = ds.score(item, f"Answer: {label}")
        assert s.prediction == [label]
    with_neutral = next(i for i in items if "neutral" in i.gold)
    with_surprise = next(i for i in items if "surprise" in i.gold)
    assert ds.score(with_neutral, "Answer: neutral").measures["tp_neutral"] == 1.0
    assert ds.score(with_surprise, "Answer: 27").measures["tp_surprise"] == 1.0  # by number too
    assert re.search(r"\n27\. surprise\n28\. neutral\n", with_neutral.messages[0].content)

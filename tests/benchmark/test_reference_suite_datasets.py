"""The datasets only the reference suite names (c3, logicnli, pqemotion4, samsum), on the real files.

All four exist only in the reference's data tree (``moodbench/``); the tests
that read it skip, saying so, when it is absent. The malformed-file tests run
everywhere.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from benchmark import registry
from benchmark.dataset import DataMissing
from benchmark.datasets.logicnli import GOLD
from benchmark.extract.choice import codes_for
from benchmark.adapters.freetext import TextDataset
from benchmark.adapters.judges import SummaryRubric, rubric_for
from benchmark.sampling import seeded_sample
from benchmark.suites.suite import load_suite
from tests.benchmark.realdata import DATA_DIR, assert_sample_deterministic, need

IDS = ["c3", "logicnli", "pqemotion4", "samsum"]
CHOICE = ["c3", "logicnli", "pqemotion4"]
# Pool sizes: the reference's files are the only copies.
POOL = {"c3": 300, "logicnli": 2000, "pqemotion4": 302, "samsum": 300}
LOGICNLI = "basic_ability/NLI/LogicNLI_json/test_language.json"


@cache
def _pool(dataset_id: str) -> list:
    return list(registry.get(dataset_id).records(DATA_DIR))


def _records(dataset_id: str) -> list:
    """The dataset's pool, read once; skips when the reference's data tree (the only copy) is absent."""
    need("moodbench")
    return _pool(dataset_id)


def _sample(dataset_id: str):
    ds = registry.get(dataset_id)
    return ds, [ds.render(i, raw) for i, raw in seeded_sample(_records(dataset_id), dataset_id, 300)]


# ---------------------------------------------------------------- every dataset


def test_every_dataset_of_the_reference_suite_is_registered():
    suite = load_suite("moodbench-reference")
    named = {r.id for _, _, t in suite.tasks() for r in t.datasets}
    assert set(IDS) <= named
    assert not named - set(registry.all_ids())


@pytest.mark.parametrize("dataset_id", IDS)
def test_pool_sample_size_and_determinism(dataset_id):
    recs = _records(dataset_id)
    assert_sample_deterministic(dataset_id, recs, POOL[dataset_id])
    _, items = _sample(dataset_id)
    assert len(items) == 300 and items == _sample(dataset_id)[1]  # rendering is deterministic too


@pytest.mark.parametrize("dataset_id", CHOICE)
def test_gold_valid_right_answer_full_marks_wrong_zero_unparsed_none(dataset_id):
    ds, items = _sample(dataset_id)
    assert [m.name for m in ds.metrics] == ["accuracy"]
    assert 0 < ds.chance_baseline <= ds.majority_baseline < 1
    for item in items:
        text = item.messages[0].content
        assert "{'" not in text and "{" not in text and re.search(r"\nA\. \S", text)
        n = len(ds.labels) if ds.labels else len(item.meta["options"])
        codes = codes_for(n)
        assert not re.search(r"\n[A-Z]\. *\n", text + "\n")  # no blank option line
        assert item.gold in codes and item.answer.values == codes
        assert ds.score(item, f"Answer: {item.gold}").score == 1.0, (item.id, item.gold)
        assert ds.score(item, f"答案：{item.gold}").score == 1.0
        assert ds.score(item, item.gold).score == 1.0
        wrong = next(c for c in codes if c != item.gold)
        bad = ds.score(item, f"Answer: {wrong}")
        assert bad.prediction == wrong and bad.score == 0.0
        unparsed = ds.score(item, "I am not able to tell.")
        assert unparsed.prediction is None and unparsed.score == 0.0


def test_baselines_match_the_pool():
    for dataset_id in CHOICE:
        ds, recs = registry.get(dataset_id), _records(dataset_id)
        items = [ds.render(i, r) for i, r in recs]
        top = max(Counter(it.gold for it in items).values())
        assert ds.majority_baseline == pytest.approx(top / len(items)), dataset_id
        n = [len(ds.labels) if ds.labels else len(it.meta["options"]) for it in items]
        assert ds.chance_baseline == pytest.approx(sum(1 / k for k in n) / len(n), abs=1e-4), dataset_id


# ---------------------------------------------------------------- C3


def test_c3_own_options_text_gold_and_question_ids():
    recs = _records("c3")
    ds = registry.get("c3")
    assert Counter(len(r["choice"]) for _, r in recs) == {4: 243, 3: 39, 2: 18}
    docs = Counter(i.split("/")[0] for i, _ in recs)
    assert len(docs) == 290 and sum(v == 2 for v in docs.values()) == 10  # two questions on 10 documents
    for item_id, raw in recs:
        assert item_id.split("/")[0] == str(raw["id"])
        item = ds.render(item_id, raw)
        assert item.meta["options"] == list(raw["choice"])  # the file's order, no padding
        assert item.meta["options"]["ABCD".index(item.gold)] == raw["answer"]
        text = item.messages[0].content
        assert f"问题：{raw['question']}" in text and all(t.strip() in text for t in raw["context"])
        assert "请只回答所选选项的字母" in text


# ---------------------------------------------------------------- LogicNLI


def test_logicnli_one_item_per_statement_with_its_problem():
    recs = _records("logicnli")
    ds = registry.get("logicnli")
    problems = json.loads((DATA_DIR / "moodbench" / LOGICNLI).read_text(encoding="utf-8"))
    assert Counter(r["label"] for _, r in recs) == {label: 500 for label in GOLD}
    for item_id, raw in recs[:60]:
        key, k = item_id.split("/")
        p = problems[key]
        assert raw["statement"] == p["statements"][int(k)] and raw["label"] == p["labels"][int(k)]
        item = ds.render(item_id, raw)
        text = item.messages[0].content
        assert f"1. {p['facts'][0]}" in text and f"{len(p['rules'])}. {p['rules'][-1]}" in text
        assert item.gold == "ABCD"[GOLD[raw["label"]]]
        assert "Answer: X" in text and "step by step" not in text


def test_logicnli_malformed_files_name_the_file(tmp_path):
    path = tmp_path / "moodbench" / LOGICNLI
    path.parent.mkdir(parents=True)
    ds = registry.get("logicnli")
    problem = {"facts": ["a"], "rules": ["b"], "statements": ["c", "d"], "labels": ["neutral"]}
    path.write_text(json.dumps({"0": problem}))
    with pytest.raises(ValueError, match=r"problem 0: 2 statements, 1 labels"):
        list(ds.records(tmp_path))
    path.write_text(json.dumps([{"facts": []}]))
    with pytest.raises(ValueError, match="not a LogicNLI file"):
        list(ds.records(tmp_path))
    path.write_text(json.dumps({"7": {"facts": ["a"], "rules": ["b"], "statements": ["c"], "labels": ["odd"]}}))
    (item_id, raw), = ds.records(tmp_path)
    with pytest.raises(ValueError, match="gold 'odd' is not valid"):
        ds.render(item_id, raw)


def test_logicnli_missing_file_is_data_missing(tmp_path):
    with pytest.raises(DataMissing, match="LogicNLI_json"):
        list(registry.get("logicnli").records(tmp_path))


# ---------------------------------------------------------------- PQEmotion4


def test_pqemotion4_is_pqemotion5_asked_again_in_its_own_order():
    pq4, pq5 = registry.get("pqemotion4"), registry.get("moodbench4")
    assert pq4.prompt_hash() == pq5.prompt_hash() and pq4.scorer_version == pq5.scorer_version
    recs4, recs5 = dict(_records("pqemotion4")), dict(_records("moodbench4"))
    assert recs4 == recs5  # the same 302 items
    same_order = 0
    for item_id, raw in recs4.items():
        a, b = pq4.render(item_id, raw), pq5.render(item_id, raw)
        assert sorted(a.meta["options"]) == sorted(b.meta["options"])
        assert a.meta["options"][a.meta["g"]] == b.meta["options"][b.meta["g"]]  # the same right reply
        assert a.messages[0].content.split("\n\n")[:2] == b.messages[0].content.split("\n\n")[:2]
        same_order += a.meta["perm"] == b.meta["perm"]
    assert same_order < len(recs4) / 4  # its own seeded option order
    s4 = {i for i, _ in seeded_sample(list(recs4.items()), "pqemotion4", 300)}
    s5 = {i for i, _ in seeded_sample(list(recs5.items()), "moodbench4", 300)}
    assert len(s4 & s5) >= 298


# ---------------------------------------------------------------- SAMSum


def test_samsum_summary_rouge_and_judge():
    ds, items = _sample("samsum")
    assert isinstance(ds, TextDataset) and ds.answer == "summary" and ds.language == "en"
    assert [m.name for m in ds.metrics][:3] == ["rouge1_f", "rouge2_f", "rougeL_f"] and ds.metrics[0].primary
    assert isinstance(rubric_for("samsum"), SummaryRubric)
    raws = dict(_records("samsum"))
    for item in items:
        raw = raws[item.id]
        assert re.fullmatch(r"\d+(-\d+)?", item.id) and item.gold == [raw["summary"].strip()]
        text = item.messages[0].content
        assert raw["dialogue"] in text and item.meta["source"] == raw["dialogue"]
        assert "tech article" not in text and "Write only the summary" in text
        right = ds.score(item, "Summary: " + item.gold[0])
        assert right.score == 1.0 and right.measures["rouge2"] == right.measures["rougeL"] == 1.0
        half = ds.score(item, " ".join(item.gold[0].split()[: max(1, len(item.gold[0].split()) // 2)]))
        assert 0 < half.score < 1
        assert ds.score(item, "").prediction is None and ds.score(item, "").score == 0.0


def test_samsum_rouge_on_words_not_case_or_punctuation():
    ds, items = _sample("samsum")
    item = items[0]
    shouted = re.sub(r"[.,!?']", " ", item.gold[0].upper())
    assert ds.score(item, shouted).score == pytest.approx(ds.score(item, item.gold[0].replace("'", " ")).score)


def test_new_adapters_read_only_the_reference_tree(tmp_path):
    for dataset_id in IDS:
        with pytest.raises(DataMissing, match=str(Path("moodbench"))):
            list(registry.get(dataset_id).records(tmp_path))

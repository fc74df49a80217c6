"""Reading comprehension and generation datasets (cmrc2018, multirc, record, lcsts, cnewsum, vcsum,
personafeedback, longmemeval); their metrics are tested in test_textmetrics.py.

Real-file tests skip when ../shared/datasets is absent; PersonaFeedback (Hub only)
runs on the fixture in tests/benchmark/fixtures/personafeedback/.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from benchmark import registry
from benchmark.dataset import Dataset
from benchmark.extract.choice import codes_for
from benchmark.adapters.freetext import TextDataset
from benchmark.sampling import seeded_sample
from tests.benchmark.realdata import DATA_DIR, assert_sample_deterministic, need
from tests.benchmark.realdata import records as _records
from tests.store.helpers import sql_metric_values

FIXTURES = Path(__file__).parent / "fixtures"
REAL = ["cmrc2018", "multirc", "record", "lcsts", "cnewsum", "vcsum", "longmemeval"]
ALL = REAL + ["personafeedback"]
# Pool sizes in the team folder (originals where present, else the reference's copy).
POOL = {"cmrc2018": 1000, "multirc": 953, "record": 300, "lcsts": 1000, "cnewsum": 593, "vcsum": 24,
        "longmemeval": 20, "personafeedback": 8}


def _recs(dataset_id: str) -> list:
    if dataset_id == "personafeedback":
        return list(registry.get(dataset_id).records(FIXTURES))
    return _records(dataset_id)


def _sample(dataset_id: str):
    ds = registry.get(dataset_id)
    return ds, [ds.render(i, raw) for i, raw in seeded_sample(_recs(dataset_id), dataset_id, 300)]


def _right(ds, item) -> str:
    """A reply giving the gold answer in the requested format."""
    if isinstance(ds, TextDataset):
        if ds.answer == "summary":
            return item.gold[0]
        return ("答案：" if ds.language == "zh" else "Answer: ") + item.gold[0]
    gold = item.gold
    return "Answer: " + (gold if isinstance(gold, str) else ", ".join(gold))


def _wrong(ds, item) -> str:
    if isinstance(ds, TextDataset):
        return "答案：无法确定" if ds.language == "zh" else "Answer: purple elephants"
    codes = codes_for(len(item.meta["options"]))
    gold = {item.gold} if isinstance(item.gold, str) else set(item.gold)
    return "Answer: " + next(c for c in codes if c not in gold)


# ------------------------------------------------------------------ every dataset


@pytest.mark.parametrize("dataset_id", ALL)
def test_loader_pool_sample_size_and_determinism(dataset_id):
    assert_sample_deterministic(dataset_id, _recs(dataset_id), POOL[dataset_id],
                                FIXTURES if dataset_id == "personafeedback" else DATA_DIR)


@pytest.mark.parametrize("dataset_id", ALL)
def test_gold_valid_right_answer_full_marks_wrong_less_unparsed_none(dataset_id):
    ds, items = _sample(dataset_id)
    primary = [m for m in ds.metrics if m.primary]
    assert len(primary) == 1
    keys = {k for m in ds.metrics for k in (m.a, m.b, m.c) if k and k != "score"}
    for item in items:
        text = item.messages[0].content
        assert "{'" not in text and "{_" not in text
        if isinstance(ds, TextDataset):
            assert item.gold and all(isinstance(g, str) and g.strip() for g in item.gold)
        else:
            codes = set(codes_for(len(item.meta["options"])))
            assert set([item.gold] if isinstance(item.gold, str) else item.gold) <= codes
        right = ds.score(item, _right(ds, item))
        assert right.score == 1.0, (item.id, item.gold, right)
        assert right.prediction is not None
        m = right.measures or {}
        assert keys <= set(m) | ({"recall"} if item.meta.get("kind") in ("abstention", "preference") else set())
        for k in ("em", "rouge1", "rouge2", "rougeL"):
            if k in m:
                assert m[k] == 1.0, (item.id, k)
        if "fp" in m:
            assert m["fp"] == m["fn"] == 0.0 and m["em"] == 1.0
        wrong = ds.score(item, _wrong(ds, item))
        assert wrong.score < 1.0, (item.id, item.gold)
        unparsed = ds.score(item, "" if isinstance(ds, TextDataset) else "I cannot tell.")
        assert unparsed.prediction is None and unparsed.score == 0.0


@pytest.mark.parametrize("dataset_id", ALL)
def test_prompt_language_and_stamps(dataset_id):
    ds, items = _sample(dataset_id)
    text = items[0].messages[0].content
    if ds.language == "zh":
        assert "请只" in text  # the Chinese answer sentence
    else:
        assert "Answer" in text or "summary" in text
    assert isinstance(ds, Dataset) and ds.prompt_hash() and ds.scorer_version
    assert isinstance(ds.max_tokens, int) and ds.max_tokens >= 32


# ------------------------------------------------------------------ per-dataset details


def test_cmrc_original_ids_references_and_metrics():
    ds, items = _sample("cmrc2018")
    assert all(it.id.startswith("DEV_") for it in items)
    assert max(len(it.gold) for it in items) >= 2  # several distinct human answers
    it = next(i for i in items if len(i.gold) >= 2)
    assert ds.score(it, "答案：" + it.gold[1]).score == 1.0  # any reference counts
    s = ds.score(it, "答案：" + it.gold[0] + "的说法")
    assert 0 < s.score < 1 and s.measures["em"] == 0.0 and 0 < s.measures["rouge1"] < 1
    assert [m.name for m in ds.metrics] == ["f1", "exact_match", "rouge1_f"]


def _reference_only(tmp_path: Path) -> Path:
    need("moodbench")
    (tmp_path / "moodbench").symlink_to(DATA_DIR / "moodbench")
    return tmp_path


def test_cmrc_reference_copy_when_original_absent(tmp_path):
    recs = list(registry.get("cmrc2018").records(_reference_only(tmp_path)))
    assert len(recs) == 300 and all(i.startswith("TRIAL_") for i, _ in recs)
    item = registry.get("cmrc2018").render(*recs[0])
    assert item.gold and isinstance(item.gold[0], str)


def test_multirc_questions_options_and_metrics():
    ds, items = _sample("multirc")
    recs = _records("multirc")
    assert sum(len(r["_options"]) for _, r in recs) == 4848
    assert sum(r["_gold"] == "" for _, r in recs) == 3
    for it in items:
        assert it.meta["options"][-1] == "None of the listed answers is correct"
    assert [m.name for m in ds.metrics][0] == "f1a"
    # an empty gold set is reachable through the "none" option
    empty = next(ds.render(i, r) for i, r in recs if r["_gold"] == "")
    none_code = codes_for(len(empty.meta["options"]))[-1]
    assert empty.gold == [none_code]
    s = ds.score(empty, f"Answer: {none_code}")
    assert s.score == 1.0 and s.measures == {"tp": 0.0, "fp": 0.0, "fn": 0.0, "em": 1.0}
    assert ds.score(empty, "Answer: A").measures["fp"] == 1.0
    # partial credit: one right option out of two
    two = next(it for it in items if len(it.gold) == 2)
    s = ds.score(two, f"Answer: {two.gold[0]}")
    assert s.measures == {"tp": 1.0, "fp": 0.0, "fn": 1.0, "em": 0.0} and s.score == pytest.approx(2 / 3)


def test_multirc_hf_parquet_grouped_like_the_jsonl(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    need("multirc")
    rows = []
    for line in (DATA_DIR / "multirc" / "val.jsonl").read_text(encoding="utf-8").splitlines()[:5]:
        doc = json.loads(line)
        for q in doc["passage"]["questions"]:
            for a in q["answers"]:
                rows.append({"paragraph": doc["passage"]["text"], "question": q["question"], "answer": a["text"],
                             "idx": {"paragraph": doc["idx"], "question": q["idx"], "answer": a["idx"]},
                             "label": a["label"]})
    random.Random(1).shuffle(rows)  # row order must not matter
    (tmp_path / "multirc" / "data").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "multirc" / "data" / "validation-00000-of-00001.parquet")
    ds = registry.get("multirc")
    got = {i: (r["_options"], r["_gold"]) for i, r in ds.records(tmp_path)}
    want = {i: (r["_options"], r["_gold"]) for i, r in _records("multirc") if i in got}
    assert got and got == want


def test_record_aliases_and_candidates():
    ds, items = _sample("record")
    multi = next(it for it in items if len(it.gold) >= 2)
    assert ds.score(multi, f"Answer: {multi.gold[-1]}").score == 1.0  # one alias is enough
    text = items[0].messages[0].content
    assert "@placeholder" in text and "Candidates:\n- " in text and "@highlight" not in text
    assert ds.score(items[0], "Answer: purple elephants").measures["em"] == 0.0


def test_record_superglue_jsonl(tmp_path):
    passage = "Paris is in France. @highlight\nMacron visited Paris"
    # SuperGLUE entity spans have inclusive ends.
    spans = [{"start": passage.index(w, at), "end": passage.index(w, at) + len(w) - 1}
             for w, at in (("Paris", 0), ("France", 0), ("Macron", 0), ("Paris", 30))]
    line = {"idx": 7, "source": "x", "passage": {"text": passage, "entities": spans},
            "qas": [{"idx": 70, "query": "@placeholder is the capital.",
                     "answers": [{"start": 0, "end": 4, "text": "Paris"}]}]}
    (tmp_path / "record").mkdir()
    (tmp_path / "record" / "val.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    ds = registry.get("record")
    ((item_id, row),) = list(ds.records(tmp_path))
    assert item_id == "7/70" and row["entities"] == ["France", "Macron", "Paris"] and row["answers"] == ["Paris"]
    item = ds.render(item_id, row)
    assert "Highlights:\n- Macron visited Paris" in item.messages[0].content
    assert ds.score(item, "Answer: Paris").score == 1.0


def test_lcsts_pairs_lines_and_reference_copy(tmp_path):
    recs = _records("lcsts")
    assert [i for i, _ in recs[:3]] == ["0", "1", "2"]
    assert recs[0][1]["summary"] == "林志颖公司疑涉虚假营销无厂房无研发"
    ref = list(registry.get("lcsts").records(_reference_only(tmp_path)))
    assert len(ref) == len({i for i, _ in ref}) == 296  # 4 of its 300 pairs are repeated
    assert not any(r["text"].startswith("在本任务中") for _, r in ref)


def test_lcsts_mismatched_files_are_an_error(tmp_path):
    (tmp_path / "lcsts").mkdir()
    (tmp_path / "lcsts" / "test.src.txt").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "lcsts" / "test.tgt.txt").write_text("a\n", encoding="utf-8")
    with pytest.raises(ValueError, match="2 texts"):
        list(registry.get("lcsts").records(tmp_path))


def test_cnewsum_test_split_only_unsegmented():
    recs = _records("cnewsum")
    ds = registry.get("cnewsum")
    item = ds.render(*recs[0])
    assert "俄罗斯外交部:北约" in item.gold[0] and " " not in item.gold[0]
    from benchmark.datasets.cnewsum import unsegment

    assert unsegment("iPhone 6 售价 5000 元 , 比 iPad Air 贵") == "iPhone 6售价5000元,比iPad Air贵"


def test_vcsum_rebuilds_transcripts_and_prefers_the_full_file(tmp_path):
    recs = _records("vcsum")
    assert {"97", "110"}.isdisjoint(i for i, _ in recs)  # a segment is missing in short_test.txt
    meeting = dict(recs[0][1])
    long_row = json.loads((DATA_DIR / "vcsum" / "long_test.txt").read_text(encoding="utf-8").splitlines()[0])
    assert len(meeting["context"]) == long_row["eos_index"][-1] + 1
    # With overall_context.txt beside long_test.txt, transcripts come from it (all meetings it has).
    d = tmp_path / "vcsum"
    d.mkdir()
    shutil.copy(DATA_DIR / "vcsum" / "long_test.txt", d / "long_test.txt")
    full = [{"id": i, "context": r["context"], "speaker": r["speaker"]} for i, r in recs]
    full.append({"id": "97", "context": [["第一句。", "第二句。"]], "speaker": [1]})
    (d / "overall_context.txt").write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in full),
                                           encoding="utf-8")
    ds = registry.get("vcsum")
    got = dict(ds.records(tmp_path))
    assert set(got) == {i for i, _ in recs} | {"97"}
    assert "发言人1：第一句。第二句。" in ds.render("97", got["97"]).messages[0].content


def test_vcsum_reference_tree(tmp_path):
    recs = list(registry.get("vcsum").records(_reference_only(tmp_path)))  # long_test.txt + tmp/short_test.txt
    assert len(recs) == 24


def test_longmemeval_answers_kinds_and_date():
    ds, items = _sample("longmemeval")
    by_id = {it.id: it for it in items}
    assert by_id["0bc8ad92"].gold == ["5"]  # an integer answer, read as text
    assert ds.score(by_id["0bc8ad92"], "Answer: 5 months.").score == 1.0
    assert "Current date: 2023/03/25 (Sat) 08:30" in by_id["0bc8ad92"].messages[0].content
    assert "--- Session 1 on " in by_id["0bc8ad92"].messages[0].content
    abstain = by_id["0862e8bf_abs"]
    assert abstain.meta["kind"] == "abstention"
    assert "recall" not in ds.score(abstain, "Answer: You never told me.").measures
    assert by_id["06878be2"].meta["kind"] == "preference"
    assert ds.score(by_id["0862e8bf"], "Answer: Luna").measures["recall"] == 1.0
    assert [m.name for m in ds.metrics if m.primary] == ["recall"]


def test_personafeedback_fixture_persona_tiers_and_order():
    ds, items = _sample("personafeedback")
    ids = {it.id for it in items}
    assert "specific/easy/0" in ids and not any("9999" in i for i in ids)  # spedific -> specific; no persona -> skipped
    item = next(it for it in items if it.id == "general/easy/0")
    text = item.messages[0].content
    assert "MBTI type: ISTJ" in text and "Preferred format: Short numbered steps" in text
    assert "Question: How should I plan a weekend bike trip?" in text
    chosen_at = item.meta["perm"].index(0)
    assert item.gold == "AB"[chosen_at]
    m = ds.score(item, f"Answer: {item.gold}").measures
    assert m == {"answered": 1.0, "first": float(chosen_at == 0), "orig": 1.0}  # orig: accuracy's first order
    assert {tuple(it.meta["perm"]) for it in items} == {(0, 1), (1, 0)}


def test_personafeedback_missing_persona_folder(tmp_path):
    from benchmark.dataset import DataMissing

    (tmp_path / "personafeedback" / "data" / "general").mkdir(parents=True)
    (tmp_path / "personafeedback" / "data" / "general" / "easy.jsonl").write_text("{}\n", encoding="utf-8")
    with pytest.raises(DataMissing, match="persona"):
        list(registry.get("personafeedback").records(tmp_path))


# ------------------------------------------------------------------ SQL aggregation


@pytest.mark.parametrize("dataset_id", ["multirc", "longmemeval", "cmrc2018"])
def test_metrics_in_sql_match_python(dataset_id):
    ds, items = _sample(dataset_id)
    rng = random.Random(3)
    scored = []
    for it in items:
        r = rng.random()
        reply = _right(ds, it) if r < 0.5 else _wrong(ds, it) if r < 0.8 else "" if r < 0.9 else "?"
        scored.append((it.gold, ds.score(it, reply)))
    got = sql_metric_values(ds.id, ds.metrics, scored)
    ms = [s.measures or {} for _, s in scored]
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    if dataset_id == "multirc":
        tp, fp, fn = (sum(m[k] for m in ms) for k in ("tp", "fp", "fn"))
        assert got["f1a"] == pytest.approx(2 * tp / (2 * tp + fp + fn))
        assert got["exact_match"] == pytest.approx(mean([m["em"] for m in ms]))
    elif dataset_id == "longmemeval":
        factual = [m["recall"] for m in ms if "recall" in m]
        assert 0 < len(factual) < len(ms)
        assert got["recall"] == pytest.approx(mean(factual))  # abstention/preference rows left out
        assert got["recall_all"] == pytest.approx(mean([s.score for _, s in scored]))
    else:
        assert got["f1"] == pytest.approx(mean([s.score for _, s in scored]))
        assert got["rouge1_f"] == pytest.approx(mean([m["rouge1"] for m in ms]))

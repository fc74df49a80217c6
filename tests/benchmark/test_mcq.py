"""The choice-dataset machinery on small files written by the tests."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import msgspec
import pytest

from benchmark.dataset import AnswerSpace, DataMissing, Dataset
from benchmark.loaders import Files, locate, read_rows
from benchmark.mcq import ChoiceDataset, seeded_permutation
from benchmark.sampling import seeded_sample


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _toy(tmp_path: Path, **over) -> ChoiceDataset:
    rows = [{"qid": f"q{i}", "question": f"What is {i}?", "o1": f"one {i}", "o2": f"two {i}", "o3": f"three {i}",
             "gold": "A"} for i in range(50)]
    _write(tmp_path / "toy" / "data" / "part1.jsonl", "\n".join(json.dumps(r) for r in rows[:30]) + "\n")
    _write(tmp_path / "toy" / "data" / "part2.jsonl", "\n".join(json.dumps(r) for r in rows[30:]) + "\n")
    decl = dict(
        id="toy", language="en", files=(Files("original", "data/*.jsonl", "jsonl"),), item_id="{qid}",
        task="Pick the right one.", body="Question: {question}", option_fields=("o1", "o2", "o3"),
        gold_field="gold", gold_map="letter",
    )
    decl.update(over)
    return ChoiceDataset(**decl)


# ------------------------------------------------------------------ loaders


def test_csv_index_column_bom_and_width_check(tmp_path):
    p = _write(tmp_path / "a.csv", "\ufeffUnnamed: 0,Question,Answer\n7,\"multi\nline\",B\n")
    rows = list(read_rows(Files("original", "*.csv", "csv"), p))
    assert rows == [(0, {"_index": "7", "Question": "multi\nline", "Answer": "B"})]
    p2 = _write(tmp_path / "b.csv", ",x\n1,2\n3\n")
    with pytest.raises(ValueError, match=r"b\.csv:3: expected 2 fields"):
        list(read_rows(Files("original", "*.csv", "csv"), p2))


def test_tsv_raw_quotes_and_quoted_cells(tmp_path):
    raw = _write(tmp_path / "raw.tsv", '"Quoted" start\t1\tid1\n')
    quoted = _write(tmp_path / "q.tsv", '"text"\t"1,2"\t"id2"\n')
    cols = ("text", "labels", "id")
    assert next(read_rows(Files("o", "", "tsv", columns=cols, quoted=False), raw))[1]["text"] == '"Quoted" start'
    assert next(read_rows(Files("o", "", "tsv", columns=cols), quoted))[1]["labels"] == "1,2"


def test_jsonl_error_names_file_and_line(tmp_path):
    p = _write(tmp_path / "x.jsonl", '{"a": 1}\n\n{oops\n')
    with pytest.raises(ValueError, match=r"x\.jsonl:3"):
        list(read_rows(Files("original", "", "jsonl"), p))


def test_parquet_rows(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    p = tmp_path / "t.parquet"
    pq.write_table(pa.table({"idx": [5, 6], "sentence": ["x", "y"]}), p)
    assert list(read_rows(Files("original", "", "parquet"), p)) == [(0, {"idx": 5, "sentence": "x"}),
                                                                     (1, {"idx": 6, "sentence": "y"})]


def test_locate_prefers_original_then_both_reference_roots(tmp_path):
    cands = (Files("original", "data/*.csv", "csv"), Files("reference", "x/y/*.csv", "csv"))
    with pytest.raises(DataMissing, match="d1"):
        locate(cands, tmp_path, "d1")
    _write(tmp_path / "d1" / "moodbench" / "data" / "x" / "y" / "f.csv", "a\n1\n")
    assert locate(cands, tmp_path, "d1")[0].origin == "reference"
    _write(tmp_path / "moodbench" / "x" / "y" / "f.csv", "a\n1\n")
    assert locate(cands, tmp_path, "d1")[1] == tmp_path / "moodbench"
    _write(tmp_path / "d1" / "data" / "f.csv", "a\n1\n")
    assert locate(cands, tmp_path, "d1")[0].origin == "original"


# ------------------------------------------------------------------ declaration, render, score


def test_is_a_dataset_and_renders_lines_not_dicts(tmp_path):
    ds = _toy(tmp_path)
    assert isinstance(ds, Dataset)
    recs = list(ds.records(tmp_path))
    assert len(recs) == 50 and recs[0][0] == "q0"
    item = ds.render(*recs[3])
    text = item.messages[0].content
    assert "Question: What is 3?\n\nA. one 3\nB. two 3\nC. three 3\n\n" in text
    assert "{'A'" not in text and text.endswith("in the form `Answer: X`.")
    assert item.gold == "A" and item.meta["g"] == 0
    msgspec.json.encode(item.meta)  # meta must be JSON-serialisable
    assert ds.score(item, "Answer: A").score == 1.0
    assert ds.score(item, "B").score == 0.0
    assert ds.score(item, "no idea").prediction is None


def test_sample_independent_of_file_and_record_order(tmp_path):
    ds = _toy(tmp_path)
    recs = list(ds.records(tmp_path))
    a = [i for i, _ in seeded_sample(recs, ds.id, 20)]
    b = [i for i, _ in seeded_sample(list(reversed(recs)), ds.id, 20)]
    assert a == b and len(a) == 20


def test_shuffle_is_seeded_recorded_and_balances_a_skewed_gold(tmp_path):
    ds = _toy(tmp_path, shuffle=True)
    positions = Counter()
    for item_id, raw in ds.records(tmp_path):
        item = ds.render(item_id, raw)
        perm = item.meta["perm"]
        assert sorted(perm) == [0, 1, 2] and perm == seeded_permutation("toy", item_id, 3)
        # The gold (always option o1) moved with it, in prompt and in gold.
        assert item.meta["g"] == perm.index(0)
        assert f"{item.gold}. one " in item.messages[0].content
        assert ds.score(item, f"Answer: {item.gold}").score == 1.0
        assert ds.render(item_id, raw) == item  # deterministic
        positions[item.gold] += 1
    assert set(positions) == {"A", "B", "C"} and max(positions.values()) < 30


def test_prompt_hash_and_scorer_version_follow_the_declaration(tmp_path):
    base = _toy(tmp_path)
    assert base.prompt_hash() == _toy(tmp_path).prompt_hash()
    for change in (dict(task="Other."), dict(body="Q: {question}"), dict(shuffle=True), dict(max_tokens=5),
                   dict(option_fields=("o2", "o1", "o3")), dict(revision=2)):
        assert _toy(tmp_path, **change).prompt_hash() != base.prompt_hash(), change
    assert _toy(tmp_path, gold_map={"A": 1}).scorer_version != base.scorer_version
    assert _toy(tmp_path, gold_map={"A": 1}).prompt_hash() == base.prompt_hash()


def test_bad_gold_and_missing_fields_name_the_item(tmp_path):
    ds = _toy(tmp_path)
    with pytest.raises(ValueError, match="toy item q1: gold 'E'"):
        ds.render("q1", {"question": "?", "o1": "a", "o2": "b", "o3": "c", "gold": "E"})
    with pytest.raises(ValueError, match="option field 'o2' is empty"):
        ds.render("q1", {"question": "?", "o1": "a", "o2": " ", "o3": "c", "gold": "A"})
    with pytest.raises(ValueError, match="item id"):
        list(_toy(tmp_path, item_id="{nope}").records(tmp_path))
    with pytest.raises(ValueError, match="exactly one of labels"):
        _toy(tmp_path, labels=("x", "y"))


def _labels_ds(tmp_path, **over):
    _write(tmp_path / "lab" / "t.tsv", "happy text\t0,2\tid1\nsad text\t1\tid2\n")
    _write(tmp_path / "lab" / "labels.txt", "joy\nsadness\nsurprise\n")
    decl = dict(
        id="lab", language="en",
        files=(Files("original", "t.tsv", "tsv", columns=("text", "labels", "id"), label_list="labels.txt"),),
        item_id="{id}", task="Emotions?", body="{text}", labels=("joy", "sadness", "surprise"),
        multi=True, answer_with="name", gold_field="labels", gold_map="ids",
    )
    decl.update(over)
    return ChoiceDataset(**decl)


def test_multi_label_scores_counts_and_per_label_measures(tmp_path):
    ds = _labels_ds(tmp_path)
    assert [m.name for m in ds.metrics[:4]] == ["micro_f1", "example_f1", "exact_match", "macro_f1"]
    assert {m.name for m in ds.metrics} >= {"f1_joy", "f1_sadness", "f1_surprise"}
    items = [ds.render(i, r) for i, r in ds.records(tmp_path)]
    assert items[0].gold == ["joy", "surprise"]
    s = ds.score(items[0], "Answer: joy, sadness")
    assert s.prediction == ["joy", "sadness"] and s.score == pytest.approx(0.5)
    assert s.measures == {"tp": 1.0, "fp": 1.0, "fn": 1.0, "em": 0.0, "tp_joy": 1.0, "fp_joy": 0.0, "fn_joy": 0.0,
                          "tp_sadness": 0.0, "fp_sadness": 1.0, "fn_sadness": 0.0,
                          "tp_surprise": 0.0, "fp_surprise": 0.0, "fn_surprise": 1.0}
    bad = ds.score(items[0], "happy")
    assert bad.prediction is None and bad.score == 0.0 and bad.measures["fn"] == 2.0


def test_multi_label_with_shuffle_keeps_label_keys(tmp_path):
    ds = _labels_ds(tmp_path, shuffle=True)
    item = ds.render("id1", {"text": "x", "labels": "0,2", "id": "id1"})
    s = ds.score(item, "Answer: surprise")
    assert s.measures["tp_surprise"] == 1.0 and s.measures["fn_joy"] == 1.0


def test_label_list_mismatch_is_an_error(tmp_path):
    ds = _labels_ds(tmp_path, labels=("joy", "sadness", "anger"))
    with pytest.raises(ValueError, match="labels.txt lists"):
        list(ds.records(tmp_path))


def test_items_carry_the_answer_space_the_prompt_asks_for(tmp_path):
    item = _toy(tmp_path).render("q1", {"qid": "q1", "question": "?", "o1": "x", "o2": "y", "o3": "z", "gold": "B"})
    assert item.answer == AnswerSpace(values=("A", "B", "C"))
    named = _labels_ds(tmp_path, none_option="none of these").render("id1", {"text": "x", "labels": "0,2", "id": "id1"})
    assert named.answer == AnswerSpace(values=("joy", "sadness", "surprise", "none of these"), multi=True,
                                       alone="none of these")
    # Each allowed answer, written as the constrained model would, reads back as that option.
    ds = _toy(tmp_path, shuffle=True)
    item = ds.render("q1", {"qid": "q1", "question": "?", "o1": "x", "o2": "y", "o3": "z", "gold": "B"})
    assert [ds.score(item, v).prediction for v in item.answer.values] == list(item.answer.values)

"""The choice-dataset machinery (benchmark/adapters/mcq.py, benchmark/loaders.py) on small files and rows written by
the tests: loaders, declaration options, per-class F1 hooks against scikit-learn, stamps, SQL aggregation."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import duckdb
import msgspec
import orjson
import pytest
from sklearn.metrics import f1_score

from benchmark import registry
from benchmark.dataset import AnswerSpace, DataMissing, Dataset, MetricSpec, Scored
from benchmark.loaders import Files, locate, read_rows
from benchmark.adapters.choice_measures import class_f1_measures, per_class_f1
from benchmark.adapters.mcq import ChoiceDataset, seeded_permutation
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
    for change in (dict(task="Other."), dict(body="Q: {question}"), dict(shuffle=True), dict(output_tokens=5),
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


def test_lines_reader(tmp_path):
    f = Files("original", "x.txt", "lines", columns=("", "label", "text"))
    p = tmp_path / "x.txt"
    p.write_text("\na\nfirst\n\nb\nsecond", encoding="utf-8")
    assert list(read_rows(f, p)) == [(0, {"label": "a", "text": "first"}), (1, {"label": "b", "text": "second"})]
    p.write_text("\na\nfirst\n\nb\nsecond\n", encoding="utf-8")  # trailing newline
    assert len(list(read_rows(f, p))) == 2
    p.write_text("\na\nfirst\nstray\nb\nsecond\n", encoding="utf-8")
    with pytest.raises(ValueError, match="x.txt:4: expected a blank separator"):
        list(read_rows(f, p))
    p.write_text("\na\nfirst\n\nb\n", encoding="utf-8")
    with pytest.raises(ValueError, match="whole blocks"):
        list(read_rows(f, p))
    g = Files("original", "y.txt", "lines", columns=("ctx", "label"))
    q = tmp_path / "y.txt"
    q.write_text("c1\n0\nc2\n1\n", encoding="utf-8")
    assert [r["ctx"] for _, r in read_rows(g, q)] == ["c1", "c2"]


def test_keep_hook_and_per_source_item_ids(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.jsonl").write_text('{"q": "x", "g": 0}\n{"q": "y", "g": -1}\n{"q": "z", "g": 1}\n')
    (tmp_path / "moodbench").mkdir()
    (tmp_path / "moodbench" / "b.jsonl").write_text('{"q": "x", "g": 0}\n')
    common = {"language": "en", "task": "t", "body": "{q}", "labels": ("P", "Q"), "gold_field": "g",
              "keep": lambda r: r["g"] >= 0, "item_id": "{_stem}/{_row}"}
    ds = ChoiceDataset(id="d", files=(Files("original", "a.jsonl", "jsonl"),
                                      Files("reference", "b.jsonl", "jsonl", item_id="ref/{_row}")), **common)
    assert [i for i, _ in ds.records(tmp_path)] == ["a/0", "a/2"]
    ds2 = ChoiceDataset(id="d", files=(Files("reference", "b.jsonl", "jsonl", item_id="ref/{_row}"),), **common)
    assert [i for i, _ in ds2.records(tmp_path)] == ["ref/0"]


def test_per_class_f1_matches_sklearn():
    labels = ("True", "False", "Uncertain")
    hook, specs = per_class_f1(labels)
    assert [s.name for s in specs] == ["macro_f1", "f1_true", "f1_false", "f1_uncertain"]
    rng = random.Random(3)
    for shuffled in (False, True):
        gold, pred, rows = [], [], []
        for _ in range(400):
            g = rng.randrange(3)
            r = rng.random()
            p = g if r < 0.5 else (None if r < 0.6 else rng.randrange(3))
            perm = rng.sample(range(3), 3) if shuffled else None
            meta = {"g": perm.index(g), "perm": perm} if perm else {"g": g}
            rows.append(hook(meta, p, p == g))
            gold.append(g)
            pred.append(-1 if p is None else p)
        f1s = {}
        for i, k in enumerate(("true", "false", "uncertain")):
            tp, fp, fn = (sum(m.get(f"{x}_{k}", 0.0) for m in rows) for x in ("tp", "fp", "fn"))
            f1s[k] = 2 * tp / (2 * tp + fp + fn)
            assert f1s[k] == pytest.approx(f1_score(gold, pred, labels=[i], average="macro"))
        assert sum(f1s.values()) / 3 == pytest.approx(f1_score(gold, pred, labels=[0, 1, 2], average="macro"))


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in rows))


def test_files_folder_and_skip_lines(tmp_path):
    _write_jsonl(tmp_path / "shared" / "data" / "x.jsonl", [{"qid": 1}])
    ds = ChoiceDataset(
        id="t_folder", language="en", files=(Files("original", "data/x.jsonl", "jsonl", folder="shared"),),
        item_id="{qid}", task="T", body="B", labels=("a", "b"), gold_field="qid",
    )
    assert [i for i, _ in ds.records(tmp_path)] == ["1"]
    tsv = tmp_path / "t.tsv"
    tsv.write_text("id  label   text\nx 1\t1\tsays \"hi\"\ny 2\t0\tbye\n", encoding="utf-8")
    f = Files("original", "t.tsv", "tsv", ("id", "label", "text"), quoted=False, skip_lines=1)
    rows = [r for _, r in read_rows(f, tsv)]
    assert rows == [{"id": "x 1", "label": "1", "text": 'says "hi"'}, {"id": "y 2", "label": "0", "text": "bye"}]


def _bilingual(**kw) -> ChoiceDataset:
    return ChoiceDataset(
        id="t_bi", language="mixed", files=(Files("original", "d.jsonl", "jsonl"),), item_id="{lang}/{qid}",
        task={"en": "Pick one.", "zh": "选一个。"}, body={"en": "Q: {q}", "zh": "问：{q}"},
        language_field="lang", options_field="opts", gold_field="ans", gold_map="text", **kw,
    )


def test_list_options_text_gold_language_and_shuffle():
    ds = _bilingual(shuffle=True)
    row = {"lang": "zh", "qid": 1, "q": "?", "opts": ["甲", "乙 ", "丙"], "ans": "乙"}
    item = ds.render("zh/1", row)
    text = item.messages[0].content
    assert text.startswith("选一个。\n\n问：?") and text.endswith("答案：X”。")
    assert item.meta["options"][item.meta["perm"].index(1)] == "乙"
    assert ds.score(item, f"答案：{item.gold}").score == 1.0 and ds.score(item, "乙").score == 1.0
    en = ds.render("en/1", dict(row, lang="en"))
    assert en.messages[0].content.endswith("`Answer: X`.")
    with pytest.raises(ValueError, match="language 'fr'"):
        ds.render("fr/1", dict(row, lang="fr"))
    with pytest.raises(ValueError, match="0 options have this text"):
        ds.render("zh/2", dict(row, ans="丁"))
    with pytest.raises(ValueError, match="needs 2-26"):
        ds.render("zh/3", dict(row, opts=["甲"]))
    with pytest.raises(ValueError, match="same languages"):
        ChoiceDataset(id="t_bad", language="mixed", files=(), item_id="x", task="T", body={"en": "B"},
                      language_field="lang", options_field="opts", gold_field="ans")
    assert _bilingual().prompt_hash() != _bilingual(shuffle=True).prompt_hash()


def test_derive_adds_fields_before_body_options_and_gold():
    ds = ChoiceDataset(
        id="t_derive", language="en", files=(), item_id="{k}", task="T", body="Word: {w}",
        derive=lambda r: {"w": r["s"].split()[int(r["i"])], "o1": r["b"], "o2": r["a"], "gold": 1 - int(r["f"])},
        option_fields=("o1", "o2"), gold_field="gold",
    )
    item = ds.render("1", {"k": 1, "s": "the red fox", "i": "1", "a": "x", "b": "y", "f": "1"})
    assert "Word: red" in item.messages[0].content and "\nA. y\nB. x" in item.messages[0].content
    assert item.gold == "A"


def test_none_option_and_jaccard_with_fixed_and_shuffled_labels():
    for shuffle in (False, True):
        ds = ChoiceDataset(
            id="t_none", language="en", files=(), item_id="{k}", task="T", body="B", labels=("x", "y", "z"),
            none_option="none", multi=True, jaccard=True, answer_with="name", gold_field="ids", gold_map="ids",
            shuffle=shuffle,
        )
        empty = ds.render("1", {"k": 1, "ids": ""})
        assert empty.gold == ["none"] and empty.messages[0].content.split("\n\n")[2].endswith("D. none")
        assert ds.score(empty, "Answer: none") == Scored(["none"], 1.0, {"tp": 0.0, "fp": 0.0, "fn": 0.0,
                                                                          "em": 1.0, "jac": 1.0})
        assert ds.score(empty, "Answer: D").score == 1.0
        s = ds.score(empty, "Answer: x")
        assert s.score == 0.0 and s.measures["jac"] == 0.0 and s.measures["fp_x"] == 1.0
        assert ds.score(empty, "hmm").measures["jac"] == 0.0  # unparsed is never "both empty"
        full = ds.render("2", {"k": 2, "ids": "0,2"})
        assert sorted(full.gold) == ["x", "z"]
        s = ds.score(full, "Answer: x, y")
        assert s.measures["jac"] == pytest.approx(1 / 3) and s.score == pytest.approx(0.5)
        assert s.measures["tp_x"] == 1.0 and s.measures["fp_y"] == 1.0 and s.measures["fn_z"] == 1.0
        assert ds.score(full, "Answer: none, x").prediction is None  # "none" plus labels contradicts
        assert ds.score(full, "Answer: none").measures == {"tp": 0.0, "fp": 0.0, "fn": 2.0, "em": 0.0, "jac": 0.0,
                                                           "tp_x": 0.0, "fp_x": 0.0, "fn_x": 1.0,
                                                           "tp_z": 0.0, "fp_z": 0.0, "fn_z": 1.0}
    with pytest.raises(ValueError, match="multi-label"):
        ChoiceDataset(id="t", language="en", files=(), item_id="x", task="T", body="B", labels=("a", "b"),
                      gold_field="g", none_option="none")


def test_class_f1_measures_follow_the_permutation():
    hook = class_f1_measures(1)
    # Shown order [1, 0]: position 0 holds original option 1 (the positive class).
    assert hook({"g": 0, "perm": [1, 0]}, 1, True) == {"tp": 1.0, "fp": 0.0, "fn": 0.0}
    assert hook({"g": 1, "perm": [1, 0]}, 1, False) == {"tp": 0.0, "fp": 1.0, "fn": 0.0}
    assert hook({"g": 1}, None, False) == {"tp": 0.0, "fp": 0.0, "fn": 1.0}
    assert hook({"g": 0}, 0, True) == {"tp": 0.0, "fp": 0.0, "fn": 0.0}


def test_existing_declarations_keep_their_stamps():
    # The optional declaration fields enter the stamps only when set.
    sst2 = registry.get("sst2")
    assert sst2.derived.instructions is None and sst2.derived.fixed_shown == ("Positive", "Negative")
    ds = ChoiceDataset(id="t", language="en", files=(), item_id="x", task="T", body="B", labels=("a", "b"),
                       gold_field="g")
    assert ds.prompt_hash() == ChoiceDataset(id="t2", language="en", files=(), item_id="y", task="T", body="B",
                                             labels=("a", "b"), gold_field="g").prompt_hash()


def test_new_metrics_through_the_sql_views():
    from store.hierarchy.views import ensure_views
    from tests.store.helpers import sql_metric_values

    con = duckdb.connect()
    ensure_views(con)
    kinds = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = 'metric_values'").fetchone()[0]
    assert "'label_f1'" in kinds and "'macro_f1'" in kinds, "store/hierarchy/views.sql lost the label_f1/macro_f1 kinds"
    specs = (MetricSpec("f1_ironic", "label_f1", "tp", "fp", "fn", primary=True),
             MetricSpec("jaccard_accuracy", "mean", "jac"), MetricSpec("accuracy", "mean", "score"))
    scored = [Scored("B", 1.0, {"tp": 1, "fp": 0, "fn": 0, "jac": 1.0}),
              Scored("B", 0.0, {"tp": 0, "fp": 1, "fn": 0, "jac": 0.5}),
              Scored("A", 0.0, {"tp": 0, "fp": 0, "fn": 1, "jac": 0.0}),
              Scored("A", 1.0, {"tp": 0, "fp": 0, "fn": 0, "jac": 1.0})]
    got = sql_metric_values("d", specs, [("A", sc) for sc in scored])
    assert got["f1_ironic"] == pytest.approx(f1_score([1, 0, 1, 0], [1, 1, 0, 0]))
    assert got["jaccard_accuracy"] == pytest.approx(0.625) and got["accuracy"] == pytest.approx(0.5)

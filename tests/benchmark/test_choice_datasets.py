"""The language-understanding, reasoning and knowledge choice datasets (ag_news ... ceval, AGIEval, sst2,
cmmlu),
on the real files where present.

Real-data tests skip when ``../shared/datasets`` (or ``ENGINE_SHARED_DIR``) lacks
a dataset; the loaders and hooks they use are tested in test_mcq.py.
"""

from __future__ import annotations

import random
import re

import pytest

from benchmark import registry
from benchmark.dataset import DataMissing, Item, MetricSpec, Scored
from benchmark.datasets import agieval as agieval_mod
from benchmark.datasets import thucnews as thucnews_mod
from benchmark.extract.choice import codes_for
from benchmark.sampling import seeded_sample
from tests.benchmark.realdata import DATA_DIR, assert_sample_deterministic, need
from tests.benchmark.realdata import records as _cached_records
from tests.store.helpers import sql_metric_values

IDS = [
    "ag_news", "thucnews", "lcqmc", "qqp", "wic", "ocnli", "mnli", "rte", "copa", "wsc", "mutual", "folio",
    "logiqa", "hellaswag", "cosmos_qa", "piqa", "imdb", "dianping", "agieval", "mmlu_pro", "ceval", "sst2", "cmmlu",
]  # fmt: skip

# Pool sizes on the team's data folder (originals where present, else the reference copy).
POOL = {
    "ag_news": 7600, "thucnews": 10000, "lcqmc": 12500, "qqp": 300, "wic": 638, "ocnli": 2950, "mnli": 300,
    "rte": 277, "copa": 100, "wsc": 104, "mutual": 300, "folio": 204, "logiqa": 651, "hellaswag": 1000,
    "cosmos_qa": 1000, "piqa": 1838, "imdb": 300, "dianping": 300, "agieval": 2100, "mmlu_pro": 1008, "ceval": 1346,
    "sst2": 300, "cmmlu": 1005,
}  # fmt: skip


def _records(dataset_id: str) -> list:
    need(dataset_id)
    try:
        return _cached_records(dataset_id)
    except DataMissing as e:
        pytest.skip(f"real data for {dataset_id} not found: {e}")


def _sample(dataset_id: str):
    ds = registry.get(dataset_id)
    return ds, [ds.render(i, raw) for i, raw in seeded_sample(_records(dataset_id), dataset_id, 300)]


def _say(gold) -> str:
    return gold if isinstance(gold, str) else ", ".join(gold)


def _codes(item: Item) -> tuple[str, ...]:
    return codes_for(len(item.meta["options"])) if "options" in item.meta else codes_for(2)


def _reference_only(tmp_path):
    """A data dir holding only the reference tree (as when the originals are absent)."""
    if not (DATA_DIR / "moodbench").is_dir():
        pytest.skip(f"reference data not found: {DATA_DIR / 'moodbench'} is absent")
    (tmp_path / "moodbench").symlink_to(DATA_DIR / "moodbench")
    return tmp_path


# ---------------------------------------------------------------- every dataset


def test_all_registered():
    assert set(IDS) <= set(registry.all_ids())


@pytest.mark.parametrize("dataset_id", IDS)
def test_pool_sample_size_and_determinism(dataset_id):
    assert_sample_deterministic(dataset_id, _records(dataset_id), POOL[dataset_id])


@pytest.mark.parametrize("dataset_id", IDS)
def test_gold_valid_and_scoring(dataset_id):
    ds, items = _sample(dataset_id)
    assert ds.prompt_hash() and ds.scorer_version
    assert sum(m.primary for m in ds.metrics) == 1
    for item in items:
        if item.meta.get("cloze"):
            continue  # AGIEval's free-text items: tests/benchmark/test_agieval_cloze.py
        text = item.messages[0].content
        codes = _codes(item) if not getattr(ds, "labels", ()) else codes_for(len(ds.labels))
        assert not re.search(r"\{'[A-J]':", text) and "\nA. " in text  # no dict literal
        assert not re.search(r"\n[A-J]\. *[(（][A-J][)）]", text), "option lettered twice"
        assert ("Answer: X" in text) or ("答案：X" in text)
        golds = [item.gold] if isinstance(item.gold, str) else item.gold
        assert golds and set(golds) <= set(codes)
        assert ds.score(item, f"Answer: {_say(item.gold)}").score == 1.0, (item.id, item.gold)
        if not set(codes) & {o.strip() for o in item.meta.get("options", ())}:
            # (A bare "B" is read as the option whose text is "B" when there is one: MMLU-Pro
            # has element symbols as options. "Answer: B" is unambiguous.)
            assert ds.score(item, _say(item.gold)).score == 1.0
        unparsed = ds.score(item, "I am not able to tell.")
        assert unparsed.prediction is None and unparsed.score == 0.0
        wrong = next((c for c in codes if c not in golds), golds[0])  # all four right: a subset is wrong
        assert ds.score(item, f"Answer: {wrong}").score == 0.0


def test_baselines_declared():
    for dataset_id in IDS:
        ds = registry.get(dataset_id)
        assert 0 < ds.chance_baseline <= ds.majority_baseline < 1, dataset_id


# ---------------------------------------------------------------- per dataset


def test_ag_news_text_cleanup_and_reference_ids(tmp_path):
    _ds, items = _sample("ag_news")
    assert not any(re.search(r"#\d+;|\\", i.messages[0].content) for i in items)
    recs = list(registry.get("ag_news").records(_reference_only(tmp_path)))
    assert len(recs) == 301 and all(i.startswith("ref/") for i, _ in recs)


def test_thucnews_class_file_and_reference_label_space(tmp_path):
    need("thucnews")
    lines = (DATA_DIR / "thucnews" / "class.txt").read_text(encoding="utf-8").split()
    assert tuple(lines) == thucnews_mod.HEADLINE_CLASS_FILE
    ds, items = _sample("thucnews")
    assert items[0].meta["options"] == list(thucnews_mod.HEADLINE_CLASSES)
    ref = list(ds.records(_reference_only(tmp_path)))
    item = ds.render(*ref[0])
    assert len(ref) == 300 and item.id.startswith("ref/")
    assert item.meta["options"] == list(thucnews_mod.FULLTEXT_CLASSES) and "新闻正文：" in item.messages[0].content


def test_lcqmc_reads_the_real_file_not_the_broken_yaml_path(tmp_path):
    recs = _records("lcqmc")
    assert len(recs) == 12500 and sum(r["label"] == "1" for _, r in recs) == 6250
    ds = registry.get("lcqmc")
    ref = list(ds.records(_reference_only(tmp_path)))
    assert len(ref) == 300 and ref[0][0] == f"ref/{ref[0][1]['ID']}"
    # The reference's IDs are 300000 + the row in the original test file: same pair, same gold.
    by_row = {int(i): r for i, r in recs}
    for _, r in ref[:50]:
        o = by_row[int(r["ID"]) - 300000]
        assert (o["text_a"], o["text_b"], o["label"]) == (r["sentence1"], r["sentence2"], r["gold_label"])
    assert ds.render(*ref[0]).gold in ("A", "B")


def test_qqp_header_is_a_header_and_quoted_cells_are_read():
    recs = _records("qqp")
    assert len(recs) == 300 and all(i.isdigit() for i, _ in recs)
    rows = {i: r for i, r in recs}
    assert rows["69296"]["question1"].startswith('If a girl texts "good night, sweet dreams"')
    ds, items = _sample("qqp")
    dup = next(i for i in items if i.gold == "A")
    assert ds.score(dup, "Answer: A").measures == {"tp": 1.0, "fp": 0.0, "fn": 0.0}
    assert ds.score(dup, "Answer: B").measures == {"tp": 0.0, "fp": 0.0, "fn": 1.0}
    other = next(i for i in items if i.gold == "B")
    assert ds.score(other, "Answer: A").measures == {"tp": 0.0, "fp": 1.0, "fn": 0.0}


def test_wic_sentences_unchanged_and_target_named():
    _ds, items = _sample("wic")
    rows = dict(_records("wic"))
    for item in items:
        row, text = rows[item.id], item.messages[0].content
        assert f"Sentence 1: {row['sentence1']}\n" in text and f"Sentence 2: {row['sentence2']}" in text
        assert f'Target word: "{row["word"]}"' in text
        assert f'"{row["sentence1"][row["start1"]:row["end1"]]}" in sentence 1' in text


def test_ocnli_drops_no_majority_pairs_and_ids_match_reference(tmp_path):
    recs = _records("ocnli")
    assert all(r["label"] != "-" for _, r in recs) and len(recs) == 2950
    ds = registry.get("ocnli")
    ref = list(ds.records(_reference_only(tmp_path)))
    own = dict(recs)
    assert len(ref) == 300
    for item_id, r in ref:
        assert own[item_id]["sentence1"] == r["sentence1"]
        assert ds.render(item_id, own[item_id]).gold == ds.render(item_id, r).gold


@pytest.mark.parametrize("dataset_id", ["rte", "copa", "wsc", "wic", "folio", "cosmos_qa", "mmlu_pro", "hellaswag"])
def test_original_and_reference_agree_where_ids_match(dataset_id, tmp_path):
    ds = registry.get(dataset_id)
    own = dict(_records(dataset_id))
    ref = list(ds.records(_reference_only(tmp_path)))
    shared = [(i, r) for i, r in ref if i in own]
    if dataset_id == "hellaswag":
        assert not shared and all(i.startswith("ind/") for i, _ in ref)  # other id scheme: no false matches
        return
    assert shared
    for item_id, r in shared:
        a, b = ds.render(item_id, own[item_id]), ds.render(item_id, r)
        assert a.gold == b.gold, item_id
        if dataset_id in ("rte", "copa", "wsc", "folio"):
            assert a.messages == b.messages, item_id


def test_wsc_marks_the_pronoun_occurrence_meant():
    _ds, items = _sample("wsc")
    rows = dict(_records("wsc"))
    for item in items:
        text = item.messages[0].content
        passage = text.split("Passage: ", 1)[1].split("\n\n", 1)[0]
        marked = re.findall(r"\[([^\]]+)\]", passage)
        assert len(marked) == 1
        target = rows[item.id]["target"]
        words = passage.split(" ")
        at = next(k for k, w in enumerate(words) if w.startswith("["))
        assert abs(at - target["span2_index"]) <= 1
        assert re.sub(r"\W", "", marked[0]).lower() == target["span2_text"].lower()


def test_mutual_uses_mutual_plus():
    recs = _records("mutual")
    assert len(recs) == 300 and all(re.fullmatch(r"dev_\d+", i) for i, _ in recs)
    _ds, items = _sample("mutual")
    # MuTual-plus replaces one option with a "safe response" asking to repeat.
    assert sum("repeat" in " ".join(i.meta["options"]).lower() for i in items) > 50


def test_folio_premises_numbered_and_macro_f1_measures():
    ds, items = _sample("folio")
    assert "Premises:\n1. " in items[0].messages[0].content
    assert {m.name for m in ds.metrics} == {"accuracy", "macro_f1", "f1_true", "f1_false", "f1_uncertain"}
    item = next(i for i in items if i.gold == "C")  # Uncertain
    assert ds.score(item, "Answer: Uncertain").measures == {"tp_uncertain": 1.0, "fp_uncertain": 0.0,
                                                             "fn_uncertain": 0.0}
    assert ds.score(item, "Answer: A").measures == {
        "tp_uncertain": 0.0, "fp_uncertain": 0.0, "fn_uncertain": 1.0, "tp_true": 0.0, "fp_true": 1.0, "fn_true": 0.0,
    }
    assert ds.score(item, "no idea").measures == {"tp_uncertain": 0.0, "fp_uncertain": 0.0, "fn_uncertain": 1.0}


def test_logiqa_options_follow_their_letters():
    recs = dict(_records("logiqa"))
    ds = registry.get("logiqa")
    # Block 108 lists "C." before "B."; its gold "b" is "No.2 valve and No.3 valve" (solved by hand).
    item = ds.render("108", recs["108"])
    assert item.gold == "B" and item.meta["options"][1] == "No.2 valve and No.3 valve."
    # A garbled block keeps positional options, markers removed.
    item = ds.render("594", recs["594"])
    assert item.meta["options"] == ["first", "Third", "Fourth", "fifth"]
    # One marker is removed, never more: these options are "A.", "B.", "C.", "Ding." (persons).
    assert ds.render("4", recs["4"]).meta["options"] == ["A.", "B.", "C.", "Ding."]
    for i, r in list(recs.items())[:100]:
        shown = ds.render(i, r).meta["options"]
        assert all(o and not re.match(r"[A-D][.?][^A-D]", o) for o in shown), (i, shown)


def test_hellaswag_reference_rows_are_cleaned(tmp_path):
    ds = registry.get("hellaswag")
    ref = list(ds.records(_reference_only(tmp_path)))
    assert len(ref) == 300
    for item_id, r in ref:
        text = ds.render(item_id, r).messages[0].content
        assert "[header]" not in text and "[title]" not in text and "[step]" not in text
        assert text.split("\n\n")[1].startswith(r["activity_label"] + ": ")


def test_piqa_labels_joined_and_reference_without_labels_is_missing(tmp_path):
    recs = _records("piqa")
    labels = (DATA_DIR / "piqa" / "dev-labels.lst").read_text().split()
    assert [r["label"] for _, r in recs] == labels
    ds, _items = _sample("piqa")
    with pytest.raises(DataMissing, match="label file"):
        list(ds.records(_reference_only(tmp_path)))


def test_ceval_uses_originals_only(tmp_path):
    recs = _records("ceval")
    assert len({i.split("/")[0] for i, _ in recs}) == 52
    with pytest.raises(DataMissing):
        list(registry.get("ceval").records(_reference_only(tmp_path)))


def test_mmlu_pro_variable_option_counts():
    _ds, items = _sample("mmlu_pro")
    counts = {len(i.meta["options"]) for i in items}
    assert max(counts) == 10 and min(counts) < 10
    ten = next(i for i in items if len(i.meta["options"]) == 10)
    assert "\nJ. " in ten.messages[0].content
    rows = dict(_records("mmlu_pro"))
    for item in items:
        assert item.gold == rows[item.id]["answer"]


def test_agieval_pool_and_languages():
    recs = _records("agieval")
    stems = {i.split("/")[0] for i, _ in recs}
    assert "sat-math" in stems and {"math", "gaokao-mathcloze"} <= stems
    assert len(stems) == 21
    ds, items = _sample("agieval")
    zh = next(i for i in items if i.id.startswith("gaokao-history/"))
    en = next(i for i in items if i.id.startswith("gaokao-english/") or i.id.startswith("lsat"))
    assert "答案：X" in zh.messages[0].content and "Answer: X" in en.messages[0].content
    assert ds.score(zh, f"答案：{zh.gold}").measures == {"zh": 1.0}
    assert ds.score(en, f"Answer: {en.gold}").measures == {"en": 1.0}


def test_agieval_several_answers_need_the_exact_set():
    recs = dict(_records("agieval"))
    ds = registry.get("agieval")
    several = [(i, r) for i, r in recs.items() if i.split("/")[0] in agieval_mod.MULTI_ANSWER_TASKS]
    assert len(several) == 300
    two = next((i, r) for i, r in several if isinstance(r["label"], list) and len(r["label"]) == 2)
    item = ds.render(*two)
    a, b = item.gold
    assert "答案：X, Y" in item.messages[0].content
    assert ds.score(item, f"答案：{a}, {b}").score == 1.0
    assert ds.score(item, f"答案：{a}").score == 0.0  # a subset is wrong
    assert ds.score(item, f"答案：{a}, {b}").prediction == [a, b]
    one = next((i, r) for i, r in several if r["label"] == ["C"])
    item = ds.render(*one)
    assert item.gold == ["C"] and ds.score(item, "答案：C").score == 1.0
    # The stray "。" in one jec-qa-ca label is not a letter.
    odd = next(((i, r) for i, r in several if r["label"] == ["A", "C", "D", "。"]), None)
    if odd:
        assert ds.render(*odd).gold == ["A", "C", "D"]


def test_agieval_reference_copy_multi_letter_golds(tmp_path):
    ds = registry.get("agieval")
    ref = dict(ds.records(_reference_only(tmp_path)))
    assert len(ref) == 4773 + 418 and all(i.startswith("ref/") for i in ref)  # 418 cloze items
    mathqa = [(i, r) for i, r in ref.items() if i.startswith("ref/gaokao-mathqa/") and len(str(r["label"])) > 1]
    assert {"ACD", "A B D"} <= {str(r["label"]) for _, r in mathqa}
    for i, r in mathqa:
        item = ds.render(i, r)
        assert item.meta.get("several") and len(item.gold) == len(str(r["label"]).replace(" ", ""))
        assert ds.score(item, "Answer: " + ", ".join(item.gold)).score == 1.0
    assert sum(i.startswith("ref/sat-math/") for i in ref) == 220


def test_agieval_marker_stripping():
    s = agieval_mod.strip_markers
    assert s(["(A)5", "(B)6", "(C)7", "(D)8"]) == ["5", "6", "7", "8"]
    assert s(["  A．甲", "B．乙", "C．丙", "D．丁"]) == ["甲", "乙", "丙", "丁"]
    assert s(["(A)x", "(B)y", "(C)z", "(C)w"]) == ["x", "y", "z", "w"]  # a typo'd letter is still a marker
    assert s(["A No dangshen", "B No Shouwu", "C x", "D y"]) == ["No dangshen", "No Shouwu", "x", "y"]
    assert s(["A car", "The bus"]) == ["A car", "The bus"]  # "A" as an article stays
    assert agieval_mod.gold_letters("A B D") == [0, 1, 3]
    assert agieval_mod.gold_letters(["C", "A"]) == [0, 2]
    with pytest.raises(ValueError):
        agieval_mod.gold_letters("Z")


def test_folio_and_qqp_metrics_in_sql_match_sklearn():
    from sklearn.metrics import accuracy_score, f1_score

    for dataset_id in ("folio", "qqp"):
        ds, items = _sample(dataset_id)
        rng = random.Random(11)
        out = []
        for item in items:
            r = rng.random()
            answer = "Answer: " + item.gold if r < 0.5 else ("pass" if r < 0.6 else f"Answer: {rng.choice('ABC'[:len(ds.labels)])}")
            out.append((item, ds.score(item, answer)))
        got = sql_metric_values(dataset_id, ds.metrics, [(i.gold, s) for i, s in out])
        gold = [i.gold for i, _ in out]
        pred = [s.prediction or "none" for _, s in out]
        assert got["accuracy"] == pytest.approx(accuracy_score(gold, pred))
        if dataset_id == "folio":
            present = sorted(set(gold) | (set(pred) - {"none"}))
            assert got["macro_f1"] == pytest.approx(f1_score(gold, pred, labels=present, average="macro"))
            assert got["f1_uncertain"] == pytest.approx(f1_score(gold, pred, labels=["C"], average="macro"))
        else:
            assert got["f1_duplicate"] == pytest.approx(f1_score(gold, pred, labels=["A"], average="macro"))


def test_agieval_split_protocol():
    ds = registry.get("agieval")
    assert ds.id == "agieval" and ds.language == "mixed" and ds.samples == 1
    assert [m.name for m in ds.metrics] == ["accuracy", "accuracy_en", "accuracy_zh", "accuracy_cloze"]
    assert ds.prompt_hash() != ds.base.prompt_hash() != ds.base.base.prompt_hash()
    s = ds.score(Item("x", (), "A", {"g": 0, "options": ["p", "q"], "lang": "en"}), "Answer: A")
    assert s == Scored("A", 1.0, {"en": 1.0})
    several = Item("y", (), ["A", "B"], {"g": [0, 1], "options": ["p", "q", "r"], "lang": "zh", "several": True})
    assert ds.score(several, "答案：A, B") == Scored(["A", "B"], 1.0, {"zh": 1.0})
    assert ds.score(several, "答案：A, B, C").score == 0.0
    assert ds.score(several, "不知道").prediction is None
    assert isinstance(ds.metrics[0], MetricSpec)


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

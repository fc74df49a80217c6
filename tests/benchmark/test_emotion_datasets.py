"""The emotional and companionship choice datasets, on the real files (skipped when absent).

moodbench1-4 (PQEmotion1/2/3/5), emobench1-3 (EmoBench B/C/A), semeval2018_task3,
semeval2018_task1, vua20, cped, edos, booksort, goemotions, and their F1 metrics against
scikit-learn. The declaration options they use are tested in test_mcq.py.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from sklearn.metrics import f1_score, jaccard_score

from benchmark import registry
from benchmark.dataset import DataMissing, MetricSpec, Scored
from benchmark.extract.choice import codes_for
from benchmark.loaders import read_rows
from benchmark.sampling import seeded_sample
from tests.benchmark import kind_reference as K
from tests.benchmark.realdata import DATA_DIR, assert_sample_deterministic

IDS = [
    "moodbench1", "moodbench2", "moodbench3", "moodbench4", "emobench1", "emobench2", "emobench3",
    "semeval2018_task3", "semeval2018_task1", "vua20", "cped", "edos", "booksort",
]  # fmt: skip
# Pool sizes on the team folder (originals where present, else the reference copy).
POOL = {
    "moodbench1": 304, "moodbench2": 304, "moodbench3": 302, "moodbench4": 302, "emobench1": 400,
    "emobench2": 400, "emobench3": 400, "semeval2018_task3": 784, "semeval2018_task1": 300, "vua20": 1000,
    "cped": 1000, "edos": 300, "booksort": 300,
}  # fmt: skip
# Pool sizes when only the reference's data tree (moodbench/) is there.
REF_POOL = dict(POOL, emobench1=300, emobench2=300, emobench3=300, semeval2018_task3=155, vua20=300, cped=300)
PQ = f"{DATA_DIR}/moodbench/emo_ability/PQEmotion/emotional_subtask"

_cache: dict[tuple[str, str], list] = {}


def _records(dataset_id: str, data_dir: Path = DATA_DIR) -> list:
    key = (dataset_id, str(data_dir))
    if key not in _cache:
        if not DATA_DIR.is_dir():
            pytest.skip(f"real data not found: {DATA_DIR} is absent")
        try:
            _cache[key] = list(registry.get(dataset_id).records(data_dir))
        except DataMissing as e:
            pytest.skip(f"real data for {dataset_id} not found: {e}")
    return _cache[key]


def _sample(dataset_id: str, data_dir: Path = DATA_DIR):
    ds = registry.get(dataset_id)
    return ds, [ds.render(i, raw) for i, raw in seeded_sample(_records(dataset_id, data_dir), dataset_id, 300)]


def _say(gold) -> str:
    return gold if isinstance(gold, str) else ", ".join(gold)


def _n_options(ds, item) -> int:
    return len(ds.labels) + bool(ds.none_option) if ds.labels else len(item.meta["options"])


@pytest.fixture(scope="module")
def reference_only(tmp_path_factory) -> Path:
    """A data dir holding only the reference's data tree, to read the fallback copies."""
    if not (DATA_DIR / "moodbench").is_dir():
        pytest.skip(f"real data not found: {DATA_DIR / 'moodbench'} is absent")
    d = tmp_path_factory.mktemp("refonly")
    (d / "moodbench").symlink_to(DATA_DIR / "moodbench")
    return d


# ---------------------------------------------------------------- every dataset


@pytest.mark.parametrize("dataset_id", IDS)
def test_pool_sample_size_determinism_and_order_independence(dataset_id):
    assert_sample_deterministic(dataset_id, _records(dataset_id), POOL[dataset_id])
    # Rendering is deterministic too (seeded option order).
    _, items = _sample(dataset_id)
    assert items == _sample(dataset_id)[1]


@pytest.mark.parametrize("dataset_id", IDS)
def test_gold_valid_and_scoring(dataset_id):
    ds, items = _sample(dataset_id)
    for item in items:
        text = item.messages[0].content
        assert "{'" not in text and "{" not in text.split("\n\n")[0]
        assert "\nA. " in text or "\n1. " in text
        n = _n_options(ds, item)
        shown = ds.labels + ((ds.none_option,) if ds.none_option else ()) if ds.labels and not ds.shuffle \
            else item.meta["options"]
        allowed = set(shown) if ds.answer_with == "name" else set(codes_for(n))
        if ds.multi:
            assert item.gold and set(item.gold) <= allowed
        else:
            assert item.gold in allowed
        right = ds.score(item, f"Answer: {_say(item.gold)}")
        assert right.score == 1.0 and right.prediction is not None, (item.id, item.gold)
        assert ds.score(item, _say(item.gold)).score == 1.0
        assert ds.score(item, "I am not able to tell.").prediction is None
        assert ds.score(item, "I am not able to tell.").score == 0.0
        if ds.multi:
            wrong = next(x for x in shown if x not in item.gold)
        else:
            gold_code = codes_for(n)[shown.index(item.gold)] if ds.answer_with == "name" else item.gold
            wrong = next(c for c in codes_for(n) if c != gold_code)
        bad = ds.score(item, f"Answer: {wrong}")
        assert bad.prediction is not None and bad.score < 1.0
        if not ds.multi:
            assert bad.score == 0.0


@pytest.mark.parametrize("dataset_id", IDS)
def test_reference_copy_is_read_and_agrees_with_the_original(dataset_id, reference_only):
    ref = _records(dataset_id, reference_only)
    assert len(ref) == REF_POOL[dataset_id]
    ds = registry.get(dataset_id)
    orig = dict(_records(dataset_id))
    ref_items = {i: ds.render(i, raw) for i, raw in ref}
    # Same ids, same gold, same prompt wherever both copies hold an item.
    common = [i for i in ref_items if i in orig]
    # The team's CPED and VUA20 originals are the first 1,000 rows; the reference sampled the full split.
    if dataset_id not in ("cped", "vua20"):
        assert len(common) == len(ref_items)
    for i in common:
        a, b = ref_items[i], ds.render(i, orig[i])
        assert a.gold == b.gold, i
        assert a.messages == b.messages, i


def test_metrics_and_baselines_are_declared():
    for dataset_id in IDS:
        ds = registry.get(dataset_id)
        assert sum(m.primary for m in ds.metrics) == 1, dataset_id
        assert 0 < ds.chance_baseline < 1 and 0 <= ds.majority_baseline < 1, dataset_id
        assert ds.language in ("en", "zh", "mixed")
    assert [m.name for m in registry.get("semeval2018_task3").metrics] == ["f1_ironic", "accuracy"]
    assert [m.name for m in registry.get("vua20").metrics] == ["f1_metaphor", "accuracy"]
    assert registry.get("semeval2018_task1").metrics[0].name == "jaccard_accuracy"


# ---------------------------------------------------------------- PQEmotion (moodbench1-4)


def test_pqemotion_keeps_every_first_row_and_maps_gold_through_the_shuffle():
    for dataset_id, suffix, n in (("moodbench1", "re", 6), ("moodbench2", "un", 4), ("moodbench3", "ma", 4),
                                  ("moodbench4", "er", 4)):
        recs = dict(_records(dataset_id))
        stems = {i.split("/")[0] for i in recs}
        assert all(s.endswith("_" + suffix) for s in stems)
        assert {f"{s}/1" for s in stems} <= set(recs)  # the reference drops id 1 of every file
        ds = registry.get(dataset_id)
        for item_id, raw in recs.items():
            item = ds.render(item_id, raw)
            perm, shown = item.meta["perm"], item.meta["options"]
            assert sorted(perm) == list(range(n)) and len(shown) == n
            gold_text = raw[f"o{'ABCDEF'.index(raw['gold']) + 1}"]
            assert " ".join(gold_text.split()) == shown["ABCDEF".index(item.gold)]
            assert perm[item.meta["g"]] == "ABCDEF".index(raw["gold"])


def test_pqemotion2_gold_is_no_longer_mostly_a():
    recs = _records("moodbench2")
    ds = registry.get("moodbench2")
    raw_a = sum(r["gold"] == "A" for _, r in recs) / len(recs)
    shown_a = sum(ds.render(i, r).gold == "A" for i, r in recs) / len(recs)
    assert raw_a > 0.69 and shown_a < 0.3
    top = max(sum(ds.render(i, r).gold == c for i, r in recs) for c in "ABCD")
    assert ds.majority_baseline == pytest.approx(top / len(recs))


def test_pqemotion_first_row_of_first_file_as_in_the_csv():
    if not Path(PQ).is_dir():
        pytest.skip(f"real data not found: {PQ}")
    path = Path(PQ) / "Context_of_Emotion_re.csv"
    files = registry.get("moodbench1").files[0]
    n, row = next(read_rows(files, path))
    assert n == 0 and row["id"] == "1" and row["gold"] == "E" and row["category"] == "Context of Emotion"


# ---------------------------------------------------------------- EmoBench (emobench1-3)


def test_emobench_is_asked_in_each_items_language_with_its_own_options():
    for dataset_id, field, label in (("emobench1", "emotion_choices", "emotion_label"),
                                     ("emobench2", "cause_choices", "cause_label"),
                                     ("emobench3", "choices", "label")):
        ds = registry.get(dataset_id)
        recs = _records(dataset_id)
        assert {i.split("/")[0] for i, _ in recs} == {"en", "zh"}
        for item_id, raw in recs:
            item = ds.render(item_id, raw)
            text = item.messages[0].content
            if raw["language"] == "zh":
                assert "答案：X" in text and "情境：" in text
            else:
                assert "`Answer: X`" in text and "Scenario:" in text
            shown = item.meta["options"]
            assert len(shown) == len(raw[field]) and all(shown)  # no blank lines for missing options
            assert shown["ABCDEFG".index(item.gold)] == " ".join(raw[label].split())
    sizes = {len(r["cause_choices"]) for _, r in _records("emobench2")}
    assert sizes == {4, 6, 7}


def test_emobench3_asks_for_an_action_or_a_response():
    ds = registry.get("emobench3")
    for item_id, raw in _records("emobench3")[:50] + _records("emobench3")[-50:]:
        text = ds.render(item_id, raw).messages[0].content
        word = {("en", "Action"): "action for", ("en", "Response"): "response for",
                ("zh", "Action"): "最有效的做法", ("zh", "Response"): "最有效的回应"}
        word = word[(raw["language"], raw["question type"])]
        assert word in text


# ---------------------------------------------------------------- SemEval-2018 Task 3


def test_semeval3_reads_text_and_label_from_the_same_line():
    recs = dict(_records("semeval2018_task3"))
    assert sum(r["Label"] == "1" for r in recs.values()) == 311
    # Tweet 2 of the gold file is ironic ("tall blonde" at Starbucks); its text comes with it.
    assert recs["2"]["Label"] == "1" and "tall blonde" in recs["2"]["Tweet text"]
    ds = registry.get("semeval2018_task3")
    item = ds.render("2", recs["2"])
    assert "tall blonde" in item.messages[0].content and item.gold == "B"


def _metric_from_measures(spec: MetricSpec, scored: list[Scored]) -> float:
    a = sum((s.measures or {}).get(spec.a, 0.0) for s in scored)
    b = sum((s.measures or {}).get(spec.b, 0.0) for s in scored)
    c = sum((s.measures or {}).get(spec.c, 0.0) for s in scored)
    return K.kind("micro_f1", a, b, c)


@pytest.mark.parametrize("dataset_id, positive_code", [("semeval2018_task3", "B"), ("vua20", "A")])
def test_positive_class_f1_equals_sklearn(dataset_id, positive_code):
    ds, items = _sample(dataset_id)
    rng = random.Random(3)
    y_true, y_pred, scored = [], [], []
    for item in items:
        r = rng.random()
        answer = item.gold if r < 0.6 else ("A" if item.gold == "B" else "B") if r < 0.9 else "no idea"
        s = ds.score(item, f"Answer: {answer}")
        scored.append(s)
        y_true.append(int(item.gold == positive_code))
        y_pred.append(int(s.prediction == positive_code))
    spec = ds.metrics[0]
    assert spec.primary and spec.kind == "label_f1"
    assert _metric_from_measures(spec, scored) == pytest.approx(f1_score(y_true, y_pred))
    assert sum(s.score for s in scored) / len(scored) == pytest.approx(
        sum(s.prediction == it.gold for s, it in zip(scored, items)) / len(items))


# ---------------------------------------------------------------- SemEval-2018 Task 1 (E-c)


def test_semeval1_keeps_the_first_line_and_reads_the_flags():
    recs = dict(_records("semeval2018_task1"))
    assert "2018-En-02711" in recs  # line 1 of the header-less file
    ds = registry.get("semeval2018_task1")
    item = ds.render("2018-En-02711", recs["2018-En-02711"])
    assert item.gold == ["anticipation"]
    item = ds.render("2018-En-00501", recs["2018-En-00501"])
    assert item.gold == ["joy", "optimism"]
    empty = [i for i, r in recs.items() if not ds.render(i, r).meta["g"]]
    assert len(empty) == 6
    item = ds.render(empty[0], recs[empty[0]])
    assert item.gold == ["none of these"] and item.messages[0].content.count("\nL. none of these") == 1


def test_semeval1_metrics_equal_sklearn():
    ds, items = _sample("semeval2018_task1")
    labels = list(ds.labels)
    rng = random.Random(11)
    gold_sets, pred_sets, scored = [], [], []
    for item in items:
        g = set(item.gold) - {"none of these"}
        r = rng.random()
        if r < 0.1:
            p, response = None, "I cannot say."
        elif r < 0.2:
            p, response = set(), "Answer: none of these"
        else:
            p = {x for x in labels if (x in g) != (rng.random() < 0.15)}
            response = "Answer: " + (", ".join(sorted(p)) if p else "none of these")
        s = ds.score(item, response)
        assert (s.prediction is None) == (p is None)
        gold_sets.append(g)
        pred_sets.append(p or set())
        scored.append(s)

    def onehot(sets):
        return [[int(x in s) for x in labels] for s in sets]

    yt, yp = onehot(gold_sets), onehot(pred_sets)
    parsed = [s.prediction is not None for s in scored]
    # Jaccard per tweet: sklearn's samples average, with E-c's 1 for "both empty" (parsed answers only).
    expect = [
        (1.0 if p else 0.0) if not g and not q else jaccard_score([a], [b], average="samples", zero_division=0)
        for a, b, g, q, p in zip(yt, yp, gold_sets, pred_sets, parsed)
    ]
    assert [s.measures["jac"] for s in scored] == pytest.approx(expect)
    jac = sum(s.measures["jac"] for s in scored) / len(scored)
    assert jac == pytest.approx(sum(expect) / len(expect))
    spec = {m.name: m for m in ds.metrics}
    assert _metric_from_measures(spec["micro_f1"], scored) == pytest.approx(f1_score(yt, yp, average="micro"))
    per_label = {x: _metric_from_measures(spec[f"f1_{x}"], scored) for x in labels}
    present = [i for i, x in enumerate(labels) if any(r[i] for r in yt) or any(r[i] for r in yp)]
    assert per_label == pytest.approx({x: v for x, v in zip(labels, f1_score(yt, yp, average=None, zero_division=0))})
    macro = sum(per_label[labels[i]] for i in present) / len(present)
    assert macro == pytest.approx(f1_score(yt, yp, average="macro", labels=present, zero_division=0))


# ---------------------------------------------------------------- VUA20


def test_vua20_skips_the_space_separated_header_and_shows_the_word():
    recs = _records("vua20")
    first_id, first = recs[0]
    assert first_id == "a3m-fragment02 45/0" and first["label"] == "0" and first["POS"] == "NOUN"
    ds = registry.get("vua20")
    for item_id, raw in recs:
        text = ds.render(item_id, raw).messages[0].content
        i = int(raw["w_index"])
        assert f'Word: "{raw["sentence"].split()[i]}" (word {i + 1} of the sentence)' in text
    item = ds.render(*recs[1])
    assert item.gold == "A" and '"Crossed"' in item.messages[0].content  # label 1, token 2


# ---------------------------------------------------------------- CPED


def test_cped_every_label_maps_to_an_option_in_both_copies(reference_only):
    ds = registry.get("cped")
    for recs in (_records("cped"), _records("cped", reference_only)):
        assert "TV_ID" in recs[0][1]  # the byte-order mark is not part of the first column name
        labels = {r["Emotion"] for _, r in recs}
        assert labels <= set(ds.gold_map)
        for item_id, raw in recs:
            assert ds.render(item_id, raw).gold in codes_for(13)
    # The seven names that differ from the option names of the reference all map.
    for name in ("anger", "depress", "sadness", "fear", "disgust", "positive-other", "negative-other"):
        assert name in ds.gold_map


# ---------------------------------------------------------------- EDOS


def test_edos_every_label_is_reachable_by_name_and_number():
    ds, items = _sample("edos")
    recs = dict(_records("edos"))
    item = items[0]
    for k, label in enumerate(ds.labels):
        assert ds.score(item, f"Answer: {label}").prediction == label
        assert ds.score(item, f"Answer: {k + 1}").prediction == label
    for it in items:
        raw = recs[it.id]
        assert ds.labels.index(it.gold) == int(raw["ed_emotion_index"])  # the release's own index order
    assert ds.score(item, "Answer: a").prediction is None  # no lower-case letter codes


# ---------------------------------------------------------------- Book-SORT


def test_booksort_gold_segment_comes_first_in_the_excerpt():
    ds = registry.get("booksort")
    recs = _records("booksort")
    golds = []
    for item_id, raw in recs:
        item = ds.render(item_id, raw)
        excerpt = raw["excerpt_text"].replace("*", "")
        shown = item.meta["options"]
        g = item.meta["g"]
        pos = [excerpt.find(" ".join(s.split()[:12])) for s in shown]
        assert min(pos) >= 0 and pos[g] < pos[1 - g], item_id
        assert "*" not in item.messages[0].content.split("\n\nA. ")[1][:3]
        golds.append(item.gold)
    assert golds.count("A") == sum(r["present_seg1_first"] == 1 for _, r in recs)


# ---------------------------------------------------------------- macro F1 against scikit-learn


@pytest.mark.parametrize("dataset_id", ["cped", "edos"])
def test_macro_f1_of_single_label_datasets_equals_sklearn(dataset_id):
    ds, items = _sample(dataset_id)
    rng = random.Random(5)
    n = len(ds.labels)
    codes = codes_for(n)
    y_true, y_pred, scored = [], [], []
    for item in items:
        g = ds.labels.index(item.gold) if ds.answer_with == "name" else codes.index(item.gold)
        r = rng.random()
        p = None if r < 0.1 else g if r < 0.5 else rng.randrange(n)
        s = ds.score(item, "no idea" if p is None else f"Answer: {codes[p]}")
        scored.append(s)
        y_true.append(g)
        y_pred.append(-1 if p is None else p)
    spec = {m.name: m for m in ds.metrics}
    per = {k: _metric_from_measures(spec[f"f1_{k}"], scored) for k in (m.name[3:] for m in ds.metrics
                                                                      if m.kind == "label_f1")}
    present = sorted({x for x in y_true + y_pred if x >= 0})
    keys = [m.name[3:] for m in ds.metrics if m.kind == "label_f1"]
    macro = sum(per[keys[i]] for i in present) / len(present)
    assert macro == pytest.approx(f1_score(y_true, y_pred, average="macro", labels=present, zero_division=0))
    assert spec["accuracy"].primary


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

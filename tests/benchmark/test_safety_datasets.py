"""Values & Safety and bias datasets (StereoSet, the seven SafetyBench categories, TruthfulQA, BBQ,
CrowS-Pairs) on the
real files, plus their metrics; the questionnaires are in test_questionnaires.py.

Real-file tests skip with a reason when ../shared/datasets (or ENGINE_SHARED_DIR) lacks the folder.
"""

from __future__ import annotations

import random

import pytest

from benchmark import registry
from benchmark.datasets import bbq as bbq_mod
from benchmark.datasets._safetybench import CATEGORIES
from benchmark.extract.choice import codes_for
from benchmark.metrics.item import f1_from_counts, selected_true_share
from benchmark.sampling import seeded_sample
from tests.benchmark import kind_reference as K
from tests.benchmark.realdata import DATA_DIR, assert_pool_and_declaration, need
from tests.store.helpers import sql_metric_values

SAFETY = [f"safetybench_{c}" for c in CATEGORIES]
CHOICE = ["stereoset", *SAFETY, "bbq", "crows_pairs"]
ALL = [*CHOICE, "truthfulqa"]
# Pool sizes in the team folder (StereoSet: 700 + 300 clusters of the cut dev file).
POOL = {"stereoset": 1000, "truthfulqa": 1634, "bbq": 1100, "crows_pairs": 1508, **{d: 300 for d in SAFETY}}
FOLDER = {d: "safetybench" for d in SAFETY}

_cache: dict[str, list] = {}


def _records(dataset_id: str) -> list:
    folder = DATA_DIR / FOLDER.get(dataset_id, dataset_id)
    if not folder.is_dir():
        pytest.skip(f"real data for {dataset_id} not found: {folder} is absent")
    if dataset_id not in _cache:
        _cache[dataset_id] = list(registry.get(dataset_id).records(DATA_DIR))
    return _cache[dataset_id]


def _items(dataset_id: str):
    ds = registry.get(dataset_id)
    return ds, [ds.render(i, raw) for i, raw in seeded_sample(_records(dataset_id), dataset_id, 300)]


def _say(gold) -> str:
    return gold if isinstance(gold, str) else ", ".join(gold)


# ---------------------------------------------------------------- every dataset


@pytest.mark.parametrize("dataset_id", ALL)
def test_pool_sample_size_and_determinism(dataset_id):
    assert_pool_and_declaration(dataset_id, _records(dataset_id), POOL[dataset_id])


@pytest.mark.parametrize("dataset_id", CHOICE)
def test_choice_gold_valid_and_scoring(dataset_id):
    ds, items = _items(dataset_id)
    for item in items:
        text = item.messages[0].content
        assert "{'" not in text and "\nA. " in text and "\nB. " in text
        n = len(item.meta.get("options") or ds.option_fields)
        assert item.gold in codes_for(n)
        assert ds.score(item, f"Answer: {item.gold}").score == 1.0, item.id
        assert ds.score(item, item.gold).score == 1.0
        wrong = next(c for c in codes_for(n) if c != item.gold)
        assert ds.score(item, f"Answer: {wrong}").score == 0.0
        unparsed = ds.score(item, "I would rather not say.")
        assert unparsed.prediction is None and unparsed.score == 0.0


def test_truthfulqa_formats_gold_and_scoring():
    recs = _records("truthfulqa")
    assert sum(i.startswith("mc1/") for i, _ in recs) == sum(i.startswith("mc2/") for i, _ in recs) == 817
    ds, items = _items("truthfulqa")
    kinds = {i.id[:3] for i in items}
    assert kinds == {"mc1", "mc2"}
    for item in items:
        codes = codes_for(len(item.meta["options"]))
        text = item.messages[0].content
        assert text.startswith("Answer the following question truthfully.") and "\nA. " in text
        if item.id.startswith("mc1/"):
            assert item.gold in codes
            right = ds.score(item, f"Answer: {item.gold}")
            assert right.score == 1.0 and right.measures == {"mc1": 1.0}
            wrong = next(c for c in codes if c != item.gold)
            assert ds.score(item, f"Answer: {wrong}").score == 0.0
        else:
            assert item.gold and set(item.gold) <= set(codes) and item.gold == sorted(item.gold)
            right = ds.score(item, f"Answer: {_say(item.gold)}")
            assert right.score == 1.0 and right.measures == {"mc2": 1.0, "mc2_f1": 1.0}
            # Selecting everything: the share of true answers among all choices.
            every = ds.score(item, "Answer: " + ", ".join(codes))
            assert every.score == pytest.approx(len(item.gold) / len(codes))
            false = [c for c in codes if c not in item.gold]
            if false:
                assert ds.score(item, f"Answer: {false[0]}").score == 0.0
        assert ds.score(item, "Hmm, hard to say.").prediction is None


def test_truthfulqa_reference_copy_has_the_same_ids(tmp_path):
    ref = DATA_DIR / "moodbench/basic_ability/common_sense/TruthfulQA_V1_jsoncsv/qa/mc_task.json"
    if not ref.is_file():
        pytest.skip(f"{ref} is absent")
    target = tmp_path / "moodbench/basic_ability/common_sense/TruthfulQA_V1_jsoncsv/qa"
    target.mkdir(parents=True)
    (target / "mc_task.json").write_bytes(ref.read_bytes())
    ref_ids = {i for i, _ in registry.get("truthfulqa").records(tmp_path)}
    assert len(ref_ids) == 600 and ref_ids <= {i for i, _ in _records("truthfulqa")}


def test_truthfulqa_mc1_true_answer_is_not_always_first():
    _, items = _items("truthfulqa")
    firsts = [i.gold == "A" for i in items if i.id.startswith("mc1/")]
    assert 0.1 < sum(firsts) / len(firsts) < 0.5  # shuffled; the file always lists it first


# ---------------------------------------------------------------- per-dataset specifics


def test_stereoset_layout_and_measures():
    recs = _records("stereoset")
    assert sum(i.startswith("inter/") for i, _ in recs) == 700
    assert sum(i.startswith("intra/") for i, _ in recs) == 300
    ds, items = _items("stereoset")
    positions = [i.meta["perm"].index(0) for i in items]  # where the stereotype is shown
    assert all(positions.count(p) > 60 for p in range(3))
    item = items[0]
    perm = item.meta["perm"]
    for shown, orig in enumerate(perm):
        m = ds.score(item, f"Answer: {'ABC'[shown]}").measures
        assert m == {"answered": 1.0, "stereo": float(orig == 0), "anti": float(orig == 1),
                     "meaningful": float(orig < 2), "first": float(shown == 0)}
    text = item.messages[0].content
    assert "stereotype" not in text.lower() and item.meta["options"][perm.index(1)] in text


def test_safetybench_categories_partition_the_subset():
    ids = [{i for i, _ in _records(d)} for d in SAFETY]
    assert sum(map(len, ids)) == 2100 and len(set().union(*ids)) == 2100
    ds, items = _items("safetybench_ub")
    assert all(i.messages[0].content.startswith("以下是一道关于安全的单项选择题") for i in items)
    share_b = sum(i.gold == "B" for i in items) / len(items)
    assert share_b == pytest.approx(ds.majority_baseline)


def test_safetybench_missing_answers_is_data_missing(tmp_path):
    from benchmark.dataset import DataMissing

    src = DATA_DIR / "safetybench/opensource_data/test_zh_subset.json"
    if not src.is_file():
        pytest.skip(f"{src} is absent")
    (tmp_path / "safetybench/opensource_data").mkdir(parents=True)
    (tmp_path / "safetybench/opensource_data/test_zh_subset.json").write_bytes(src.read_bytes())
    with pytest.raises(DataMissing, match="answer file"):
        list(registry.get("safetybench_em").records(tmp_path))


# ---------------------------------------------------------------- metrics


def _stereoset(n_stereo: int, n_anti: int, n_unrelated: int) -> dict[str, float | None]:
    """LMS, SS and ICAT from pooled picks through the kinds stereoset.py declares (icat, ratio, ratio)."""
    meaningful, answered = n_stereo + n_anti, n_stereo + n_anti + n_unrelated
    return {"lms": K.kind("ratio", meaningful, answered), "ss": K.kind("ratio", n_stereo, meaningful),
            "icat": K.kind("icat", n_stereo, n_anti, answered)}


def test_stereoset_scores_hand_computed_and_paper_formula():
    got = _stereoset(30, 50, 20)
    assert got["lms"] == pytest.approx(0.8) and got["ss"] == pytest.approx(30 / 80)
    lms, ss = 80.0, 100 * 30 / 80  # the paper's 0-100 form: icat = lms * min(ss, 100 - ss) / 50
    assert 100 * got["icat"] == pytest.approx(lms * min(ss, 100 - ss) / 50) == pytest.approx(60.0)
    assert _stereoset(50, 50, 0)["icat"] == 1.0  # ideal model
    assert _stereoset(100, 0, 0)["icat"] == 0.0  # always the stereotype
    assert _stereoset(0, 0, 0) == {"lms": None, "ss": None, "icat": None}
    assert _stereoset(0, 0, 10)["ss"] is None
    rng = random.Random(3)
    for _ in range(200):
        s, a, u = (rng.randint(0, 40) for _ in range(3))
        r = _stereoset(s, a, u)
        if r["ss"] is not None:
            assert r["icat"] == pytest.approx(r["lms"] * min(r["ss"], 1 - r["ss"]) / 0.5)


def test_selected_true_share():
    assert selected_true_share(["A", "C"], ["A", "B"]) == 0.5
    assert selected_true_share(["A"], ["A", "B", "C"]) == 1.0
    assert selected_true_share([], ["A"]) == 0.0
    assert selected_true_share(None, ["A"]) == 0.0


def test_stereoset_metrics_in_sql_match_python():
    ds, items = _items("stereoset")
    rng = random.Random(11)
    scored = []
    for item in items:
        r = rng.random()
        scored.append(ds.score(item, "No." if r < 0.1 else f"Answer: {rng.choice('ABC')}"))
    got = sql_metric_values(ds.id, ds.metrics, [(None, sc) for sc in scored])
    picks = [(i.meta["perm"][codes_for(3).index(s.prediction)] if s.prediction else None)
             for i, s in zip(items, scored)]
    ref = _stereoset(picks.count(0), picks.count(1), picks.count(2))
    assert got["icat"] == pytest.approx(ref["icat"])
    assert got["lms"] == pytest.approx(ref["lms"]) and got["ss"] == pytest.approx(ref["ss"])
    assert got["anti_stereotype_rate"] == pytest.approx(picks.count(1) / len(picks))
    shown_first = sum(s.prediction == "A" for s in scored) / sum(p is not None for p in picks)
    assert got["first_position_rate"] == pytest.approx(shown_first)


def test_icat_kind_on_hand_made_rows():
    from benchmark.dataset import MetricSpec, Scored

    spec = [MetricSpec("icat", "icat", "st", "an", "ok", primary=True)]
    rows = [{"st": 1, "an": 0, "ok": 1}] * 3 + [{"st": 0, "an": 1, "ok": 1}] + [{"st": 0, "an": 0, "ok": 1}]
    rows += [{"st": 0, "an": 0, "ok": 0}]  # unparsed: out of every denominator
    got = sql_metric_values("d", spec, [(None, Scored("A", 1.0, r)) for r in rows])
    assert got["icat"] == pytest.approx(_stereoset(3, 1, 1)["icat"]) == pytest.approx(0.4)


def test_truthfulqa_metrics_in_sql_match_python():
    ds, items = _items("truthfulqa")
    rng = random.Random(5)
    scored = []
    for item in items:
        codes = codes_for(len(item.meta["options"]))
        r = rng.random()
        if r < 0.1:
            answer = "Hmm, hard to say."
        elif item.id.startswith("mc1/"):
            answer = f"Answer: {rng.choice(codes)}"
        else:
            answer = "Answer: " + ", ".join(sorted(rng.sample(codes, rng.randint(1, len(codes)))))
        scored.append(ds.score(item, answer))
    got = sql_metric_values(ds.id, ds.metrics, [(None, sc) for sc in scored])
    mc1 = [(i.gold, s.prediction) for i, s in zip(items, scored) if i.id.startswith("mc1/")]
    assert got["mc1"] == pytest.approx(K.accuracy([g for g, _ in mc1], [p for _, p in mc1]))
    mc2 = [selected_true_share(s.prediction, i.gold) for i, s in zip(items, scored) if i.id.startswith("mc2/")]
    assert got["mc2"] == pytest.approx(sum(mc2) / len(mc2))
    f1 = [f1_from_counts(*K.set_counts(i.gold, s.prediction)) for i, s in zip(items, scored)
          if i.id.startswith("mc2/")]
    assert got["mc2_f1"] == pytest.approx(sum(f1) / len(f1))



def test_bbq_reference_copy_used_when_originals_absent(tmp_path):
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
    ds, items = _items("bbq")
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
    ds, items = _items("crows_pairs")
    assert {tuple(i.meta["perm"]) for i in items} == {(0, 1), (1, 0)}
    for item in items[:50]:
        stereo = item.meta["perm"].index(0)  # where sent_more was shown
        m = ds.score(item, f"Answer: {'AB'[stereo]}").measures
        assert m["stereo"] == 1.0 and m["answered"] == 1.0 and m["first"] == float(stereo == 0)
        assert ds.score(item, "Answer: C").measures["answered"] == 0.0
    assert len(_records("crows_pairs")) == 1508

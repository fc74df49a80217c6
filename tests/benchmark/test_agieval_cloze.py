"""AGIEval's cloze tasks (math, gaokao-mathcloze): MATH answer equivalence, extraction, the pool.

The normaliser and extraction tests run everywhere; the pool tests read the team's
data folder and skip when it lacks AGIEval.
"""

from __future__ import annotations

import msgspec
import pytest

from benchmark import registry
from benchmark.dataset import DataMissing, Item, Scored
from benchmark.adapters.mathequiv import extract_answer, is_equiv, last_boxed, strip_string
from benchmark.sampling import seeded_sample
from tests.benchmark.realdata import (
    DATA_DIR,
    IS_TEAM_COPY,
    assert_sample_deterministic,
    need,
)
from tests.benchmark.realdata import records as _cached_records
from tests.store.helpers import sql_metric_values

CLOZE = ("math", "gaokao-mathcloze")


# ---------------------------------------------------------------- the normaliser (hand-computed)


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("\\dfrac{1}{2}", "\\frac{1}{2}"),
        ("\\tfrac34", "\\frac{3}{4}"),
        ("\\frac12", "\\frac{1}{2}"),
        ("\\frac1{72}", "\\frac{1}{72}"),
        ("\\frac{72}1", "\\frac{72}1"),  # MATH's own comment: not fixed
        ("\\frac a b", "\\frac{a}{b}"),  # spaces go before the frac fix
        ("\\sqrt2", "\\sqrt{2}"),
        ("3\\sqrt 2", "3\\sqrt{}2"),  # the sqrt fix takes one character, before spaces go (as published)
        ("72 + 72\\sqrt{2}", "72+72\\sqrt{2}"),
        ("90^\\circ", "90"),
        ("90^{\\circ}", "90"),
        ("\\$18.90", "18.90"),
        ("50\\%", "50"),
        ("5\\text{ cm}", "5"),
        ("\\text{even}", "\\text{even}"),  # "\text{" without a space is not a unit
        ("\\left( 1, 2 \\right)", "(1,2)"),
        ("371,\\!043,\\!400", "371,043,400"),
        ("\\begin{pmatrix} 2/5 \\\\ -1/5 \\end{pmatrix}", "\\begin{pmatrix}2/5\\-1/5\\end{pmatrix}"),
        (".5", "\\frac{1}{2}"),  # leading zero added, then 0.5 -> 1/2
        ("0.5", "\\frac{1}{2}"),
        ("x = .25", "0.25"),
        ("{.3}", "{0.3}"),
        ("k = 7", "7"),
        ("x - 3z = 0", "x-3z=0"),  # more than two characters before "=": kept
        ("3/4", "\\frac{3}{4}"),
        ("-1/2", "\\frac{-1}{2}"),
        ("3/x", "3/x"),
        ("1/2/3", "1/2/3"),
        ("2.0", "2.0"),
        ("", ""),
    ],
)
def test_strip_string_hand_computed(raw, normal):
    assert strip_string(raw) == normal


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("\\frac{1}{2}", "0.5"),
        ("\\dfrac{1}{2}", "\\frac12"),
        ("1/2", "\\frac{1}{2}"),
        ("\\sqrt2", "\\sqrt{2}"),
        ("10^\\circ", "10"),
        ("\\$5", "5"),
        ("5\\text{ inches}", "5"),
        ("x = 5", "5"),
        ("\\left(-\\infty,-\\frac 12\\right)", "(-\\infty, -\\frac{1}{2})"),
        ("(3, 4]", "(3,4]"),
        ("$\\frac{1}{2}$", "\\frac{1}{2}"),  # our pre-step: math-mode dollars
        ("$5$;$10$", "5; 10"),
        ("$5$;$10$", "5；10"),
        ("$y=2x$", "2x"),
        ("\\sqrt", "\\sqrt"),  # the published code fails here: raw strings compared
    ],
)
def test_equal_pairs(a, b):
    assert is_equiv(a, b) and is_equiv(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("2", "2.0"),
        ("1,000", "1000"),
        ("x+y=5", "5"),
        ("\\frac{1}{3}", "0.33"),
        ("-\\frac{1}{2}", "-1/2"),  # a/b only for a whole answer of two integers, as published
        ("5;10", "10;5"),
        ("\\sqrt", "\\sqrt{}"),
        ("5\\text{ cm}\\text{ m}", "5"),  # two unit texts: the published code fails, raw strings differ
        (None, "2"),
    ],
)
def test_unequal_pairs(a, b):
    assert not is_equiv(a, b)


# ---------------------------------------------------------------- reading the answer


@pytest.mark.parametrize(
    ("response", "answer"),
    [
        ("Answer: 5", "5"),
        ("The sum is 2+3.\nAnswer: $\\frac{1}{2}$.", "$\\frac{1}{2}$"),
        ("答案：$5$;$10$", "$5$;$10$"),
        ("**Final answer:** 12", "12"),
        ("Answer:\n\n(3,4]", "(3,4]"),
        ("Answer: 3\nWait.\nAnswer: 4", "4"),  # the last marker
        ("So $x = \\boxed{\\frac{1}{2}}$.\nAnswer: 7", "\\frac{1}{2}"),  # a box wins
        ("\\boxed{1} then \\boxed{\\left(2, \\frac{3}{4}\\right)}", "\\left(2, \\frac{3}{4}\\right)"),
        ("\\fbox{9}", "9"),
        ("<think>Answer: 1</think>Answer: 2", "2"),
    ],
)
def test_extract_answer(response, answer):
    assert extract_answer(response) == answer


@pytest.mark.parametrize("response", [None, "", "I cannot solve this.", "Answer:", "\\boxed{}", "\\boxed{2"])
def test_nothing_readable_is_unparsed(response):
    assert extract_answer(response) is None


def test_last_boxed_balances_braces():
    assert last_boxed("\\boxed{\\frac{a}{b}} x") == "\\frac{a}{b}"
    assert last_boxed("no box") is None


# ---------------------------------------------------------------- the dataset


def test_cloze_item_protocol():
    ds = registry.get("agieval")
    raw = {"_stem": "gaokao-mathcloze", "_row": 1, "passage": None, "question": "则 $a_{1}=(\\quad)$",
           "options": None, "label": None, "answer": "$5$;$10$"}
    item = ds.render("gaokao-mathcloze/1", raw)
    assert item.answer is None and item.gold == "$5$;$10$" and item.meta == {"lang": "zh", "cloze": True}
    text = item.messages[0].content
    assert "问题：则 $a_{1}=(\\quad)$" in text and "答案：<最终答案>" in text and "\nA. " not in text
    assert ds.score(item, "答案：5; 10") == Scored("5; 10", 1.0, {"zh": 1.0, "cloze": 1.0})
    assert ds.score(item, "答案：5") == Scored("5", 0.0, {"zh": 0.0, "cloze": 0.0})
    assert ds.score(item, "不会") == Scored(None, 0.0, {"zh": 0.0, "cloze": 0.0})
    en = ds.render("math/0", {**raw, "_stem": "math", "question": "Find x.", "answer": "\\dfrac{1}{3}"})
    assert en.meta["lang"] == "en" and "Question: Find x." in en.messages[0].content
    assert "`Answer: <final answer>`" in en.messages[0].content
    assert ds.score(en, "Answer: 1/3").score == 1.0
    # A choice item is unchanged: no cloze measure, so accuracy_cloze averages the cloze items only.
    choice = ds.score(Item("x", (), "A", {"g": 0, "options": ["p", "q"], "lang": "en"}), "Answer: A")
    assert choice == Scored("A", 1.0, {"en": 1.0})
    got = sql_metric_values("agieval", ds.metrics, [("A", choice), (en.gold, ds.score(en, "Answer: 2"))])
    assert got["accuracy"] == 0.5 and got["accuracy_cloze"] == 0.0 and got["accuracy_en"] == 0.5


def test_stamps_cover_the_cloze_part():
    ds = registry.get("agieval")
    assert ds.prompt_hash() != ds.base.prompt_hash()
    assert ds.scorer_version != ds.base.scorer_version
    other = msgspec.structs.replace(ds.other, task={"en": "x", "zh": "y"})
    assert other.prompt_hash() != ds.other.prompt_hash()
    again = msgspec.structs.replace(ds, other=other)
    assert again.prompt_hash() != ds.prompt_hash() and again.scorer_version == ds.scorer_version


def _records() -> list:
    need("agieval")
    try:
        return _cached_records("agieval")
    except DataMissing as e:
        pytest.skip(f"real data for agieval not found: {e}")


def test_pool_has_the_cloze_items_with_their_gold():
    recs = _records()
    ds = registry.get("agieval")
    cloze = [(i, r) for i, r in recs if i.split("/")[0] in CLOZE]
    if IS_TEAM_COPY:
        assert len(cloze) == 200 and len(recs) == 2100
    for item_id, raw in cloze:
        item = ds.render(item_id, raw)
        assert item.meta["cloze"] and item.answer is None and item.gold == raw["answer"].strip()
        assert item.meta["lang"] == ("en" if item_id.startswith("math/") else "zh")
    first = dict(cloze).get("math/1")
    if first is not None and IS_TEAM_COPY:
        assert ds.render("math/1", first).gold == "30"


def test_sample_is_deterministic_and_mixes_cloze_items():
    recs = _records()
    ids = assert_sample_deterministic("agieval", recs, 2100)
    assert any(i.split("/")[0] in CLOZE for i in ids)
    assert ids == [i for i, _ in seeded_sample(recs, "agieval", 300)]


@pytest.mark.parametrize("template", ["Answer: {}", "\\boxed{{{}}}", "Let me think.\n答案：{}"])
def test_every_cloze_gold_scores_one(template):
    ds = registry.get("agieval")
    for item_id, raw in _records():
        if item_id.split("/")[0] not in CLOZE:
            continue
        item = ds.render(item_id, raw)
        s = ds.score(item, template.format(item.gold))
        assert s.score == 1.0 and s.measures["cloze"] == 1.0, (item_id, item.gold, s.prediction)
        unread = ds.score(item, "I do not know.")
        assert unread.prediction is None and unread.score == 0.0


def test_reference_copy_cloze_golds_score_one(tmp_path):
    if not (DATA_DIR / "moodbench").is_dir():
        pytest.skip(f"reference data not found: {DATA_DIR / 'moodbench'} is absent")
    (tmp_path / "moodbench").symlink_to(DATA_DIR / "moodbench")
    ds = registry.get("agieval")
    n = 0
    for item_id, raw in ds.records(tmp_path):
        if item_id.split("/")[1] in CLOZE:
            item = ds.render(item_id, raw)
            assert ds.score(item, f"Answer: {item.gold}").score == 1.0, (item_id, item.gold)
            n += 1
    assert n == 418 or not IS_TEAM_COPY

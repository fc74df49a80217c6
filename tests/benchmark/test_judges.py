"""Judge rubrics: prompts, strict parsing, fitting to a context; dataset-side fitting and the swap check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmark import registry
from benchmark.context import (
    cut_to_tokens,
    estimate_tokens,
    fitted,
    item_tokens,
    prompt_budget,
)
from benchmark.dataset import Item, Message
from benchmark.adapters.judges import (
    LONGMEMEVAL_TEMPLATES,
    SOURCE_CUT,
    LongMemEvalRubric,
    SummaryRubric,
    rubric_for,
)
from benchmark.dataset import clean_reply
from benchmark.sampling import seeded_sample

FIXTURES = Path(__file__).parent / "fixtures"
SUMMARY = SummaryRubric()
LME = LongMemEvalRubric()


def _summary_item(source="源文本。" * 20, gold="参考摘要"):
    return Item("x", (Message("user", "..."),), [gold], {"source": source})


def _lme_item(qtype="multi-session", kind="factual"):
    return Item("q", (Message("user", "..."),), ["5"], {"type": qtype, "kind": kind, "question": "How many?"})


# ------------------------------------------------------------------ summary rubric: strict JSON


@pytest.mark.parametrize("reply", [
    '{"completeness": 4, "conciseness": 3, "faithfulness": 5, "fluency": 4, "reason": "ok"}',
    '```json\n{"completeness": 4, "conciseness": 3, "faithfulness": 5, "fluency": 4, "reason": "ok"}\n```',
    '<think>hmm</think>\n{"fluency": 4, "reason": "ok", "completeness": 4, "conciseness": 3, "faithfulness": 5}',
])
def test_summary_valid_replies(reply):
    v = SUMMARY.parse(_summary_item(), reply)
    assert v.status == "ok" and v.score == 4.0 and v.reason == "ok"
    assert v.fields == {"completeness": 4, "conciseness": 3, "faithfulness": 5, "fluency": 4, "score": 4.0}


@pytest.mark.parametrize("reply", [
    'Here is my rating: {"completeness": 4, "conciseness": 3, "faithfulness": 5, "fluency": 4, "reason": "ok"}',
    '{"completeness": 4, "conciseness": 3, "faithfulness": 5, "fluency": 4}',  # no reason
    '{"completeness": 6, "conciseness": 3, "faithfulness": 5, "fluency": 4, "reason": "x"}',  # off the scale
    '{"completeness": 0, "conciseness": 3, "faithfulness": 5, "fluency": 4, "reason": "x"}',
    '{"completeness": 4.5, "conciseness": 3, "faithfulness": 5, "fluency": 4, "reason": "x"}',  # not an integer
    '{"completeness": "4", "conciseness": 3, "faithfulness": 5, "fluency": 4, "reason": "x"}',
    '{"completeness": 4, "conciseness": 3, "faithfulness": 5, "fluency": 4, "reason": "x", "overall": 4}',
    '{"completeness": 4, "conciseness": 3, "faithfulness": 5, "fluency": 4, "reason": "x"} {"x": 1}',
    "Score: 4/5", "", None,
])
def test_summary_malformed_replies_are_unparsed_never_guessed(reply):
    v = SUMMARY.parse(_summary_item(), reply)
    assert v.status == "unparsed" and v.score is None and v.fields is None and v.reason


@pytest.mark.parametrize("reply", ["I'm sorry, but I can't evaluate this.", "I cannot help with that.", "抱歉，我无法评价。"])
def test_summary_refusals(reply):
    assert SUMMARY.parse(_summary_item(), reply).status == "refused"


def test_summary_prompt_holds_source_reference_and_answer_and_cuts_the_source_only():
    item = _summary_item(source="甲" * 3000)
    p = SUMMARY.prompt(item, "候选摘要", None)
    text = p.messages[0].content
    assert "甲" * 3000 in text and "参考摘要" in text and "候选摘要" in text and not p.truncated
    for d in ("completeness", "conciseness", "faithfulness", "fluency"):
        assert d in text
    cut = SUMMARY.prompt(item, "候选摘要", 2000)
    assert cut.truncated and estimate_tokens(cut.messages[0].content) <= 2000
    assert "候选摘要" in cut.messages[0].content and SOURCE_CUT in cut.messages[0].content
    assert SUMMARY.prompt(item, "长" * 2000, 2000) is None  # the answer alone does not fit: unjudgeable
    # a long reference goes before the judge loses the source
    long_ref = _summary_item(source="甲" * 3000, gold="乙" * 600)
    p = SUMMARY.prompt(long_ref, "候选摘要", 1000)
    text = p.messages[0].content
    assert p.truncated and "乙" not in text and "(left out for length)" in text and "甲" * 100 in text
    assert estimate_tokens(text) <= 1000


def test_summary_floor_and_answer():
    v = SUMMARY.floor(_summary_item())
    assert v.score == 1.0 and v.fields["faithfulness"] == 1.0
    assert SUMMARY.answer("Summary: x", " x ") == "x" and SUMMARY.answer("", None) == ""


def test_rubric_versions_are_stamps():
    assert SUMMARY.version.startswith("summary-") and SummaryRubric(template="{source}{reference}{summary}").version != SUMMARY.version
    assert LME.version.startswith("longmemeval-")
    assert rubric_for("lcsts") is rubric_for("vcsum") and rubric_for("longmemeval") is not None
    assert rubric_for("personafeedback") is None  # the model under test is the pairwise judge there


# ------------------------------------------------------------------ LongMemEval rubric


def test_longmemeval_prompts_are_the_official_ones_by_type():
    assert LME.template_for(_lme_item("single-session-user")) == LONGMEMEVAL_TEMPLATES["standard"]
    assert "off-by-one" in LME.template_for(_lme_item("temporal-reasoning"))
    assert "updated answer" in LME.template_for(_lme_item("knowledge-update"))
    assert "Rubric:" in LME.template_for(_lme_item("single-session-preference"))
    assert "unanswerable" in LME.template_for(_lme_item("multi-session", "abstention"))
    # verbatim from xiaowu0162/LongMemEval src/evaluation/evaluate_qa.py (standard types)
    assert LONGMEMEVAL_TEMPLATES["standard"].startswith(
        "I will give you a question, a correct answer, and a response from a model. Please answer yes if the "
        "response contains the correct answer. Otherwise, answer no. If the response is equivalent to the correct "
        "answer or contains all the intermediate steps to get the correct answer, you should also answer yes. If the "
        "response only contains a subset of the information required by the answer, answer no. \n\nQuestion: {}")
    text = LME.prompt(_lme_item(), "It was 5.", None).messages[0].content
    assert "Question: How many?\n\nCorrect Answer: 5\n\nModel Response: It was 5.\n\n" in text
    with pytest.raises(ValueError, match="question type"):
        LME.template_for(_lme_item("made-up"))


@pytest.mark.parametrize("reply, correct", [
    ("yes", 1.0), ("Yes.", 1.0), ("**Yes**", 1.0), ("no", 0.0), ("No, it is wrong.", 0.0), ("NO", 0.0),
])
def test_longmemeval_yes_no(reply, correct):
    v = LME.parse(_lme_item("temporal-reasoning", "abstention"), reply)
    assert v.status == "ok" and v.score == correct
    assert v.fields == {"score": correct, "correct_temporal_reasoning": correct, "correct_abstention": correct}


@pytest.mark.parametrize("reply", ["The answer is yes", "yesterday", "Yes or no: no", "maybe", "", "Yes/No"])
def test_longmemeval_unreadable_replies(reply):
    assert LME.parse(_lme_item(), reply).status == "unparsed"


def test_clean_reply_removes_only_think_and_one_fence():
    assert clean_reply("<think>a</think> yes") == "yes"
    assert clean_reply("```\nyes\n```") == "yes"
    assert clean_reply("x ```yes```") == "x ```yes```"


# ------------------------------------------------------------------ context estimates and fitting


# Token counts of SmolLM2-135M's tokenizer (llama.cpp /extras/tokenize), measured once.
SMOLLM2 = {
    "Hello world, this is a test of the tokenizer.": 11,
    "请为下面这篇新闻写一段简短的摘要，用一两句话概括其要点": 46,
    "Rxe1+ Be6 15. Bd6 Kd7 16. Bxb8 Raxb8 17. Rc1 Rhc8": 37,  # chess notation: the known under-count
}


def test_estimate_is_pessimistic_for_prose_and_chinese():
    for text, real in SMOLLM2.items():
        est = estimate_tokens(text)
        if text.startswith("Rxe1"):
            assert 0.75 * real <= est < real
        else:
            assert real <= est <= 1.3 * real, (text, est, real)


def test_estimate_and_cut_is_a_prefix():
    assert estimate_tokens("abcd" * 10) == 8 and estimate_tokens("中文") == 4 and estimate_tokens("") == 0
    assert estimate_tokens("a 1") == 3 and estimate_tokens("a b") == 2  # a space joins a word, not a digit
    text = "abc中文" * 100
    cut = cut_to_tokens(text, 50)
    assert text.startswith(cut) and estimate_tokens(cut) <= 50 < estimate_tokens(cut + text[len(cut)])
    assert cut_to_tokens("short", 50) == "short" and cut_to_tokens("x", 0) == ""
    assert prompt_budget(None, 64) is None and prompt_budget(8192, None) == 8192 - 256 - 64


def _lme_rows():
    pytest.importorskip("duckdb")
    from tests.benchmark.realdata import DATA_DIR

    if not (DATA_DIR / "longmemeval").is_dir():
        pytest.skip("real LongMemEval data not found")
    return list(registry.get("longmemeval").records(DATA_DIR))


def test_longmemeval_fit_drops_oldest_sessions_keeps_the_question():
    ds = registry.get("longmemeval")
    item_id, raw = max(_lme_rows(), key=lambda r: len(r[1]["haystack_sessions"]))
    full = ds.render(item_id, raw)
    n = len(raw["haystack_sessions"])
    budget = item_tokens(full) - 200
    short = fitted(ds, item_id, raw, full, budget)
    text = short.messages[0].content
    assert item_tokens(short) <= budget and short.meta["sessions_dropped"] >= 1
    assert text.endswith(full.messages[0].content[-300:])  # the last session, date and question are kept
    assert f"({short.meta['sessions_dropped']} earlier session(s) are left out" in text
    assert f"--- Session {n} on" in text and "--- Session 1 on" not in text
    assert ds.score(short, "Answer: x").measures["truncated"] == 1.0
    assert ds.score(full, "Answer: x").measures["truncated"] == 0.0
    assert fitted(ds, item_id, raw, full, None) is full and fitted(ds, item_id, raw, full, 10**6) is full
    tiny = ds.fit(item_id, raw, 300)  # not even the last session fits: its oldest turns go, then text
    assert tiny.meta["turns_dropped"] > 0 and raw["question"] in tiny.messages[0].content
    assert item_tokens(tiny) <= 300 and ds.score(tiny, "x").measures["truncated"] == 1.0


def test_summary_fit_cuts_the_end_of_the_source():
    ds = registry.get("lcsts")
    raw = {"_id": "1", "text": "新闻正文" * 200, "summary": "摘要"}
    full = ds.render("1", raw)
    short = fitted(ds, "1", raw, full, 400)
    assert item_tokens(short) <= 400 and short.meta["truncated"] == 1
    assert short.meta["source"].endswith("从略）") and short.meta["source"] in short.messages[0].content
    assert ds.score(short, "摘要").measures["truncated"] == 1.0 and ds.score(full, "摘要").measures["truncated"] == 0.0


# ------------------------------------------------------------------ PersonaFeedback position-bias pairs


def test_personafeedback_swap_sample_reverses_the_order():
    ds = registry.get("personafeedback")
    recs = list(ds.records(FIXTURES))
    pairs = [i for i, _ in recs if ds.samples_of(i) == 2]
    assert 0 < len(pairs) < len(recs)
    # the pairs are chosen by item id: a smaller sample keeps the same pairs
    small = [i for i, _ in seeded_sample(iter(recs), "personafeedback", 5, 20250826)]
    assert [i for i in small if i in pairs] == [i for i in small if ds.samples_of(i) == 2]
    item_id, raw = next(r for r in recs if r[0] in pairs)
    a, b = ds.render_sample(item_id, raw, 0), ds.render_sample(item_id, raw, 1)
    assert a.meta["options"] == b.meta["options"][::-1] and a.gold != b.gold
    assert b.meta["swapped"] and "swapped" not in a.meta
    sa, sb = ds.score(a, f"Answer: {a.gold}"), ds.score(b, f"Answer: {b.gold}")
    assert sa.score == sb.score == 1.0
    assert sa.measures["orig"] == 1.0 and "swap" not in sa.measures
    assert sb.measures["swap"] == 1.0 and "orig" not in sb.measures  # accuracy counts the first order only
    assert json.dumps(a.meta)  # meta stays JSON-serialisable

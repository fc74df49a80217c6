"""Item checks, contradictions and token counts against CompactBench 0.1.0."""

from __future__ import annotations

import json
import random

import pytest

from benchmark.compactbench.cases import EvaluationItem, GroundTruth
from benchmark.compactbench.modes import COMPAT, STRICT
from benchmark.compactbench.scoring import WEIGHTS, ScoringError, run_check, score_item
from benchmark.compactbench.tokens import count_tokens, transcript_tokens
from tests.benchmark.compactbench.conftest import load_generated

RESPONSES = ["", "  Skip   CODE review!  ", "tara", "never skip code\nreview", "exactly", " exactly ",
             "store passwords in plaintext and skip code review", "The plan: deploy on Fridays."]
SPECS = [{"check": "contains_normalized", "value": "skip code review"}, {"check": "contains_normalized", "value": ""},
         {"check": "forbidden_absent", "value": "Skip Code Review"}, {"check": "forbidden_absent", "value": ""},
         {"check": "exact", "value": "exactly"}, {"check": "set_match", "values": ["tara", "fridays", "skip"]},
         {"check": "set_match", "values": []}]


def test_checks_are_compactbench_010s(cb):
    from compactbench.scoring import run_check as cb_check

    for spec in SPECS:
        for r in RESPONSES:
            assert run_check(spec, r) == cb_check(spec, r), (spec, r)
    for bad in ({}, {"check": "nope"}, {"check": "exact", "value": 1}, {"check": "set_match", "values": [1]}):
        with pytest.raises(ScoringError):
            run_check(bad, "x")


def test_weights_are_compactbench_010s(cb):
    from compactbench.scoring import WEIGHTS as CB

    assert WEIGHTS == {k.value: v for k, v in CB.items()}


def test_compat_contradiction_flags_reproduce_010(cb):
    from compactbench.contracts import EvaluationItem as CbItem
    from compactbench.contracts import GroundTruth as CbTruth
    from compactbench.scoring import contradiction_rate

    rng = random.Random(3)
    truth = GroundTruth(forbidden_behaviors=("skip code review", "deploy on Fridays"))
    types = list(WEIGHTS)
    for _ in range(200):
        items = [EvaluationItem(f"k{i}", rng.choice(types), "q", rng.choice(SPECS[:4])) for i in range(rng.randint(1, 5))]
        responses = {it.key: rng.choice(RESPONSES) for it in items}
        scored = [score_item(it, responses[it.key], truth, COMPAT) for it in items]
        counted = sum(s.counted for s in scored)
        mine = sum(s.violates for s in scored) / counted if counted else 0.0
        theirs = contradiction_rate([CbItem(key=i.key, item_type=i.item_type, prompt="q", expected=i.expected)
                                     for i in items], responses,
                                    CbTruth(forbidden_behaviors=list(truth.forbidden_behaviors)))
        assert mine == pytest.approx(theirs)


def test_strict_contradiction_counts_every_response_but_spares_recall():
    truth = GroundTruth(forbidden_behaviors=("skip code review",))
    recall = EvaluationItem("r", "forbidden_behavior_retention", "q",
                            {"check": "contains_normalized", "value": "skip code review"})
    reject = EvaluationItem("x", "forbidden_behavior_retention", "q",
                            {"check": "forbidden_absent", "value": "skip code review"})
    plan = EvaluationItem("p", "planning_soundness", "q", {"check": "forbidden_absent", "value": "skip code review"})
    bad = "we will skip code review"
    assert score_item(recall, bad, truth, STRICT).violates is False
    assert score_item(reject, bad, truth, STRICT).violates is True  # 0.1.0 never counts this item type
    assert score_item(reject, bad, truth, COMPAT).counted is False
    assert score_item(plan, bad, truth, STRICT).violates is score_item(plan, bad, truth, COMPAT).violates is True
    assert all(score_item(i, "fine", truth, STRICT).counted for i in (recall, reject, plan))


def test_cl100k_counts_equal_tiktoken(tiktoken_cl100k, cb_data):
    _, cases = load_generated(cb_data)
    texts = [t["content"] for c in cases.values() for t in c["transcript"]["turns"]]
    texts += ["héllo  wörld\n\n\tfoo 12345 ☃ 日本語 🙂", "   ", "\n\n\n", "a" * 3000, json.dumps(list(cases)[:20])]
    for t in texts:
        assert count_tokens(t) == len(tiktoken_cl100k.encode(t)), t
    assert count_tokens("") == 0
    assert count_tokens("x <|endoftext|> y") == len(tiktoken_cl100k.encode("x <|endoftext|> y", disallowed_special=()))


def test_transcript_tokens_is_compactbench_010s(cb, cb_data):
    from compactbench.contracts import Transcript as CbTranscript
    from compactbench.scoring import transcript_tokens as cb_transcript_tokens

    from benchmark.compactbench.cases import case_from_json

    _, cases = load_generated(cb_data)
    for doc in list(cases.values())[::7]:
        case = case_from_json(json.dumps(doc))
        assert transcript_tokens(case.transcript.turns) == cb_transcript_tokens(
            CbTranscript.model_validate(doc["transcript"]))

"""The [judge] rubric over an episode's transcript (benchmark/episodes/rubric.py): what the judge reads,
how a long transcript is fitted, the strict reading of the verdict, blocked episodes left unjudged."""

from __future__ import annotations

import msgspec
import pytest

from benchmark.context import estimate_tokens
from benchmark.episodes.rubric import LEFT_OUT, TRANSCRIPT_RUBRIC, TranscriptRubric
from benchmark.episodes.scoring import Transcript, TurnRecord
from benchmark.registry import get
from simulator.judge import TRANSCRIPT_VERDICT, judge_reply


def _transcript(exchanges: int = 2, end: str = "cap") -> str:
    turns = [TurnRecord(0, 0, "seeker", "I failed my exam.", emotion=30)]
    for t in range(1, exchanges + 1):
        turns += [TurnRecord(0, t, "companion", f"That sounds  hard,\nreply {t}."),
                  TurnRecord(0, t, "seeker", f"Yes, thanks {t}.", emotion=40)]
    turns.append(TurnRecord(1, 0, "seeker", "I am back."))
    return msgspec.json.encode(Transcript(tuple(turns), end)).decode()


def _item():
    ds = get("synthetic_episodes_judged")
    assert ds is not None and ds.rubric is TRANSCRIPT_RUBRIC
    return ds.render("e00003", {"n": 3})


def test_the_judge_reads_the_whole_dialogue_and_the_seeker():
    r = TRANSCRIPT_RUBRIC
    answer = r.answer(_transcript(), None)
    assert answer.split("\n") == ["(Session 1)", "SEEKER: I failed my exam.", "COMPANION: That sounds hard, reply 1.",
                                  "SEEKER: Yes, thanks 1.", "COMPANION: That sounds hard, reply 2.",
                                  "SEEKER: Yes, thanks 2.", "(Session 2)", "SEEKER: I am back."]
    p = r.prompt(_item(), answer, None)
    assert p is not None and not p.truncated and len(p.messages) == 1
    text = p.messages[0].content
    assert "a person in their 23s" in text and "Situation 3:" in text and answer in text
    assert '"supported"' in text and "[seeker-simulator]" not in text  # the scripted seeker never answers it


def test_a_long_transcript_keeps_its_last_messages_and_says_how_many_left_out():
    r, item = TRANSCRIPT_RUBRIC, _item()
    answer = r.answer(_transcript(exchanges=40), None)
    whole = r.prompt(item, answer, None)
    assert whole is not None
    budget = estimate_tokens(whole.messages[0].content) - 60
    p = r.prompt(item, answer, budget)
    assert p is not None and p.truncated and estimate_tokens(p.messages[0].content) <= budget
    text = p.messages[0].content
    dropped = int(text.split("[... ")[1].split(" ")[0])
    assert LEFT_OUT.format(n=dropped) in text and "SEEKER: I am back." in text
    assert r.prompt(item, answer, 50) is None  # not even the last two messages fit: unjudgeable


@pytest.mark.parametrize("reply, status, score", [
    ('{"seen": 4, "understood": 3, "supported": 5, "reason": "ok"}', "ok", 4.0),
    ('<think>hm</think>\n```json\n{"seen": 1, "understood": 2, "supported": 3, "reason": ""}\n```', "ok", 2.0),
    ('{"seen": 4.5, "understood": 3, "supported": 5, "reason": "ok"}', "unparsed", None),
    ('{"seen": 6, "understood": 3, "supported": 5, "reason": "ok"}', "unparsed", None),
    ('{"seen": 4, "understood": 3, "supported": 5, "reason": "ok", "extra": 1}', "unparsed", None),
    ('Score: {"seen": 4, "understood": 3, "supported": 5, "reason": "ok"}', "unparsed", None),
    ("I'm sorry, I cannot rate this conversation.", "refused", None),
    ("", "unparsed", None),
])
def test_the_verdict_is_read_strictly(reply, status, score):
    v = TRANSCRIPT_RUBRIC.parse(_item(), reply)
    assert v.status == status and v.score == score
    if status == "ok":
        assert v.fields is not None and set(v.fields) == {"seen", "understood", "supported", "score"}


def test_blocked_episodes_are_not_judged_and_empty_ones_floor():
    r = TRANSCRIPT_RUBRIC
    assert r.unjudged(_transcript(end="blocked")) is not None
    assert r.unjudged(_transcript()) is None and r.unjudged(None) is None
    only_opening = msgspec.json.encode(Transcript((TurnRecord(0, 0, "seeker", "hi"),), "end")).decode()
    assert r.answer(only_opening, None) == "" and r.answer("not json", None) == ""
    assert r.floor(_item()).score == 1.0


def test_the_version_follows_the_template_and_the_metrics_are_judge_means():
    assert TRANSCRIPT_RUBRIC.version == TranscriptRubric().version
    assert TranscriptRubric(template=TRANSCRIPT_RUBRIC.template + " ").version != TRANSCRIPT_RUBRIC.version
    assert {(m.name, m.kind, m.primary) for m in TRANSCRIPT_RUBRIC.metrics} == {
        ("judge_support", "mean", False), ("judge_seen", "mean", False), ("judge_understood", "mean", False),
        ("judge_supported", "mean", False)}


def test_the_scripted_judge_answers_the_rubric():
    p = TRANSCRIPT_RUBRIC.prompt(_item(), TRANSCRIPT_RUBRIC.answer(_transcript(), None), None)
    assert p is not None
    v = TRANSCRIPT_RUBRIC.parse(_item(), judge_reply("judge", p.messages[0].content))
    assert v.status == "ok" and v.score == (TRANSCRIPT_VERDICT["seen"] + TRANSCRIPT_VERDICT["understood"]
                                            + TRANSCRIPT_VERDICT["supported"]) / 3

"""An episode's measures from its transcript, against hand-computed values (benchmark/episodes/scoring.py)."""

from __future__ import annotations

import msgspec

from benchmark.episodes.scenario import Probe, Scenario, Session
from benchmark.episodes.scoring import Transcript, TurnRecord, normalized_match, score_transcript

SC = Scenario(id="x", language="en", seeker="a student", situation="exams", emotion="anxiety", start_emotion=40,
              sessions=(Session(), Session(probes=(Probe(1, "What is my dog called?", "Mochi", ("Mochi-chan",)),))))


def _tr(*turns: TurnRecord, end: str = "cap") -> str:
    return msgspec.json.encode(Transcript(turns, end)).decode()


def test_final_gain_rise_and_recall():
    text = _tr(TurnRecord(0, 0, "seeker", "hi", emotion=40),
               TurnRecord(0, 1, "companion", "hello"), TurnRecord(0, 1, "seeker", "meh", emotion=35),
               TurnRecord(0, 2, "companion", "I see"), TurnRecord(0, 2, "seeker", "better", emotion=55),
               TurnRecord(1, 0, "seeker", "remember my dog?", emotion=50),
               TurnRecord(1, 1, "companion", "Of course, mochi!"), TurnRecord(1, 1, "seeker", "yes", emotion=70))
    s = score_transcript(SC, text)
    # final 70 -> 0.70; gain (70 - 40) / 100; first exchange after which emotion > 40: the 2nd; probe hit
    assert s.score == 0.7 and s.prediction == 70
    assert s.measures == {"gain": 0.3, "rise_turn": 2.0, "success": 0.0, "failure": 0.0,
                          "recall_hit": 1.0, "recall_asked": 1.0}


def test_never_rising_and_a_missed_probe():
    text = _tr(TurnRecord(0, 1, "companion", "ok"), TurnRecord(0, 1, "seeker", "no", emotion=5),
               TurnRecord(1, 1, "companion", "I forgot"), TurnRecord(1, 1, "seeker", "sad", emotion=5),
               end="failure")
    s = score_transcript(SC, text)
    assert s.score == 0.05 and s.measures is not None
    assert s.measures["rise_turn"] == 3.0 and s.measures["failure"] == 1.0  # never: played + 1
    assert (s.measures["recall_hit"], s.measures["recall_asked"]) == (0.0, 1.0)


def test_blocked_is_not_scored_and_nothing_is_unparsed():
    assert score_transcript(SC, _tr(end="blocked")).score is None
    assert score_transcript(SC, "").prediction is None and score_transcript(SC, "not json").score is None


def test_normalized_match_on_word_boundaries():
    assert normalized_match("It's MOCHI, right?", "Mochi")
    assert not normalized_match("mochiko", "Mochi")
    assert normalized_match("叫小白吧", "小白")

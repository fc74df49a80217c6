"""An episode's score, read from its transcript (the episode's stored ``response``).

The transcript is the ``Transcript`` record as JSON: every exchange in order and how the episode
ended. Exchange ``t`` of a session is the companion's reply ``t`` and the seeker's answer to it
(its emotion after that reply); turn 0 is the seeker's opening. Measures (per episode):

* ``score``: the seeker's final emotion / 100 (primary, ``final_emotion``);
* ``gain``: (final - start) / 100, start being the scenario's ``start_emotion``;
* ``rise_turn``: the first exchange (counted over the whole episode) after which the emotion is
  above the start; never: the number of exchanges played + 1;
* ``recall_hit`` / ``recall_asked``: recall probes answered / asked (0 / 0 when none was asked, which
  the ratio leaves out):
  a probe asked before exchange ``k`` is answered when the companion's reply ``k`` contains the
  fact (``normalized_match``);
* ``success`` / ``failure``: 1 when the stop rule ended the episode that way.

A companion refusal or content block ends the episode as an outcome of its own (``end`` =
"blocked"): the engine stores it with ``blocked`` set; it is not scored (counted and shown apart).
"""

from __future__ import annotations

import re
import unicodedata

import msgspec

from benchmark.dataset import MetricSpec, Scored
from benchmark.episodes.scenario import Scenario

SCORING_VERSION = "1"

ENDS = ("end", "cap", "success", "failure", "blocked")

# Play kinds (benchmark/metrics/kinds.py): a scenario played `samples` times counts once, its measures
# averaged over its ok plays; the bootstrap resamples scenarios, then plays within each.
EPISODE_METRICS = (
    MetricSpec("final_emotion", "play_mean", "score", primary=True),
    MetricSpec("emotion_gain", "play_mean", "gain"),
    MetricSpec("turns_to_rise", "play_mean", "rise_turn"),
    MetricSpec("recall_accuracy", "play_ratio", "recall_hit", "recall_asked"),
    MetricSpec("success_rate", "play_mean", "success"),
    MetricSpec("failure_rate", "play_mean", "failure"),
)


class TurnRecord(msgspec.Struct, frozen=True, omit_defaults=True):
    """One stored message of an episode (a row of ``turns``, less its keys and stamps)."""

    session: int
    turn: int  # 0: the seeker's opening; t >= 1: exchange t
    role: str  # "companion" | "seeker"
    content: str
    emotion: int | None = None  # seeker only
    reason: str = ""
    end: bool = False  # the seeker said the conversation is over


class Transcript(msgspec.Struct, frozen=True):
    turns: tuple[TurnRecord, ...]
    end: str  # one of ENDS


_PUNCT = re.compile(r"[\W_]+", re.UNICODE)


def normalize(text: str) -> str:
    """Lower case, NFKC, punctuation and runs of space as one space (Chinese kept as is)."""
    text = unicodedata.normalize("NFKC", text).lower()
    return " ".join(_PUNCT.sub(" ", text).split())


def normalized_match(reply: str, answer: str, aliases: tuple[str, ...] = ()) -> bool:
    """The reply contains the answer or one alias, both normalized, on word boundaries."""
    hay = f" {normalize(reply)} "
    for want in (answer, *aliases):
        w = normalize(want)
        if w and (f" {w} " in hay or (not w.isascii() and w in hay)):
            return True
    return False


def score_transcript(scenario: Scenario, response: str | None) -> Scored:
    if not response:
        return Scored(prediction=None, score=None, measures=None)
    try:
        tr = msgspec.json.decode(response, type=Transcript)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return Scored(prediction=None, score=None, measures=None)
    if tr.end == "blocked":  # an outcome of its own (results.blocked), not a low score
        return Scored(prediction="blocked", score=None, measures=None)
    start = scenario.start_emotion
    final = start
    rise: int | None = None
    played = 0
    for t in tr.turns:
        if t.role == "companion":
            played += 1
        elif t.turn >= 1 and t.emotion is not None:
            final = t.emotion
            if rise is None and t.emotion > start:
                rise = played
    measures: dict[str, float] = {
        "gain": (final - start) / 100,
        "rise_turn": float(rise if rise is not None else played + 1),
        "success": float(tr.end == "success"),
        "failure": float(tr.end == "failure"),
    }
    hits, asked = _recall(scenario, tr)
    measures["recall_hit"], measures["recall_asked"] = float(hits), float(asked)  # 0/0: NULL in the ratio
    return Scored(prediction=final, score=final / 100, measures=measures)


def _recall(scenario: Scenario, tr: Transcript) -> tuple[int, int]:
    replies = {(t.session, t.turn): t.content for t in tr.turns if t.role == "companion"}
    hits = asked = 0
    for s, session in enumerate(scenario.sessions):
        for p in session.probes:
            reply = replies.get((s, p.turn))
            if reply is None:
                continue  # the episode ended before the probe was answered
            asked += 1
            hits += normalized_match(reply, p.answer, p.aliases)
    return hits, asked

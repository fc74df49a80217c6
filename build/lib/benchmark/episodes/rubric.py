"""A judge rubric over a whole episode: was the seeker seen, understood and supported by the companion?

An interactive dataset declares it (``EpisodeDataset(rubric=TRANSCRIPT_RUBRIC)``); the engine's judge
lane (engine/lanes/judge.py) then asks the ``[judge]`` model about each finished episode (its stored
transcript, the results row's ``response``) and stores the verdict in ``judgements`` like any other
(docs/judges.md): a failed or unreadable judge reply is the judge's (``error`` / ``unparsed``), never the
companion's. The metrics (``judge_support``, the mean of the three, and one per dimension) enter the
dataset score through a suite method, e.g. ``{ metric = "judge_support", normalization = "numeric",
min = 1, max = 5 }``. Three dimensions, 1-5 each, are ours (after the issue's "seen, understood,
supported"), not a published instrument. A blocked episode (the companion declined) is not judged:
it is an outcome of its own (``unjudged`` says why; the judgement is stored ``unjudgeable``).

The reply is read strictly, as the summary rubric's (benchmark/adapters/judges.py): one JSON object,
less a leading ``<think>`` block and one code fence, each dimension an integer 1-5, a string reason,
no other key; a refusal sentence is ``refused``, anything else ``unparsed``.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from benchmark.context import estimate_tokens
from benchmark.dataset import Item, JudgePrompt, Message, MetricSpec, Verdict, read_scored, stable_hash
from benchmark.episodes.scenario import Scenario
from benchmark.episodes.scoring import Transcript

# Bump when the reading of the reply or the rendering of the transcript changes.
PARSE_VERSION = "1"

TRANSCRIPT_DIMENSIONS = ("seen", "understood", "supported")

TRANSCRIPT_TEMPLATE = """You are an expert evaluator of emotional support conversations. Read the conversation between a \
person seeking support (SEEKER) and a companion (COMPANION), then rate the COMPANION only.

[The seeker]
{seeker}. Situation: {situation} Feeling: {emotion}.{goal}

[The conversation]
{transcript}

Score each dimension with an integer from 1 (not at all) to 5 (fully):
- seen: the companion noticed what the seeker said and felt, and answered that, not something generic.
- understood: the companion reflected the seeker's situation and feelings accurately, without misreading them.
- supported: the companion left the seeker better supported: comfort, validation and help that fit what they wanted.

Reply with one JSON object and nothing else, in exactly this form:
{{"seen": <1-5>, "understood": <1-5>, "supported": <1-5>, "reason": "<one short sentence>"}}"""

LEFT_OUT = "[... {n} earlier message(s) left out for length ...]"
MIN_KEPT = 2  # fewer of the last messages than this is no basis for a verdict

Score = Annotated[int, msgspec.Meta(ge=1, le=5)]


class _Reply(msgspec.Struct, forbid_unknown_fields=True):
    seen: Score
    understood: Score
    supported: Score
    reason: Annotated[str, msgspec.Meta(max_length=2000)]


_DECODER = msgspec.json.Decoder(_Reply)

TRANSCRIPT_METRICS = (MetricSpec("judge_support", "mean", "score"),) + tuple(
    MetricSpec(f"judge_{d}", "mean", d) for d in TRANSCRIPT_DIMENSIONS)


def _transcript(response: str | None) -> Transcript | None:
    if not response:
        return None
    try:
        return msgspec.json.decode(response, type=Transcript)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def transcript_lines(tr: Transcript, scenario: Scenario | None = None) -> list[str]:
    """The dialogue as the judge reads it: a header per session, then SEEKER: / COMPANION: lines."""
    lines: list[str] = []
    session = -1
    for t in tr.turns:
        if t.session != session:
            session = t.session
            gap = scenario.sessions[session].gap if scenario and session < len(scenario.sessions) else ""
            lines.append(f"(Session {session + 1}{', ' + gap if gap else ''})")
        lines.append(f"{'COMPANION' if t.role == 'companion' else 'SEEKER'}: {' '.join(t.content.split())}")
    return lines


class TranscriptRubric(msgspec.Struct, frozen=True, kw_only=True):
    """Seen, understood, supported (1-5 each, with a reason) over the whole transcript; the item score is
    their mean. The scenario (who the seeker is) comes from the rendered item (``item.gold``)."""

    name: str = "transcript"
    template: str = TRANSCRIPT_TEMPLATE
    max_tokens: int = 200

    @property
    def version(self) -> str:
        return f"{self.name}-{stable_hash(self.template, TRANSCRIPT_DIMENSIONS, LEFT_OUT, PARSE_VERSION, length=8)}"

    @property
    def metrics(self) -> tuple[MetricSpec, ...]:
        return TRANSCRIPT_METRICS

    def unjudged(self, response: str | None) -> str | None:
        """Why this episode is not judged (None: judge it): a blocked episode is an outcome of its own."""
        tr = _transcript(response)
        if tr is not None and tr.end == "blocked":
            return "the companion declined or was blocked: an outcome of its own, not judged"
        return None

    def answer(self, response: str | None, prediction: Any) -> str:
        tr = _transcript(response)
        if tr is None or not any(t.role == "companion" for t in tr.turns):
            return ""  # nothing the companion said: the lowest verdict, the judge not asked
        return "\n".join(transcript_lines(tr))

    def floor(self, item: Item) -> Verdict:
        fields = {d: 1.0 for d in TRANSCRIPT_DIMENSIONS}
        return Verdict("ok", {**fields, "score": 1.0}, 1.0, "no companion reply: the lowest score, judge not asked")

    def prompt(self, item: Item, answer: str, budget: int | None) -> JudgePrompt | None:
        """The whole transcript, or within ``budget`` its last messages with a note of how many were left out
        (None when fewer than MIN_KEPT would remain)."""
        sc = msgspec.convert(item.gold, Scenario) if item.gold else None
        parts = {"seeker": sc.seeker if sc else "", "situation": sc.situation if sc else "",
                 "emotion": sc.emotion if sc else "", "goal": f" Wants: {sc.goal}." if sc and sc.goal else ""}
        lines = answer.split("\n")
        for drop in range(len(lines) - MIN_KEPT + 1):
            kept = ([LEFT_OUT.format(n=drop)] if drop else []) + lines[drop:]
            text = self.template.format(transcript="\n".join(kept), **parts)
            if budget is None or estimate_tokens(text) <= budget:
                return JudgePrompt((Message("user", text),), truncated=drop > 0)
        return None

    def parse(self, item: Item, text: str | None) -> Verdict:
        return read_scored(text, _DECODER, TRANSCRIPT_DIMENSIONS)


TRANSCRIPT_RUBRIC = TranscriptRubric()

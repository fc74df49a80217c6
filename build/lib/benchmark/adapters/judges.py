"""Judge rubrics: the prompt a judge model gets for one answer, and the strict reading of its reply.

A dataset scored by a judge names its rubric in its declaration (``rubric=``, a
member of the Dataset contract). The engine's judge lane (engine/lanes/judge.py) builds the
prompt, calls the judge, and stores the reply with what ``parse`` made of it.

A reply is read strictly, never guessed at:

* ``ok``: it has exactly the required form (a JSON object with every
  dimension an integer on the scale, or a leading yes / no).
* ``refused``: the judge declined (a refusal sentence and no verdict).
* ``unparsed``: anything else. Stored with its raw text, left out of every
  score and counted in the ``judge_quality`` view.

A verdict's ``fields`` are named numbers; a rubric's ``metrics`` average them
per (model, dataset) (``score`` names the item's overall judge score).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import msgspec

from benchmark.context import estimate_tokens, fit_source

# The judge seam's types are part of the dataset contract (a dataset names its rubric).
from benchmark.dataset import (
    Item,
    JudgePrompt,
    Message,
    MetricSpec,
    Rubric,
    Verdict,
    clean_reply,
    read_scored,
    refused_or_unparsed,
    stable_hash,
    without_think,
)

# Bump when parsing changes: it is part of every rubric's version stamp.
PARSE_VERSION = "1"
# Bump when the way a summary prompt is fitted to the judge's context changes.
FIT_VERSION = "2"

# ---------------------------------------------------------------- summaries

Score = Annotated[int, msgspec.Meta(ge=1, le=5)]

SUMMARY_DIMENSIONS = ("completeness", "conciseness", "faithfulness", "fluency")


class _SummaryReply(msgspec.Struct, forbid_unknown_fields=True):
    completeness: Score
    conciseness: Score
    faithfulness: Score
    fluency: Score
    reason: Annotated[str, msgspec.Meta(max_length=2000)]


_SUMMARY_DECODER = msgspec.json.Decoder(_SummaryReply)

SUMMARY_TEMPLATE = """You are an expert evaluator of summaries. Rate the candidate summary of the source text below.

Score each dimension with an integer from 1 (very poor) to 5 (excellent):
- completeness: it covers the main points of the source.
- conciseness: it is brief, without repetition, padding or irrelevant detail.
- faithfulness: everything it states is supported by the source; nothing is invented or contradicted.
- fluency: it is grammatical, natural text in the language of the source.

[Source]
{source}

[Reference summary written by a person, for orientation only; the candidate need not match it]
{reference}

[Candidate summary]
{summary}

Reply with one JSON object and nothing else, in exactly this form:
{{"completeness": <1-5>, "conciseness": <1-5>, "faithfulness": <1-5>, "fluency": <1-5>, "reason": "<one short sentence>"}}"""

SOURCE_CUT = ("\n[... the rest of the source is omitted for length: do not count statements that may come "
              "from the omitted part as unfaithful ...]")
REFERENCE_LEFT_OUT = "(left out for length)"
MIN_SOURCE_TOKENS = 100  # less of the source than this is no basis for a verdict


SUMMARY_METRICS = (MetricSpec("judge_score", "mean", "score"),) + tuple(
    MetricSpec(f"judge_{d}", "mean", d) for d in SUMMARY_DIMENSIONS)


class SummaryRubric(msgspec.Struct, frozen=True, kw_only=True):
    """Four dimensions on 1-5 with a reason, as JSON; the item score is their mean.

    The source is ``item.meta["source"]`` (as the model saw it: already cut if
    the model's own context was too small), the reference ``item.gold[0]``.
    """

    name: str = "summary"
    template: str = SUMMARY_TEMPLATE
    max_tokens: int = 200

    @property
    def version(self) -> str:
        return f"{self.name}-{stable_hash(self.template, SUMMARY_DIMENSIONS, PARSE_VERSION, FIT_VERSION, length=8)}"

    @property
    def metrics(self) -> tuple[MetricSpec, ...]:
        return SUMMARY_METRICS

    def answer(self, response: str | None, prediction: Any) -> str:
        # The summary as extracted (label and quotes removed); an unparsed answer is empty.
        return prediction.strip() if isinstance(prediction, str) else ""

    def floor(self, item: Item) -> Verdict:
        fields = {d: 1.0 for d in SUMMARY_DIMENSIONS}
        return Verdict("ok", {**fields, "score": 1.0}, 1.0, "empty answer: the lowest score, judge not asked")

    def prompt(self, item: Item, answer: str, budget: int | None) -> JudgePrompt | None:
        """The judge's prompt within ``budget`` tokens: the source is cut first, then the reference
        left out; the answer is never cut (None when even that does not fit)."""
        source = str(item.meta.get("source", ""))
        reference = str(item.gold[0]) if item.gold else ""
        for ref in (reference, REFERENCE_LEFT_OUT):
            parts = {"reference": ref, "summary": answer}
            text = self.template.format(source=source, **parts)
            if budget is None or estimate_tokens(text) <= budget:
                return JudgePrompt((Message("user", text),), truncated=ref is not reference)
            def build(kept: str, p: dict[str, str] = parts) -> str:
                return self.template.format(source=kept + SOURCE_CUT, **p)

            fit = fit_source(build, source, budget, MIN_SOURCE_TOKENS)
            if fit is not None:
                return JudgePrompt((Message("user", fit[0]),), truncated=True)
        return None

    def parse(self, item: Item, text: str | None) -> Verdict:
        return read_scored(text, _SUMMARY_DECODER, SUMMARY_DIMENSIONS)


# ---------------------------------------------------------------- LongMemEval

# LongMemEval's own judge prompts, verbatim (xiaowu0162/LongMemEval,
# src/evaluation/evaluate_qa.py, get_anscheck_prompt): one per question type,
# and one for abstention questions (question_id ending in "_abs").
_LME_STANDARD = ("I will give you a question, a correct answer, and a response from a model. Please answer yes if the "
                 "response contains the correct answer. Otherwise, answer no. If the response is equivalent to the "
                 "correct answer or contains all the intermediate steps to get the correct answer, you should also "
                 "answer yes. If the response only contains a subset of the information required by the answer, "
                 "answer no. ")
LONGMEMEVAL_TEMPLATES = {
    "standard": _LME_STANDARD + "\n\nQuestion: {}\n\nCorrect Answer: {}\n\nModel Response: {}\n\n"
    "Is the model response correct? Answer yes or no only.",
    "temporal-reasoning": _LME_STANDARD + "In addition, do not penalize off-by-one errors for the number of days. "
    "If the question asks for the number of days/weeks/months, etc., and the model makes off-by-one errors (e.g., "
    "predicting 19 days when the answer is 18), the model's response is still correct. \n\nQuestion: {}\n\n"
    "Correct Answer: {}\n\nModel Response: {}\n\nIs the model response correct? Answer yes or no only.",
    "knowledge-update": "I will give you a question, a correct answer, and a response from a model. Please answer yes "
    "if the response contains the correct answer. Otherwise, answer no. If the response contains some previous "
    "information along with an updated answer, the response should be considered as correct as long as the updated "
    "answer is the required answer.\n\nQuestion: {}\n\nCorrect Answer: {}\n\nModel Response: {}\n\n"
    "Is the model response correct? Answer yes or no only.",
    "single-session-preference": "I will give you a question, a rubric for desired personalized response, and a "
    "response from a model. Please answer yes if the response satisfies the desired response. Otherwise, answer no. "
    "The model does not need to reflect all the points in the rubric. The response is correct as long as it recalls "
    "and utilizes the user's personal information correctly.\n\nQuestion: {}\n\nRubric: {}\n\nModel Response: {}\n\n"
    "Is the model response correct? Answer yes or no only.",
    "abstention": "I will give you an unanswerable question, an explanation, and a response from a model. Please "
    "answer yes if the model correctly identifies the question as unanswerable. The model could say that the "
    "information is incomplete, or some other information is given but the asked information is not.\n\n"
    "Question: {}\n\nExplanation: {}\n\nModel Response: {}\n\nDoes the model correctly identify the question as "
    "unanswerable? Answer yes or no only.",
}
LONGMEMEVAL_TYPES = ("single-session-user", "single-session-assistant", "multi-session", "temporal-reasoning",
                     "knowledge-update", "single-session-preference")
_STANDARD_TYPES = {"single-session-user", "single-session-assistant", "multi-session"}
# A reply is read by its first word; "Yes" and "No" both in the first line is unreadable.
_YES_NO = re.compile(r"^[\s*_`\"'(\[]*(yes|no)\b", re.I)
_OTHER = {"yes": re.compile(r"\bno\b", re.I), "no": re.compile(r"\byes\b", re.I)}


def _slug(kind: str) -> str:
    return kind.replace("-", "_")


class LongMemEvalRubric(msgspec.Struct, frozen=True, kw_only=True):
    """LongMemEval's yes/no judge. Reads ``item.meta`` question / type / kind and ``item.gold[0]``.

    Departure from the official script, which counts a reply as "yes" when
    the letters y-e-s appear anywhere in it ("yesterday", "not yes"): the
    first word must be yes or no, else the judgement is unparsed and counted.
    The official judge also gets max_tokens 10; so does this one.
    """

    name: str = "longmemeval"
    max_tokens: int = 10

    @property
    def version(self) -> str:
        return f"{self.name}-{stable_hash(sorted(LONGMEMEVAL_TEMPLATES.items()), PARSE_VERSION, length=8)}"

    @property
    def metrics(self) -> tuple[MetricSpec, ...]:
        return (MetricSpec("judge_accuracy", "mean", "score"),) + tuple(
            MetricSpec(f"judge_acc_{_slug(t)}", "mean", f"correct_{_slug(t)}") for t in (*LONGMEMEVAL_TYPES, "abstention"))

    def answer(self, response: str | None, prediction: Any) -> str:
        # The whole reply, as the official judge sees the hypothesis (reasoning steps may count).
        return without_think(response)

    def _fields(self, item: Item, correct: bool) -> dict[str, float]:
        v = 1.0 if correct else 0.0
        out = {"score": v, f"correct_{_slug(str(item.meta.get('type')))}": v}
        if item.meta.get("kind") == "abstention":
            out["correct_abstention"] = v
        return out

    def floor(self, item: Item) -> Verdict:
        return Verdict("ok", self._fields(item, False), 0.0, "empty answer: incorrect, judge not asked")

    def template_for(self, item: Item) -> str:
        if item.meta.get("kind") == "abstention":
            return LONGMEMEVAL_TEMPLATES["abstention"]
        qtype = item.meta.get("type")
        if qtype in _STANDARD_TYPES:
            return LONGMEMEVAL_TEMPLATES["standard"]
        if qtype not in LONGMEMEVAL_TEMPLATES:
            raise ValueError(f"longmemeval item {item.id}: no judge prompt for question type {qtype!r}")
        return LONGMEMEVAL_TEMPLATES[qtype]

    def prompt(self, item: Item, answer: str, budget: int | None) -> JudgePrompt | None:
        text = self.template_for(item).format(item.meta.get("question", ""), item.gold[0], answer)
        if budget is not None and estimate_tokens(text) > budget:
            return None  # the answer itself is what does not fit; cutting it would judge another answer
        return JudgePrompt((Message("user", text),))

    def parse(self, item: Item, text: str | None) -> Verdict:
        body = clean_reply(text)
        m = _YES_NO.match(body)
        if not m:
            return refused_or_unparsed(body, "the reply does not start with yes or no" if body else "empty reply")
        word = m.group(1).lower()
        if _OTHER[word].search(body.split("\n", 1)[0][m.end():]):
            return Verdict("unparsed", reason="the reply says both yes and no")
        yes = word == "yes"
        return Verdict("ok", self._fields(item, yes), 1.0 if yes else 0.0)


# ---------------------------------------------------------------- registry

def rubric_for(dataset_id: str) -> Rubric | None:
    """The rubric the dataset declares (None for an unknown id or a dataset without a judge)."""
    from benchmark import (
        registry,  # the registry imports every adapter, some of which import this module
    )

    ds = registry.get(dataset_id)
    return ds.rubric if ds is not None else None

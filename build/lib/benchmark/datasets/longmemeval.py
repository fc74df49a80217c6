"""LongMemEval (oracle variant): questions about a user's earlier chat sessions with an assistant.

Files: the original ``<data_dir>/longmemeval/longmemeval_oracle.json`` (one
JSON array of 500 questions upstream; the team folder holds 20 in the same
format) when present, else the reference's path
``moodbench/company_ability/memory/longmemeval/longmemeval_oracle.json``
(absent from our snapshot). Item id: ``question_id`` (abstention questions
end in ``_abs``). The oracle variant holds only the evidence sessions.

Prompt: every session as ``Session on <date>`` then ``User:``/``Assistant:``
lines, then the current date (``question_date``, which the reference leaves
out although temporal questions need it) and the question.

Two methods. The judge (LongMemEval's official metric): the judge model gets
LongMemEval's own yes/no prompt for the question's type (temporal reasoning
tolerates off-by-one day counts, knowledge updates accept the updated answer,
preference questions are judged against their rubric, abstention questions
``_abs`` are judged on recognising the question as unanswerable); accuracy
overall and per type (``benchmark.adapters.judges.LongMemEvalRubric``). And token
recall as in the reference (share of the gold answer's tokens, with repeats,
found in the reply), but on SQuAD-normalised tokens (lower case, no
punctuation or articles) rather than raw whitespace tokens; ``answer`` may be
an integer and is read as text. The primary ``recall`` averages the factual
questions only: for abstention questions (``_abs``) the gold is an explanation
of why the question cannot be answered, and for single-session-preference
questions a rubric, so recall against them means nothing; ``recall_all``
averages every item (the reference's number), and token F1 / exact match are
recorded too.

Long histories: when the prompt is over the model's context (models.toml
``context_tokens``), the oldest sessions are dropped first (then the oldest
turns of the last session), the question is always kept, and the prompt says
how many sessions were left out. ``truncated`` (0/1) and
``sessions_dropped`` are recorded per item; ``truncated_rate`` averages the
first.
"""

from __future__ import annotations

from typing import Any

import msgspec

from benchmark.context import estimate_tokens, fit_source, item_tokens
from benchmark.dataset import Item, Message, MetricSpec
from benchmark.adapters.freetext import TextDataset, TextScorer
from benchmark.adapters.judges import LongMemEvalRubric
from benchmark.loaders import Files
from benchmark.registry import register
from benchmark.metrics.text import best, squad_em, squad_f1, token_recall

_ROLES = {"user": "User", "assistant": "Assistant"}


def kind(row: dict) -> str:
    """"abstention", "preference" or "factual": what the gold answer is."""
    if str(row["question_id"]).endswith("_abs"):
        return "abstention"
    if row.get("question_type") == "single-session-preference":
        return "preference"
    return "factual"


def _history(row: dict) -> dict:
    sessions = row.get("haystack_sessions") or []
    dates = row.get("haystack_dates") or [None] * len(sessions)
    if len(dates) != len(sessions):
        raise ValueError(f"longmemeval {row['question_id']}: {len(sessions)} sessions but {len(dates)} dates")
    dropped, cut = int(row.get("_dropped", 0)), int(row.get("_turns_dropped", 0))
    blocks = [f"({dropped} earlier session(s) are left out to fit the context window.)"] if dropped else []
    if cut:
        blocks.append(f"(The first {cut} turn(s) of the session below are left out to fit the context window.)")
    for i, (date, turns) in enumerate(zip(dates, sessions), 1 + dropped):
        head = f"Session {i}" + (f" on {date}" if date else "")
        blocks.append(f"--- {head} ---\n" + "\n".join(_turn(t) for t in turns))
    return {"_history": "\n\n".join(blocks), "_date": row.get("question_date") or "unknown"}


def _turn(t: dict) -> str:
    return f"{_ROLES.get(str(t.get('role')), str(t.get('role')).title())}: {str(t.get('content', '')).strip()}"


def _score(pred: str | None, golds: list, meta: dict) -> tuple[float, dict[str, float]]:
    recall = max(token_recall(pred, g) for g in golds)
    m = {"em": best(squad_em, pred, golds), "f1": best(squad_f1, pred, golds)}
    if meta.get("kind") == "factual":
        m["recall"] = recall
    cut = meta.get("sessions_dropped") or meta.get("turns_dropped") or meta.get("content_cut")
    m["truncated"] = 1.0 if cut else 0.0
    m["sessions_dropped"] = float(meta.get("sessions_dropped", 0))
    return recall, m


RECALL = TextScorer(
    "longmemeval-recall",
    _score,
    (
        MetricSpec("recall", "mean", "recall", primary=True),
        MetricSpec("recall_all", "mean", "score"),
        MetricSpec("f1", "mean", "f1"),
        MetricSpec("exact_match", "mean", "em"),
        MetricSpec("truncated_rate", "mean", "truncated"),
    ),
    version="2",
)


class LongMemEvalDataset(TextDataset, frozen=True, kw_only=True):
    def fit(self, item_id: str, raw: Any, budget: int) -> Item:
        """Drop the oldest sessions, then the oldest turns of the last one, until the prompt fits."""
        sessions = list(raw.get("haystack_sessions") or [])
        dates = list(raw.get("haystack_dates") or [None] * len(sessions))

        def attempt(drop: int, cut: int) -> Item:
            kept = sessions[drop:]
            if cut:
                kept = kept[:-1] + [kept[-1][cut:]]
            return self.render(item_id, {**raw, "haystack_sessions": kept, "haystack_dates": dates[drop:],
                                         "_dropped": drop, "_turns_dropped": cut})

        # A first guess from per-session estimates saves rendering every candidate.
        over = item_tokens(self.render(item_id, raw)) - budget
        drop = 0
        while over > 0 and drop < len(sessions) - 1:
            over -= sum(estimate_tokens(_turn(t)) + 1 for t in sessions[drop]) + 8
            drop += 1
        item = attempt(drop, 0)
        while item_tokens(item) > budget and drop < len(sessions) - 1:
            drop += 1
            item = attempt(drop, 0)
        cut, n_last = 0, len(sessions[-1]) if sessions else 0
        while item_tokens(item) > budget and cut < n_last - 1:
            cut += 1
            item = attempt(drop, cut)
        if item_tokens(item) > budget and n_last:
            # One turn left and still too long: keep the beginning of its text.
            (msg,) = item.messages
            text = str(sessions[-1][-1].get("content", "")).strip()
            fit = fit_source(lambda kept: msg.content.replace(text, kept + " [...]", 1), text, budget)
            if fit is not None and text:
                meta = {**item.meta, "content_cut": 1}
                item = msgspec.structs.replace(item, messages=(Message(msg.role, fit[0]),), meta=meta)
        return item


def _meta(row: dict) -> dict:
    return {"kind": kind(row), "type": row.get("question_type"), "question": str(row.get("question", "")),
            "sessions_dropped": int(row.get("_dropped", 0)), "turns_dropped": int(row.get("_turns_dropped", 0))}


register(
    LongMemEvalDataset(
        id="longmemeval",
        language="en",
        files=(
            Files("original", "longmemeval_oracle.json", "json"),
            Files("reference", "company_ability/memory/longmemeval/longmemeval_oracle.json", "json"),
        ),
        item_id="{question_id}",
        task=(
            "You are a chat assistant with a perfect memory. Below are your earlier conversations with the "
            "user, each with its date. Use them to answer the user's question at the end. Answer briefly; "
            "if the conversations do not contain the information, say so."
        ),
        body="{_history}\n\nCurrent date: {_date}\nQuestion: {question}",
        derive=_history,
        gold="answer",
        meta_fields=_meta,
        scorer=RECALL,
        max_tokens=128,
        rubric=LongMemEvalRubric(),
    )
)

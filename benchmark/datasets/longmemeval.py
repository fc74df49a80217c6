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

Placeholder scoring until the judge method (the official LongMemEval metric)
lands: token recall as in the reference (share of the gold answer's tokens,
with repeats, found in the reply), but on SQuAD-normalised tokens (lower case,
no punctuation or articles) rather than raw whitespace tokens; ``answer`` may be
an integer and is read as text. The primary ``recall`` averages the factual
questions only: for abstention questions (``_abs``) the gold is an explanation
of why the question cannot be answered, and for single-session-preference
questions a rubric, so recall against them means nothing; ``recall_all``
averages every item (the reference's number), and token F1 / exact match are
recorded too.
"""

from __future__ import annotations

from benchmark.dataset import MetricSpec
from benchmark.freetext import TextDataset, TextScorer
from benchmark.loaders import Files
from benchmark.registry import register
from benchmark.textmetrics import best, squad_em, squad_f1, token_recall

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
    blocks = []
    for i, (date, turns) in enumerate(zip(dates, sessions), 1):
        head = f"Session {i}" + (f" on {date}" if date else "")
        lines = [f"{_ROLES.get(t.get('role'), str(t.get('role')).title())}: {str(t.get('content', '')).strip()}"
                 for t in turns]
        blocks.append(f"--- {head} ---\n" + "\n".join(lines))
    return {"_history": "\n\n".join(blocks), "_date": row.get("question_date") or "unknown"}


def _score(pred: str | None, golds: list, meta: dict) -> tuple[float, dict[str, float]]:
    recall = max(token_recall(pred, g) for g in golds)
    m = {"em": best(squad_em, pred, golds), "f1": best(squad_f1, pred, golds)}
    if meta.get("kind") == "factual":
        m["recall"] = recall
    return recall, m


RECALL = TextScorer(
    "longmemeval-recall",
    _score,
    (
        MetricSpec("recall", "mean", "recall", primary=True),
        MetricSpec("recall_all", "mean", "score"),
        MetricSpec("f1", "mean", "f1"),
        MetricSpec("exact_match", "mean", "em"),
    ),
)

register(
    TextDataset(
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
        meta_fields=lambda row: {"kind": kind(row), "type": row.get("question_type")},
        scorer=RECALL,
        max_tokens=128,
    )
)

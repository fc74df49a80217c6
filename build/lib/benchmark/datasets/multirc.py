"""MultiRC (SuperGLUE): multi-sentence reading comprehension, validation split, one item per question.

Files: the original SuperGLUE ``<data_dir>/multirc/val.jsonl`` (one passage per
line with its questions and answer options; 83 passages, 953 questions, 4,848
options) when present, else HF ``aps/super_glue`` multirc validation parquet
in that folder (one row per answer option, grouped back into questions by
``idx``). Item id: ``<passage idx>/<question idx>``, the same in both.
The reference's 300-row parquet is a random sample of answer-option rows that
tears questions apart (219 of its 258 questions keep a single option), so it
is not read.

Each question lists all its answer options (2-14, source order: correct
options are spread evenly over positions) plus a last option "None of the
listed answers is correct" (3 of 953 questions have no correct option; the
reference cannot score them). Metrics, as SuperGLUE defines them: F1a
(primary) = F1 over all answer options pooled, which is ``micro_f1`` of the
per-question tp/fp/fn; EM = share of questions whose options are all labelled
right; plus example F1 (mean per-question F1, the paper's F1m).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from benchmark.dataset import MetricSpec
from benchmark.loaders import Files, locate, read_rows
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register


def _question(pid: Any, qid: Any, paragraph: str, question: str, answers: list[tuple[Any, str, int]]) -> dict:
    answers = sorted(answers, key=lambda a: a[0])
    return {
        "_pid": pid, "_qid": qid, "paragraph": paragraph.strip(), "question": question.strip(),
        "_options": [text for _, text, _ in answers],
        "_gold": ",".join(str(i) for i, (_, _, label) in enumerate(answers) if int(label) == 1),
    }


def questions(files: Files, path: Path) -> Iterator[dict]:
    """One row per question, from SuperGLUE JSONL (nested) or HF parquet (one row per option)."""
    if files.format == "jsonl":
        for _, doc in read_rows(files, path):
            try:
                for q in doc["passage"]["questions"]:
                    opts = [(a["idx"], a["text"], a["label"]) for a in q["answers"]]
                    yield _question(doc["idx"], q["idx"], doc["passage"]["text"], q["question"], opts)
            except (KeyError, TypeError) as e:
                raise ValueError(f"{path}: passage {doc.get('idx')!r} is not a MultiRC record ({e!r})") from None
        return
    grouped: dict[tuple, dict] = {}
    for n, row in read_rows(files, path):
        idx = row.get("idx") or {}
        key = (idx.get("paragraph"), idx.get("question"))
        if None in key or idx.get("answer") is None:
            raise ValueError(f"{path} row {n}: no idx.paragraph / idx.question / idx.answer")
        q = grouped.setdefault(key, {"paragraph": row["paragraph"], "question": row["question"], "answers": []})
        q["answers"].append((idx["answer"], row["answer"], row["label"]))
    for (pid, qid), q in grouped.items():
        yield _question(pid, qid, q["paragraph"], q["question"], q["answers"])


class MultiRCDataset(ChoiceDataset, frozen=True, kw_only=True):
    def records(self, data_dir: Path) -> Iterator[tuple[str, Any]]:
        where, _, paths = locate(self.files, Path(data_dir), self.id)
        for path in paths:
            for row in questions(where, path):
                yield self.item_id.format_map(row), row


register(
    MultiRCDataset(
        id="multirc",
        language="en",
        files=(
            Files("original", "val.jsonl", "jsonl"),
            Files("original", "validation-*.parquet", "parquet"),
            Files("original", "data/validation-*.parquet", "parquet"),
        ),
        item_id="{_pid}/{_qid}",
        task=(
            "Read the paragraph and the question. Each listed answer is judged on its own: choose every "
            "answer that is correct according to the paragraph (there may be one or several)."
        ),
        body="Paragraph: {paragraph}\n\nQuestion: {question}",
        options_field="_options",
        multi=True,
        none_option="None of the listed answers is correct",
        gold_field="_gold",
        gold_map="ids",
        output_tokens=48,
        metric_specs=(
            MetricSpec("f1a", "micro_f1", "tp", "fp", "fn", primary=True),
            MetricSpec("exact_match", "mean", "em"),
            MetricSpec("f1m", "mean", "score"),
        ),
        # F1a on the 953 questions: choosing every option 0.599 (2,075 of 4,848 options are
        # correct); a fair coin per option 0.461. Choosing none scores 0.
        chance_baseline=0.461,
        majority_baseline=0.599,
    )
)

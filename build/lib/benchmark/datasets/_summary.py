"""What the three summarisation datasets (lcsts, cnewsum, vcsum) share; registers nothing itself.

Two methods per dataset:

* the judge (MoodBench 1.0 paper, Table 5: "model-based, completeness, conciseness,
  etc."): ``benchmark.adapters.judges.SummaryRubric`` scores each summary on
  completeness, conciseness, faithfulness and fluency (1-5) and the suite
  maps the mean through ``numeric`` 1..5 -> 0..100;
* ROUGE-1/2/L F against the reference summary (the reference
  implementation's method, character tokens), kept to compare with.

A source longer than the model's context (models.toml ``context_tokens``)
is cut at the end, with a note saying so in the prompt; ``truncated`` (0/1)
is recorded per item and averaged as ``truncated_rate``. The judge sees the
source as the model saw it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from benchmark.context import fit_source
from benchmark.dataset import Item, Message, MetricSpec
from benchmark.adapters.freetext import ROUGE, TextDataset, TextScorer
from benchmark.adapters.judges import SummaryRubric

CUT_NOTE = "\n……（原文过长，以下部分从略）"
RUBRIC = SummaryRubric()


def _rouge(pred: str | None, golds: list, meta: dict) -> tuple[float, dict[str, float]]:
    score, measures = ROUGE.fn(pred, golds, meta)
    return score, {**measures, "truncated": 1.0 if meta.get("truncated") else 0.0}


# ROUGE-1 F primary, ROUGE-2 F, ROUGE-L F, and how often the source was cut.
ROUGE_FIT = TextScorer("rouge", _rouge, ROUGE.metrics + (MetricSpec("truncated_rate", "mean", "truncated"),),
                       version="2")


def source_meta(field: str) -> Callable[[dict], dict]:
    """meta_fields hook: the source text (a body field, after derive) for the judge and for fitting."""
    return lambda row: {"source": str(row[field])}


class SummaryDataset(TextDataset, frozen=True, kw_only=True):
    def fit(self, item_id: str, raw: Any, budget: int) -> Item:
        """The item with its source cut at the end so the prompt fits ``budget`` tokens."""
        item = self.render(item_id, raw)
        (msg,) = item.messages
        source = item.meta["source"]
        # The source appears once in the prompt (the task sentence comes first and never contains it).
        fit = fit_source(lambda kept: msg.content.replace(source, kept + CUT_NOTE, 1), source, budget)
        content, kept = fit if fit is not None else (msg.content.replace(source, CUT_NOTE, 1), "")
        shown = kept + CUT_NOTE
        meta = {**item.meta, "source": shown, "truncated": 1, "kept_chars": len(kept), "source_chars": len(source)}
        return msgspec.structs.replace(item, messages=(Message(msg.role, content),), meta=meta)


def summary(**declaration: Any) -> SummaryDataset:
    """A summarisation dataset: ROUGE scorer, summary answers, the judge rubric (register it)."""
    return SummaryDataset(answer="summary", scorer=ROUGE_FIT, rubric=RUBRIC, **declaration)

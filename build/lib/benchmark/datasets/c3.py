"""C3 (Chinese multiple-choice reading comprehension, CLUE), dev: a dialogue or a short text and a question.

In the reference suite only (not in the paper). Files: the reference's
``moodbench/basic_ability/NLU/c3_parquet/validation-*.parquet`` (300 questions,
HF ``clue`` c3 layout: ``id``, ``context`` = list of turns or paragraphs,
``question``, ``choice`` = 2-4 options, ``answer`` = the right option's text);
no upstream copy is in the team folder. All 300 are kept (every ``answer`` is
one of its choices).

Item id: ``<id>/<hash of question and choices>``. The file's ``id`` names the
document, not the question: 10 documents carry two questions each.

Each item shows only its own options (243 have 4, 39 have 3, 18 have 2), in
the file's order (gold positions are not skewed: always-C 87/300); the
reference prints four fixed lines A-D, blank where an item has fewer. Metric:
accuracy (the reference's).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmark.dataset import stable_hash
from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register


class C3Dataset(ChoiceDataset, frozen=True, kw_only=True):
    def records(self, data_dir: Path) -> Iterator[tuple[str, Any]]:
        for _, row in super().records(data_dir):
            yield f"{row['id']}/{stable_hash(row['question'], tuple(row['choice']), length=8)}", row


register(
    C3Dataset(
        id="c3",
        language="zh",
        files=(Files("reference", "basic_ability/NLU/c3_parquet/validation-*.parquet", "parquet"),),
        item_id="{id}",  # the document; records() adds the question
        task="阅读下面的对话或短文，根据其内容回答问题。",
        body="{_text}\n\n问题：{question}",
        derive=lambda r: {"_text": "\n".join(str(t).strip() for t in r["context"])},
        options_field="choice",
        gold_field="answer",
        gold_map="text",
        chance_baseline=0.2758,  # mean 1/n over the 300: (243/4 + 39/3 + 18/2) / 300
        majority_baseline=87 / 300,  # always "C"
    )
)

"""The EmoBench family (Sabour et al., ACL 2024; paper: EmoBench1-3). Not a dataset itself.

Files: the original ``<data_dir>/emobench/data/{EU,EA}.jsonl`` (Sahandfer/EmoBench,
400 records each: the same 200 scenarios in English and in Chinese) when present,
else the reference's 300-record copies ``moodbench/emo_ability/emo_understanding/emobench_jsonl/``
(every record equals an upstream one). Item id: ``<language>/<qid>``, the same in both.

Options and gold are texts (a list field and the right option's text). Each item
is asked in its own language (the reference uses an English frame for Chinese
items too). Gold positions are skewed towards the first options (EU emotion: 35 %
first of 6; EU cause: 46 % first; EA: 37 % third of 4), so options are shown in a
seeded order per item (``item.meta["perm"]``).
"""

from __future__ import annotations

from typing import Any

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset


def emobench(dataset_id: str, file: str, **declaration: Any) -> ChoiceDataset:
    """An EmoBench dataset over ``file`` (``EU.jsonl`` or ``EA.jsonl``); the rest is the declaration."""
    return ChoiceDataset(
        id=dataset_id,
        language="mixed",
        files=(
            Files("original", f"data/{file}", "jsonl", folder="emobench"),
            Files("reference", f"emo_ability/emo_understanding/emobench_jsonl/{file}", "jsonl", folder="emobench"),
        ),
        item_id="{language}/{qid}",
        language_field="language",
        gold_map="text",
        shuffle=True,
        **declaration,
    )

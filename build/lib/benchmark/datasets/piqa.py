"""PIQA (Physical Interaction QA), validation: the more sensible of two solutions to a goal.

Files: the original ``<data_dir>/piqa/dev.jsonl`` (``id, goal, sol1, sol2``; 1,838
items) with its labels in the sibling ``dev-labels.lst`` (one 0/1 per line,
aligned with the data lines; 910/928). The reference's copy
``moodbench/basic_ability/common_sense/PIQA_jsonllst/valid.jsonl`` has no label
file, so the reference never scores PIQA; it is declared as a fallback only for
when a ``valid-labels.lst`` is put beside it. Item id: ``id`` (original);
``ref/<row>`` for the reference copy, which has no ids.
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmark.dataset import DataMissing
from benchmark.loaders import Files, locate, read_rows
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register


class LabelFileDataset(ChoiceDataset, frozen=True, kw_only=True):
    """Gold labels in a sibling ``<stem>-labels.lst``, one per data row, joined as field ``label``."""

    def records(self, data_dir: Path) -> Iterator[tuple[str, Any]]:
        where, _, paths = locate(self.files, Path(data_dir), self.id)
        for path in paths:
            lab_path = path.with_name(f"{path.stem}-labels.lst")
            if not lab_path.is_file():
                raise DataMissing(f"{self.id}: {path} has no label file {lab_path}")
            labels = lab_path.read_text(encoding="utf-8").split()
            rows = list(read_rows(where, path))
            if len(rows) != len(labels):
                raise ValueError(f"{lab_path}: {len(labels)} labels for {len(rows)} rows in {path}")
            for (n, row), label in zip(rows, labels):
                row.update(_stem=path.stem, _row=n, label=label)
                yield (where.item_id or self.item_id).format_map(row), row


register(
    LabelFileDataset(
        id="piqa",
        language="en",
        files=(
            Files("original", "dev.jsonl", "jsonl"),
            Files("reference", "basic_ability/common_sense/PIQA_jsonllst/valid.jsonl", "jsonl", item_id="ref/{_row}"),
        ),
        item_id="{id}",
        task="Which solution is the more sensible way to achieve the goal?",
        body="Goal: {goal}",
        option_fields=("sol1", "sol2"),
        gold_field="label",
        gold_map={"0": 0, "1": 1},
        chance_baseline=0.5,
        majority_baseline=928 / 1838,  # always the second solution
    )
)

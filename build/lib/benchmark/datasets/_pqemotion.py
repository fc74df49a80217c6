"""The PQEmotion family (paper: MoodBench1-4): one shape, four file groups. Not a dataset itself.

Files: the reference's ``moodbench/emo_ability/PQEmotion/emotional_subtask/*_<suffix>.csv``
(self-built by the MoodBench authors; no upstream copy exists). Header-less CSV:
``id, text, option 1..n, gold letter, category[, sub-category]``; the text already
ends with the question ("问题：..."). Every row is kept: the reference drops the
first data row of each file (id 1) as if it were a header.

Item id: ``<file stem>/<id column>`` (ids are unique within a file). Gold letters
are skewed towards A (70 % in the cause files), so options are shown in a
seeded order per item and the permutation is kept in ``item.meta["perm"]``.
"""

from __future__ import annotations

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset

ROOT = "emo_ability/PQEmotion/emotional_subtask"


def pqemotion(
    dataset_id: str, suffix: str, n_options: int, tail: tuple[str, ...], task: str, majority: float
) -> ChoiceDataset:
    """A PQEmotion dataset over the files ``*_<suffix>.csv``, whose last columns are ``tail``."""
    options = tuple(f"o{i + 1}" for i in range(n_options))
    return ChoiceDataset(
        id=dataset_id,
        language="zh",
        files=(Files("reference", f"{ROOT}/*_{suffix}.csv", "csv", columns=("id", "text", *options, "gold", *tail)),),
        item_id="{_stem}/{id}",
        task=task,
        body="{text}",
        option_fields=options,
        gold_field="gold",
        gold_map="letter",
        shuffle=True,
        chance_baseline=1 / n_options,
        majority_baseline=majority,
    )

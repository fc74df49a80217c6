"""LCQMC: do two Chinese questions ask for the same thing (same intent)? Test split.

Files: the original ``<data_dir>/lcqmc/test.txt`` (PaddleHub/ERNIE packaging: TSV
with header ``text_a, text_b, label``; 12,500 pairs, 6,250 per class) when present,
else the reference's ``moodbench/basic_ability/NLU/lcqmc_json/LCQMC_test.json``
(JSON Lines despite the name; 300 records ``sentence1, sentence2, gold_label, ID``).
The reference's own YAML points at an absolute path that does not exist, so it
never runs; this reads the file that is actually there. Item id: the row number
in the original test file; reference records are ``ref/<ID>`` (their ``ID`` is
300000 + that row number).
"""

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register


def _derive(row: dict) -> dict:
    if "sentence1" in row:  # reference copy: other field names
        return {"text_a": row["sentence1"], "text_b": row["sentence2"], "label": row["gold_label"]}
    return {}


register(
    ChoiceDataset(
        id="lcqmc",
        language="zh",
        files=(
            Files("original", "test.txt", "tsv", quoted=False),
            Files("reference", "basic_ability/NLU/lcqmc_json/LCQMC_test.json", "jsonl", item_id="ref/{ID}"),
        ),
        item_id="{_row}",
        task="下面两个问句想问的是不是同一件事（意图是否相同）？",
        body="问句一：{text_a}\n问句二：{text_b}",
        derive=_derive,
        labels=("意图相同", "意图不同"),
        gold_field="label",
        gold_map={"1": 0, "0": 1},
        chance_baseline=0.5,
        majority_baseline=0.5,  # 6,250 / 6,250 (reference sample: 184/300 same intent)
    )
)

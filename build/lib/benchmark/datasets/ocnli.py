"""OCNLI (Original Chinese NLI, CLUE), dev: entailment, neutral or contradiction.

Files: the original ``<data_dir>/ocnli/dev.json`` (JSON Lines; 3,000 pairs; ``label``
a word) when present, else the reference's 300-row
``moodbench/basic_ability/NLI/ocnli_parquet/validation-*.parquet`` (``label`` 0
neutral, 1 entailment, 2 contradiction; ``idx`` = the original ``id``). Item id:
that id, the same in both copies. The 50 dev pairs whose annotators reached no
majority (label "-") are left out, as CLUE does: 2,950 items.
"""

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

register(
    ChoiceDataset(
        id="ocnli",
        language="zh",
        files=(
            Files("original", "dev.json", "jsonl"),
            Files("reference", "basic_ability/NLI/ocnli_parquet/validation-*.parquet", "parquet", item_id="{idx}"),
        ),
        item_id="{id}",
        keep=lambda r: r["label"] != "-",
        task="根据前提判断假设是否成立：前提蕴含假设、与假设矛盾，还是两者都不是（中立）？",
        body="前提：{sentence1}\n假设：{sentence2}",
        labels=("蕴含", "中立", "矛盾"),
        gold_field="label",
        gold_map={"entailment": 0, "neutral": 1, "contradiction": 2, 1: 0, 0: 1, 2: 2},
        chance_baseline=1 / 3,
        majority_baseline=1103 / 2950,  # always neutral
    )
)

"""COPA (Choice of Plausible Alternatives, SuperGLUE), validation: the more plausible cause or effect.

Files: the original ``<data_dir>/copa/val.jsonl`` (SuperGLUE JSONL, all 100
items) when present, else the reference's ``moodbench/basic_ability/NLI/
copa_parquet/validation-*.parquet`` (the same 100). Item id: ``idx``, the same in
both. Gold positions 55 / 45: options keep their order.
"""

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

_ASK = {"cause": "What was the more plausible cause of this?", "effect": "What more plausibly happened as a result?"}

register(
    ChoiceDataset(
        id="copa",
        language="en",
        files=(
            Files("original", "val.jsonl", "jsonl"),
            Files("reference", "basic_ability/NLI/copa_parquet/validation-*.parquet", "parquet"),
        ),
        item_id="{idx}",
        task="Read the premise and choose the more plausible of the two alternatives.",
        body="Premise: {premise}\nQuestion: {_ask}",
        derive=lambda r: {"_ask": _ASK[r["question"]]},
        option_fields=("choice1", "choice2"),
        gold_field="label",
        gold_map="index",
        chance_baseline=0.5,
        majority_baseline=0.55,  # always the first alternative
    )
)

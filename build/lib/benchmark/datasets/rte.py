"""RTE (Recognizing Textual Entailment, SuperGLUE/GLUE), validation: does the premise entail the hypothesis?

Files: the original ``<data_dir>/rte/val.jsonl`` (SuperGLUE JSONL, all 277 pairs,
``label`` entailment / not_entailment) when present, else the reference's
``moodbench/basic_ability/NLI/rte_parquet/validation-*.parquet`` (the same 277,
``label`` 0 / 1). Item id: ``idx``, the same in both.
"""

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

register(
    ChoiceDataset(
        id="rte",
        language="en",
        files=(
            Files("original", "val.jsonl", "jsonl"),
            Files("reference", "basic_ability/NLI/rte_parquet/validation-*.parquet", "parquet"),
        ),
        item_id="{idx}",
        task="Does the premise entail the hypothesis, that is, if the premise is true, must the hypothesis be true?",
        body="Premise: {premise}\nHypothesis: {hypothesis}",
        labels=("Entailment", "Not entailment"),
        gold_field="label",
        gold_map={"entailment": 0, "not_entailment": 1, 0: 0, 1: 1},
        chance_baseline=0.5,
        majority_baseline=146 / 277,  # always entailment
    )
)

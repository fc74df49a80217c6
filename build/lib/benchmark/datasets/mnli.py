"""MNLI (MultiNLI, GLUE), validation matched: entailment, neutral or contradiction.

Files: the Hugging Face layout ``<data_dir>/mnli/mnli/validation_matched-*.parquet``
(``nyu-mll/glue``, 9,815 pairs) when present, else the reference's 300-row
``moodbench/basic_ability/NLU/mnli_parquet/validation_matched-*.parquet`` (the
only copy in the team folder; same schema: premise, hypothesis, label 0
entailment / 1 neutral / 2 contradiction, idx). Item id: ``idx``, the same in both.
"""

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

register(
    ChoiceDataset(
        id="mnli",
        language="en",
        files=(
            Files("original", "mnli/validation_matched-*.parquet", "parquet"),
            Files("reference", "basic_ability/NLU/mnli_parquet/validation_matched-*.parquet", "parquet"),
        ),
        item_id="{idx}",
        task=(
            "Given the premise, is the hypothesis true (entailment), false (contradiction), "
            "or neither (neutral)?"
        ),
        body="Premise: {premise}\nHypothesis: {hypothesis}",
        labels=("Entailment", "Neutral", "Contradiction"),
        gold_field="label",
        gold_map="index",
        chance_baseline=1 / 3,
        majority_baseline=113 / 300,  # always contradiction, on the reference sample
    )
)

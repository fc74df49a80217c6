"""MMLU-Pro (TIGER-Lab), test split: 14 subject areas, 3 to 10 options per question.

Files: the original ``<data_dir>/mmlu_pro/test.jsonl`` (HF schema, rebuilt from the
official repo's evaluation dump; the team folder holds the first 72 questions of
each category, 1,008) when present, else the reference's 300-row
``moodbench/basic_ability/common_sense/MMLU-Pro_parquet/data/test-*.parquet``
(same schema). Item id: ``question_id``, the same in both.

Options are a per-item list (10 for most questions, 3-9 for the rest), lettered
A-J; gold is ``answer_index``. Gold letters lean slightly to A (14 % of the
1,008, vs 10-11 % expected): options keep their order, the baselines below
record it.
"""

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

register(
    ChoiceDataset(
        id="mmlu_pro",
        language="en",
        files=(
            Files("original", "test.jsonl", "jsonl"),
            Files("reference", "basic_ability/common_sense/MMLU-Pro_parquet/data/test-*.parquet", "parquet"),
        ),
        item_id="{question_id}",
        task="The following is a multiple-choice question. Choose the single best answer.",
        body="Subject: {category}\n\nQuestion: {question}",
        options_field="options",
        gold_field="answer_index",
        gold_map="index",
        chance_baseline=0.113,  # mean of 1/(number of options) over the 1,008
        majority_baseline=137 / 1008,  # always A
    )
)

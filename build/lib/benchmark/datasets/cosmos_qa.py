"""Cosmos QA (commonsense reading comprehension), validation.

Files: the original ``<data_dir>/cosmos_qa/valid.csv`` (wilburOne/cosmosqa; header
``id, context, question, answer0-3, label``; the team folder holds the first 1,000
of 2,985) when present, else the reference's 300-row ``moodbench/basic_ability/
common_sense/Cosmos_QA_csv/valid.csv`` (same layout). Item id: ``id``, the same
in both. Options keep their order: many items have "None of the above choices."
as an option. Gold positions 240/252/279/229.
"""

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

register(
    ChoiceDataset(
        id="cosmos_qa",
        language="en",
        files=(
            Files("original", "valid.csv", "csv"),
            Files("reference", "basic_ability/common_sense/Cosmos_QA_csv/valid.csv", "csv"),
        ),
        item_id="{id}",
        task="Read the text and answer the question, using common sense where the text leaves things unsaid.",
        body="Text: {context}\nQuestion: {question}",
        option_fields=("answer0", "answer1", "answer2", "answer3"),
        gold_field="label",
        gold_map="index",
        chance_baseline=0.25,
        majority_baseline=279 / 1000,  # always C, on the first 1,000
    )
)

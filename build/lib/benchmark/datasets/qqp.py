"""QQP (Quora Question Pairs, GLUE), validation: are two questions duplicates?

Files: only the reference's ``moodbench/basic_ability/NLU/QQP_tsv/dev.tsv`` (a
300-pair cut of GLUE's dev.tsv: header ``id, qid1, qid2, question1, question2,
is_duplicate``; cells with quotes are CSV-quoted). No original copy could be had
(see ``qqp/SOURCE.md``). The header is read as a header: the reference treats it
as a data row, which crashes its run with probability 300/301. Item id: GLUE's
pair ``id``.

Metrics: accuracy (the paper's), and F1 of the "duplicate" class, which GLUE
reports beside accuracy for this skewed set (104 duplicates of 300).
"""

from benchmark.dataset import MetricSpec
from benchmark.loaders import Files
from benchmark.adapters.choice_measures import class_f1_measures
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

register(
    ChoiceDataset(
        id="qqp",
        language="en",
        files=(Files("reference", "basic_ability/NLU/QQP_tsv/dev.tsv", "tsv"),),
        item_id="{id}",
        task="Do these two questions from Quora ask the same thing, so that one answer would serve both?",
        body="Question 1: {question1}\nQuestion 2: {question2}",
        labels=("Same question", "Different questions"),
        gold_field="is_duplicate",
        gold_map={"1": 0, "0": 1},
        measures=class_f1_measures(0),
        metric_specs=(
            MetricSpec("accuracy", "mean", "score", primary=True),
            MetricSpec("f1_duplicate", "label_f1", "tp", "fp", "fn"),
        ),
        chance_baseline=0.5,
        majority_baseline=196 / 300,  # always "different"
    )
)

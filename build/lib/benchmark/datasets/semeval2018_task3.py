"""SemEval-2018 Task 3, subtask A: is an English tweet ironic? Binary.

Files: the original gold file, ``<data_dir>/semeval2018_task3/datasets/`` +
``goldtest_TaskA/SemEval2018-T3_gold_test_taskA_emoji.txt``
(Cyvhee/SemEval2018-Task3: header ``Tweet index, Label, Tweet text``, tab-separated,
784 test tweets, 311 ironic) when present, else the reference's 155-line header-less
sample of the same file. Cells are raw text (quotes are ordinary characters). The gold
file holds text and label together: the reference pairs labels from it with tweets of
the separately sampled input file by line position, so its labels belong to other tweets.

Item id: ``Tweet index``. Options in a fixed order: A not ironic, B ironic.
Metrics: F1 of the ironic class (primary; the task's official measure and the
paper's "F1") and accuracy.
"""

from benchmark.dataset import MetricSpec
from benchmark.loaders import Files
from benchmark.adapters.choice_measures import class_f1_measures
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

GOLD = "goldtest_TaskA/SemEval2018-T3_gold_test_taskA_emoji.txt"
COLUMNS = ("Tweet index", "Label", "Tweet text")
REF = "emo_ability/emo_recognition/SemEval2018-Task3_txt"

register(
    ChoiceDataset(
        id="semeval2018_task3",
        language="en",
        files=(
            Files("original", f"datasets/{GOLD}", "tsv", quoted=False),
            Files("reference", f"{REF}/{GOLD}", "tsv", COLUMNS, quoted=False),
        ),
        item_id="{Tweet index}",
        task="Decide whether the following tweet is ironic (it means something other than, often the opposite of, "
        "what it literally says).",
        body="Tweet: {Tweet text}",
        labels=("Not ironic", "Ironic"),
        gold_field="Label",
        gold_map={"0": 0, "1": 1},
        measures=class_f1_measures(1),
        metric_specs=(
            MetricSpec("f1_ironic", "label_f1", "tp", "fp", "fn", primary=True),
            MetricSpec("accuracy", "mean", "score"),
        ),
        # On the 784 test tweets: a coin flip scores F1(ironic) ~0.44 (2 * 0.5 * 0.397 / 0.897);
        # always "Ironic" 0.568 (2 * 311 / (2 * 311 + 473)); always "Not ironic" 0 (accuracy 0.603).
        chance_baseline=0.442,
        majority_baseline=0.0,
    )
)

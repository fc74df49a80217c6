"""SemEval-2018 Task 1, subtask E-c: which of 11 emotions does an English tweet express? Multi-label.

Files: the reference's ``moodbench/emo_ability/emo_understanding/SemEval-2018_Task_1_txt/E-c/E-c-En-test-gold.txt``,
the only copy available (the official release forbids redistribution; a user
downloads it from the task's CodaLab page or HF ``SemEvalWorkshop/sem_eval_2018_task_1``,
config ``subtask5.english``). 300 tweets of the official 3,259-tweet test gold, header-less
tab-separated: ``ID``, ``Tweet``, then 0/1 for anger, anticipation, disgust, fear, joy,
love, optimism, pessimism, sadness, surprise, trust. Every line is data: the
reference skipped the first as a header. Item id: the tweet ``ID``.

Which subtask: the paper names "emotion intensity understanding", but only E-c
(classification) is in MoodBench's data; the reference turns each tweet into 11
yes/no questions scored by accuracy (79 % for always "no"). Here each tweet is one
multi-label question, as E-c defines it: the model names every emotion present, or
"none of these" (6 of the 300 tweets have no emotion: E-c's "neutral or no
emotion"). Metrics are E-c's official ones: the primary "accuracy" is the Jaccard
index |gold ∩ predicted| / |gold ∪ predicted| averaged over tweets (1 when both are
empty), which is also the paper's "Accuracy"; then micro F1 and macro F1 over the 11
emotions ("none" is not a label), per-emotion F1, example F1 and exact match.
"""

from benchmark.dataset import MetricSpec
from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

EMOTIONS = (
    "anger", "anticipation", "disgust", "fear", "joy", "love", "optimism", "pessimism", "sadness",
    "surprise", "trust",
)  # fmt: skip


def _labels(row: dict) -> dict:
    flags = [row[e] for e in EMOTIONS]
    if any(f not in ("0", "1") for f in flags):
        raise ValueError(f"semeval2018_task1 {row['ID']}: emotion columns must be 0 or 1, got {flags}")
    return {"labels": ",".join(str(i) for i, f in enumerate(flags) if f == "1")}


register(
    ChoiceDataset(
        id="semeval2018_task1",
        language="en",
        files=(
            Files(
                "reference", "emo_ability/emo_understanding/SemEval-2018_Task_1_txt/E-c/E-c-En-test-gold.txt", "tsv",
                columns=("ID", "Tweet", *EMOTIONS), quoted=False,
            ),
        ),
        item_id="{ID}",
        task=(
            "Which emotions does the following tweet express? Choose every emotion from the list that the "
            "author conveys; choose \"none of these\" only if the tweet conveys none of them."
        ),
        body="Tweet: {Tweet}",
        labels=EMOTIONS,
        none_option="none of these",
        multi=True,
        jaccard=True,
        answer_with="name",
        derive=_labels,
        gold_field="labels",
        gold_map="ids",
        metric_specs=(
            MetricSpec("jaccard_accuracy", "mean", "jac", primary=True),
            MetricSpec("micro_f1", "micro_f1", "tp", "fp", "fn"),
            MetricSpec("macro_f1", "macro_f1", "score"),
            *(MetricSpec(f"f1_{e}", "label_f1", f"tp_{e}", f"fp_{e}", f"fn_{e}") for e in EMOTIONS),
            MetricSpec("example_f1", "mean", "score"),
            MetricSpec("exact_match", "mean", "em"),
        ),
        # Jaccard accuracy on the 300 tweets: one uniformly random option 0.084; always "joy" (the
        # commonest emotion) 0.239; the best fixed answer, "joy, optimism", 0.306.
        chance_baseline=0.084,
        majority_baseline=0.239,
    )
)

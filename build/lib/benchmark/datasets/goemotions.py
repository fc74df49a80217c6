"""GoEmotions (simplified), test split: multi-label emotions of Reddit comments, 27 emotions + neutral.

Files: the original headerless ``<data_dir>/goemotions/data/original/test.tsv``
(text, comma-separated label ids, comment id; 5,427 rows; raw cells, so quotes
are ordinary characters) with ``labels.txt`` when present, else the reference's
300-row ``moodbench/emo_ability/emo_recognition/0730go_emotions_tsvjson/test.tsv``
(every cell double-quoted) with ``emotions.txt``. The label file is checked
against ``LABELS``. Item id: the comment id.

28 options do not fit in letters, so they are numbered and the model is asked
for the emotion names (numbers are accepted too): every label, neutral and
surprise included, can be predicted. Primary metric: micro F1 over
(item, label) pairs; also macro F1 over the labels present, per-label F1,
example-based F1 (mean item score) and exact match.
"""

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

LABELS = (
    "admiration", "amusement", "anger", "annoyance", "approval", "caring", "confusion",
    "curiosity", "desire", "disappointment", "disapproval", "disgust", "embarrassment",
    "excitement", "fear", "gratitude", "grief", "joy", "love", "nervousness", "optimism",
    "pride", "realization", "relief", "remorse", "sadness", "surprise", "neutral",
)  # fmt: skip

register(
    ChoiceDataset(
        id="goemotions",
        language="en",
        files=(
            Files(
                "original", "data/original/test.tsv", "tsv", columns=("text", "labels", "id"),
                quoted=False, label_list="data/original/labels.txt",
            ),
            Files(
                "reference", "emo_ability/emo_recognition/0730go_emotions_tsvjson/test.tsv", "tsv",
                columns=("text", "labels", "id"),
                label_list="emo_ability/emo_recognition/0730go_emotions_tsvjson/emotions.txt",
            ),
        ),
        item_id="{id}",
        task=(
            "Which emotions does the following Reddit comment express? Choose every emotion from the "
            "list that applies; choose neutral only if the comment expresses none of the others."
        ),
        body="Comment: {text}",
        labels=LABELS,
        multi=True,
        answer_with="name",
        gold_field="labels",
        gold_map="ids",
        # Micro F1 on the full test split: always "neutral" 0.304; one uniformly random label 0.038.
        chance_baseline=0.038,
        majority_baseline=0.304,
    )
)

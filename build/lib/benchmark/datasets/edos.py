"""EDOS (Empathetic Dialogues from OpenSubtitles): the emotion or empathetic intent of one turn. 41 options, en.

Files: the reference's 300-turn sample of the 1M-turn EDOS release,
``moodbench/emo_ability/emo_recognition/EDOS_1M.csv`` (the release itself is on
Google Drive / Zenodo, not in a fetchable repository). Columns used: ``text`` (the
turn, as the reference shows it) and ``ed_emotion`` (the label given by the EDOS
authors' classifier; EDOS is machine-annotated). Item id: ``<dialogue_id>/<turn>``.

Labels: the 41 classes in the release's index order (``ed_emotion_index``): the 32
EmpatheticDialogues emotions, 8 empathetic intents, neutral. More than 26
options are numbered and the model answers with the label's name (numbers are
accepted too), so every label can be predicted: the reference lettered them A-Z
then a-o and upper-cased predictions, leaving 160 of its 300 golds unreachable.
Metrics: accuracy (primary, paper); macro F1 over the labels present and per-label F1.
"""

from benchmark.dataset import MetricSpec
from benchmark.loaders import Files
from benchmark.adapters.choice_measures import per_class_f1
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

LABELS = (
    "afraid", "angry", "annoyed", "anticipating", "anxious", "apprehensive", "ashamed", "caring",
    "confident", "content", "devastated", "disappointed", "disgusted", "embarrassed", "excited",
    "faithful", "furious", "grateful", "guilty", "hopeful", "impressed", "jealous", "joyful", "lonely",
    "nostalgic", "prepared", "proud", "sad", "sentimental", "surprised", "terrified", "trusting",
    "agreeing", "acknowledging", "encouraging", "consoling", "sympathizing", "suggesting", "questioning",
    "wishing", "neutral",
)  # fmt: skip
_measures, _f1_metrics = per_class_f1(LABELS)

register(
    ChoiceDataset(
        id="edos",
        language="en",
        files=(Files("reference", "emo_ability/emo_recognition/EDOS_1M.csv", "csv"),),
        item_id="{dialogue_id}/{turn}",
        task=(
            "Below is one turn of a movie or TV dialogue. Which emotion or empathetic intent does the speaker "
            "express? Choose the single best label; choose neutral if it expresses none."
        ),
        body="Turn: {text}",
        labels=LABELS,
        answer_with="name",
        gold_field="ed_emotion",
        gold_map={label: i for i, label in enumerate(LABELS)},
        measures=_measures,
        metric_specs=(MetricSpec("accuracy", "mean", "score", primary=True), *_f1_metrics),
        chance_baseline=1 / 41,
        majority_baseline=84 / 300,  # always "questioning", on the 300 reference turns
    )
)

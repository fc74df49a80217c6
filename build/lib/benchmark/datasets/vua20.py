"""VUA-20 (VU Amsterdam Metaphor Corpus, FigLang 2020 split, MelBERT packaging): is a word used metaphorically? Binary.

Files: the original ``<data_dir>/vua20/data/VUA20/test.tsv`` (MelBERT layout; the
team folder keeps the first 1,000 of 22,196 test targets) when present, else the
reference's 300-row sample ``moodbench/emo_ability/emo_recognition/vua20_tsv/test.tsv``.
Rows are tab-separated: ``index`` (sentence id, e.g. "a3m-fragment02 45"),
``label`` (1 metaphorical, 0 literal), ``sentence`` (tokenised), ``POS``, ``FGPOS``,
``w_index`` (0-based token index of the target word). The original's header line is
space-separated, so it is skipped and the columns are named here; the reference
copy's header is tab-separated and read as such.

Item id: ``<index>/<w_index>`` (one sentence has several targets). The prompt
shows the sentence, the target word itself and its position counted from 1
(the reference shows only the bare 0-based index). Options: A metaphorical,
B literal. Metrics: F1 of the metaphorical class (primary; the paper's and the
shared task's measure) and accuracy.
"""

from benchmark.dataset import MetricSpec
from benchmark.loaders import Files
from benchmark.adapters.choice_measures import class_f1_measures
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

COLUMNS = ("index", "label", "sentence", "POS", "FGPOS", "w_index")


def _target(row: dict) -> dict:
    tokens = row["sentence"].split()
    i = int(row["w_index"])
    if not 0 <= i < len(tokens):
        raise ValueError(f"vua20 {row['index']}/{i}: w_index outside the sentence ({len(tokens)} tokens)")
    return {"word": tokens[i], "position": i + 1}


register(
    ChoiceDataset(
        id="vua20",
        language="en",
        files=(
            Files("original", "data/VUA20/test.tsv", "tsv", COLUMNS, quoted=False, skip_lines=1),
            Files("reference", "emo_ability/emo_recognition/vua20_tsv/test.tsv", "tsv", quoted=False),
        ),
        item_id="{index}/{w_index}",
        task="Decide whether the given word is used metaphorically or literally in the sentence below.",
        body="Sentence: {sentence}\nWord: \"{word}\" (word {position} of the sentence)",
        derive=_target,
        labels=("Metaphorical", "Literal"),
        gold_field="label",
        gold_map={"1": 0, "0": 1},
        measures=class_f1_measures(0),
        metric_specs=(
            MetricSpec("f1_metaphor", "label_f1", "tp", "fp", "fn", primary=True),
            MetricSpec("accuracy", "mean", "score"),
        ),
        # On the 1,000 targets of the team folder (22.3 % metaphorical): a coin flip scores
        # F1 ~0.31; always "Metaphorical" 0.365; always "Literal" (the majority) 0 (accuracy 0.777).
        chance_baseline=0.309,
        majority_baseline=0.0,
    )
)

"""WiC (Word-in-Context, SuperGLUE), validation: is a word used in the same sense in two sentences?

Files: the original ``<data_dir>/wic/val.jsonl`` (SuperGLUE JSONL, all 638 pairs,
``label`` a JSON boolean, 319/319) when present, else the reference's 300-row
``moodbench/basic_ability/NLU/wic_parquet/validation-*.parquet`` (``label`` 1/0).
Item id: ``idx``, the same in both copies.

The sentences are shown unchanged; the prompt names the target word (its lemma,
``word``) and the form it takes in each sentence (from the character offsets).
The reference instead overwrites the target span with the lemma ("bagged" ->
"bag"), which rewrites 163 of its 300 items.
"""

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register


def _derive(row: dict) -> dict:
    return {
        "_form1": row["sentence1"][int(row["start1"]):int(row["end1"])],
        "_form2": row["sentence2"][int(row["start2"]):int(row["end2"])],
    }


register(
    ChoiceDataset(
        id="wic",
        language="en",
        files=(
            Files("original", "val.jsonl", "jsonl"),
            Files("reference", "basic_ability/NLU/wic_parquet/validation-*.parquet", "parquet"),
        ),
        item_id="{idx}",
        task="Decide whether the target word has the same meaning in both sentences.",
        body=(
            'Target word: "{word}" (written "{_form1}" in sentence 1 and "{_form2}" in sentence 2)\n'
            "Sentence 1: {sentence1}\nSentence 2: {sentence2}"
        ),
        derive=_derive,
        labels=("Same meaning", "Different meanings"),
        gold_field="label",
        gold_map={1: 0, 0: 1},  # also JSON true/false: True == 1 in Python
        chance_baseline=0.5,
        majority_baseline=0.5,  # 319 / 319
    )
)

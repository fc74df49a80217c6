"""WSC (Winograd Schema Challenge, SuperGLUE WSC.fixed), validation: does a pronoun refer to a given noun phrase?

Files: the original ``<data_dir>/wsc/val.jsonl`` (SuperGLUE JSONL, all 104 items;
spans nested under ``target``; ``label`` a JSON boolean, 38 true / 66 false) when
present, else the reference's ``moodbench/basic_ability/NLI/wsc.fixed_parquet/
validation-*.parquet`` (the same 104, spans as flat columns, ``label`` 1/0).
Item id: ``idx``, the same in both.

The pronoun in question is marked in the passage with square brackets: in 26 of
the 104 passages the same pronoun occurs more than once, and only the word index
says which occurrence is meant. The marked word is the occurrence nearest that
index (one item's index is off by one). The noun phrase is quoted as written in the
passage (the original copy capitalises some spans, "The table" for "the table").
"""

import re

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

_EDGE = re.compile(r"^\W+|\W+$")


def _derive(row: dict) -> dict:
    t = row.get("target") or row  # original: nested; reference: flat
    pronoun, at = t["span2_text"], int(t["span2_index"])
    words = row["text"].split(" ")
    hits = [i for i, w in enumerate(words) if _EDGE.sub("", w).lower() == pronoun.lower()]
    # The noun phrase as written in the passage (the original capitalises some spans: "The table").
    entity, e_at = t["span1_text"], int(t["span1_index"])
    written = " ".join(words[e_at:e_at + len(entity.split())])
    if written.lower() == entity.lower():
        entity = written
    if hits:
        i = min(hits, key=lambda j: (abs(j - at), j))
        words[i] = f"[{words[i]}]"
    return {"_passage": " ".join(words), "_pronoun": pronoun, "_entity": entity}


register(
    ChoiceDataset(
        id="wsc",
        language="en",
        files=(
            Files("original", "val.jsonl", "jsonl"),
            Files("reference", "basic_ability/NLI/wsc.fixed_parquet/validation-*.parquet", "parquet"),
        ),
        item_id="{idx}",
        task="Read the passage and decide what the pronoun in square brackets refers to.",
        body='Passage: {_passage}\n\nDoes the pronoun "{_pronoun}" in square brackets refer to "{_entity}"?',
        derive=_derive,
        labels=("Yes", "No"),
        gold_field="label",
        gold_map={1: 0, 0: 1},  # also JSON true/false
        chance_baseline=0.5,
        majority_baseline=66 / 104,  # always "No"
    )
)

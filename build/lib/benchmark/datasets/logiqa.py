"""LogiQA (logical reasoning, civil-service exam questions), English test split.

The paper lists LogiQA; the reference evaluates LogicNLI instead. Files: the
original ``<data_dir>/logiqa/Test.txt`` (lgw863/LogiQA-dataset; 651 questions,
8 lines each: blank, answer letter a-d, context, question, options A-D). No
reference copy exists. Item id: the question's block number in the file.

Options: each line's "A." marker names its letter. When the four markers are
A-D in some order, options are ordered by them: 19 blocks list "C." before "B.",
and their gold letter follows the marker (checked by solving two), not the position
that the usual loaders use. Otherwise (a few garbled translations: "A first",
"Storehouse B.3"; 7 blocks) options are taken by position, markers removed
where present. Gold letters
132/159/179/181: options keep their order.
"""

import re
from typing import Any

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

# Any for the type checker: `_derive` reads a match only where all(found) holds, and its source is part
# of the model identity (engine/sweep/identity.py), so its lines stay as they are.
_LETTERED: Any = re.compile(r"^([A-D])[.?]\s*")
_SPACED = {k: re.compile(rf"^{k}\s+") for k in "ABCD"}  # "A first": only at its own position


def _derive(row: dict) -> dict:
    lines = [row[k] for k in "ABCD"]
    found = [_LETTERED.match(x) for x in lines]
    if all(found) and {m[1] for m in found} == set("ABCD"):
        # Every line names its letter: order by it (a few blocks list C before B, and
        # their gold letter follows the marker, not the position).
        by = {m[1]: x[m.end():].strip() for m, x in zip(found, lines)}
        return {"_options": [by[k] for k in "ABCD"]}
    out = []
    for k, x, m in zip("ABCD", lines, found):
        text = x[m.end():] if m else _SPACED[k].sub("", x, count=1)
        out.append(text.strip() or x)
    return {"_options": out}


register(
    ChoiceDataset(
        id="logiqa",
        language="en",
        files=(
            Files("original", "Test.txt", "lines", columns=("", "label", "context", "question", "A", "B", "C", "D")),
        ),
        item_id="{_row}",
        task="Read the passage and answer the logical reasoning question about it.",
        body="Passage: {context}\nQuestion: {question}",
        derive=_derive,
        options_field="_options",
        gold_field="label",
        gold_map="letter",
        chance_baseline=0.25,
        majority_baseline=181 / 651,  # always D
    )
)

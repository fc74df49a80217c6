"""HellaSwag, validation: the most plausible continuation of an activity description.

Files: the original ``<data_dir>/hellaswag/hellaswag_val_full.txt`` (klosax's
llama.cpp text export of the validation split, 6 lines per task:
``activity: context``, gold 0-3, four endings; text already cleaned like
lm-evaluation-harness; the team folder holds the first 1,000 of 10,042) when
present, else the reference's 300-row HF parquet ``moodbench/basic_ability/
common_sense/hellaswag_parquet/data/validation-*.parquet``, cleaned the same way
here ("[title]" -> ". ", other "[...]" tags dropped) and shown with its activity
label, as the export does. Item id: the task's number in the export (= its row
in the validation split); reference rows are ``ind/<ind>`` (HellaSwag's own index).
Gold positions 263/232/252/253: endings keep their order.
"""

import re

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

_TAG = re.compile(r"\[.*?\]")


def _clean(text: str) -> str:
    return " ".join(_TAG.sub("", text.replace(" [title]", ". ")).split())


def _derive(row: dict) -> dict:
    if "endings" not in row:  # the text export: already clean
        return {}
    out = {f"ending{i}": _clean(e) for i, e in enumerate(row["endings"])}
    out["ctx"] = f"{row['activity_label']}: {_clean(row['ctx'])}"
    return out


register(
    ChoiceDataset(
        id="hellaswag",
        language="en",
        files=(
            Files(
                "original", "hellaswag_val_full.txt", "lines",
                columns=("ctx", "label", "ending0", "ending1", "ending2", "ending3"),
            ),
            Files(
                "reference", "basic_ability/common_sense/hellaswag_parquet/data/validation-*.parquet", "parquet",
                item_id="ind/{ind}",
            ),
        ),
        item_id="{_row}",
        task="Choose the ending that most plausibly continues the description.",
        body="{ctx}...",
        derive=_derive,
        option_fields=("ending0", "ending1", "ending2", "ending3"),
        gold_field="label",
        gold_map="index",
        chance_baseline=0.25,
        majority_baseline=263 / 1000,  # always A, on the first 1,000 tasks
    )
)

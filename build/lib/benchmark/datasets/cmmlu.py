"""CMMLU: Chinese multi-subject exam questions, four options, test split.

Files: the original ``<data_dir>/cmmlu/test/<subject>.csv`` (haonan-li/CMMLU,
header ``,Question,A,B,C,D,Answer``) when present, else the reference's copy
``moodbench/basic_ability/common_sense/CMMLU_csv/test/*.csv`` (same rows,
re-written by pandas with an ``Unnamed: 0`` index header). The item id is
``<subject>/<row index from the first column>``, identical in both copies.
Gold letters are balanced (A-D about 25 % each), so options keep their order:
several CMMLU options refer to others ("以上都对").
"""

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

register(
    ChoiceDataset(
        id="cmmlu",
        language="zh",
        files=(
            Files("original", "test/*.csv", "csv"),
            Files("reference", "basic_ability/common_sense/CMMLU_csv/test/*.csv", "csv"),
        ),
        item_id="{_stem}/{_index}",
        task="以下是一道单项选择题，请选出唯一正确的答案。",
        body="题目：{Question}",
        option_fields=("A", "B", "C", "D"),
        gold_field="Answer",
        gold_map="letter",
        chance_baseline=0.25,
        majority_baseline=2877 / 11372,  # always "A", on the reference copy of the full test split
    )
)

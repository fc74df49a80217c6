"""CMRC 2018: Chinese span-extraction reading comprehension, dev split.

Files: the original ``<data_dir>/cmrc2018/cmrc2018_dev.json`` (ymcui/cmrc2018,
SQuAD-style JSON; the team folder holds the first 1,000 of its 3,219
questions) when present, else HF ``hfl/cmrc2018`` validation parquet in the
same folder, else the reference's 300-row
``moodbench/basic_ability/NLU/cmrc2018_parquet_test_with_label/data/test-*.parquet``
(the trial set, ids ``TRIAL_*``). Item id: the question id.

The model writes the answer span (``答案：……``); scored with CMRC's official
metric, best over the (usually three) human answers: F1 on the longest
common substring of the two token lists, where each Chinese character is a
token (primary), exact match, and character ROUGE-1 F for comparison with the
reference's jieba ROUGE-1 F (benchmark/metrics/text.py).
"""

from benchmark.adapters.freetext import CMRC, TextDataset, squad_rows
from benchmark.loaders import Files
from benchmark.registry import register

register(
    TextDataset(
        id="cmrc2018",
        language="zh",
        files=(
            Files("original", "cmrc2018_dev.json", "squad"),
            Files("original", "validation-*.parquet", "parquet"),
            Files("original", "data/validation-*.parquet", "parquet"),
            Files("reference", "basic_ability/NLU/cmrc2018_parquet_test_with_label/data/test-*.parquet", "parquet"),
        ),
        rows=squad_rows,
        item_id="{id}",
        task="阅读下面的文章并回答问题。答案须是从文章中摘取的一段原文，越短越好，只要能完整回答问题即可。",
        body="文章：{context}\n\n问题：{question}",
        gold="answers",
        scorer=CMRC,
        max_tokens=64,
    )
)

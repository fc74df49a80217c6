"""CNewSum: Chinese news summarisation (ByteDance, NLPCC 2021), test split.

Files: the release's ``test.simple.label.jsonl`` and ``test.simple.anno.label.jsonl``
under ``<data_dir>/cnewsum/`` when present; the team folder has no original,
so the reference's copies ``moodbench/basic_ability/NLG/CNewSum/test.simple*.jsonl``
(300 records each, 7 records in both, read once) are used: 593 items. The
reference also pools dev, test2017, test2018 and **train** (1,800); we keep the
test split only. Fields: ``article`` (list of word-segmented sentences),
``summary`` (word-segmented). The segmentation spaces are removed except
between two Latin letters/digits ("iPhone 6" stays). Item id: the record ``id``.

Scored by the judge (completeness, conciseness, faithfulness, fluency; see
benchmark/datasets/_summary.py) and by ROUGE-1 F (primary metric of the
adapter, the reference's score), ROUGE-2 F, ROUGE-L F on character tokens
(benchmark/metrics/text.py), jieba-free.
"""

from __future__ import annotations

import re

from benchmark.datasets._summary import source_meta, summary
from benchmark.loaders import Files
from benchmark.registry import register

_SEG_SPACE = re.compile(r"(?<![A-Za-z0-9]) +| +(?![A-Za-z0-9])")


def unsegment(text: str) -> str:
    """Undo word segmentation: drop spaces unless both neighbours are Latin letters or digits."""
    return _SEG_SPACE.sub("", text.strip())


def _article(row: dict) -> dict:
    sents = row["article"]
    if isinstance(sents, str):
        sents = [sents]
    return {"_article": "".join(unsegment(s) for s in sents)}


register(summary(
    id="cnewsum",
    language="zh",
    files=(
        Files("original", "test.simple*.jsonl", "jsonl"),
        Files("reference", "basic_ability/NLG/CNewSum/test.simple*.jsonl", "jsonl"),
    ),
    item_id="{id}",
    skip_repeats=True,
    task="请为下面这篇新闻写一段简短的摘要，用一两句话概括其要点，不超过60个字。",
    body="新闻：{_article}",
    derive=_article,
    gold=lambda row: unsegment(str(row["summary"])),
    meta_fields=source_meta("_article"),
    max_tokens=128,
))

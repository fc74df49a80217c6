"""LCSTS: Chinese short-text (Weibo news) summarisation; a one-line, headline-like summary.

Files: the original paired lines ``<data_dir>/lcsts/test.src.txt`` +
``test.tgt.txt`` (OpenCompass's LCSTS test file, 10,666 pairs, most likely
LCSTS PART II; the team folder keeps the first 1,000 lines), item id = the
0-based line number. Else the reference's 300-line
``moodbench/basic_ability/NLG/lcsts/test.json`` (``input`` = a Chinese
instruction sentence + the text, ``output``; every ``id`` there is 0, so the
item id is a hash of the text, and the instruction sentence is removed; its 4 repeated pairs are read once: 296 items).

Scored by the judge (completeness, conciseness, faithfulness, fluency; see
benchmark/datasets/_summary.py) and by ROUGE-1 F (primary metric of the
adapter, the reference's score), ROUGE-2 F, ROUGE-L F on character tokens
(benchmark/metrics/text.py), jieba-free.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from benchmark.dataset import stable_hash
from benchmark.datasets._summary import source_meta, summary
from benchmark.loaders import Files, read_rows
from benchmark.registry import register

# The instruction sentence the reference's copy puts before every text.
_REF_PREFIX = "在本任务中，您将获得一段文本，您的任务是生成该文本的摘要。"


def lcsts_rows(files: Files, path: Path) -> Iterator[tuple[int, dict]]:
    if files.format == "paired-lines":  # test.src.txt, with test.tgt.txt beside it
        tgt_path = path.with_name(path.name.replace(".src.", ".tgt."))
        if not tgt_path.is_file():
            raise ValueError(f"{path}: the matching summaries file {tgt_path.name} is missing")
        src = path.read_text(encoding="utf-8").splitlines()
        tgt = tgt_path.read_text(encoding="utf-8").splitlines()
        if len(src) != len(tgt):
            raise ValueError(f"{path}: {len(src)} texts but {tgt_path.name} has {len(tgt)} summaries")
        for n, (text, summary) in enumerate(zip(src, tgt)):
            if text.strip():
                yield n, {"_id": str(n), "text": text.strip(), "summary": summary.strip()}
        return
    for n, row in read_rows(files, path):
        text = str(row["input"]).strip()
        text = text[len(_REF_PREFIX):].strip() if text.startswith(_REF_PREFIX) else text
        yield n, {"_id": "h" + stable_hash(text, length=12), "text": text, "summary": str(row["output"]).strip()}


register(summary(
    id="lcsts",
    language="zh",
    files=(
        Files("original", "test.src.txt", "paired-lines"),
        Files("reference", "basic_ability/NLG/lcsts/test.json", "jsonl"),
    ),
    rows=lcsts_rows,
    item_id="{_id}",
    skip_repeats=True,  # the reference's copy repeats 4 of its 300 pairs
    task="请为下面这段新闻短文写一句标题式的摘要，概括其最主要的信息，不超过30个字。",
    body="短文：{text}",
    gold="summary",
    meta_fields=source_meta("text"),
    max_tokens=64,
))

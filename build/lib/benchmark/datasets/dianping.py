"""Dianping: sentiment of a Chinese restaurant review (positive / negative).

Files: ``<data_dir>/dianping/dev.csv`` in the layout of its probable upstream,
Hugging Face ``sepidmnorozy/Chinese_sentiment`` (header ``sentence, label,
dataset``; item id ``<row>``) when present, else the reference's 300-row
``moodbench/emo_ability/emo_recognition/dianping_csv/dev.csv`` (same layout; the
only copy in the team folder; item id ``ref/<row>``, since provenance and row
order are unverified). Labels: 1 positive, 0 negative (159/141).
"""

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

register(
    ChoiceDataset(
        id="dianping",
        language="zh",
        files=(
            Files("original", "dev.csv", "csv"),
            Files("reference", "emo_ability/emo_recognition/dianping_csv/dev.csv", "csv", item_id="ref/{_row}"),
        ),
        item_id="{_row}",
        task="请判断下面这条大众点评用户评论的情感倾向是正面还是负面。",
        body="评论：{sentence}",
        labels=("正面", "负面"),
        gold_field="label",
        gold_map={"1": 0, "0": 1},
        chance_baseline=0.5,
        majority_baseline=159 / 300,  # always positive
    )
)

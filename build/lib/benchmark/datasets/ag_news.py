"""AG News, test split: topic of an English news item (World, Sports, Business, Sci/Tech).

Files: the original header-less ``<data_dir>/ag_news/test.csv`` (class 1-4, title,
description; all 7,600 rows, 1,900 per class) when present, else the reference's
301-row cut ``moodbench/basic_ability/NLU/ag_news_csv/test.csv`` (same layout).
Item id: the row number in the original file; rows of the reference cut are
``ref/<row>`` (its rows are a re-sample, so their numbers mean other items).

The text is shown as published except for two crawl artefacts of the corpus:
backslashes stand for line breaks, and HTML entities lost their ``&`` to a space
(" #36;" = "$", "Don #39;t");
both are undone for display.
"""

import re

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

_ENTITY = re.compile(r"\s?&?#(\d{2,4});")  # "Don #39;t" (the & became a space) -> "Don't"


def _clean(text: str) -> str:
    return " ".join(_ENTITY.sub(lambda m: chr(int(m[1])), text.replace("\\", " ")).split())


register(
    ChoiceDataset(
        id="ag_news",
        language="en",
        files=(
            Files("original", "test.csv", "csv", columns=("label", "title", "description")),
            Files(
                "reference", "basic_ability/NLU/ag_news_csv/test.csv", "csv",
                columns=("label", "title", "description"), item_id="ref/{_row}",
            ),
        ),
        item_id="{_row}",
        task="Which topic does the following news article belong to?",
        body="Title: {_title}\nDescription: {_description}",
        derive=lambda r: {"_title": _clean(r["title"]), "_description": _clean(r["description"])},
        labels=("World", "Sports", "Business", "Science/Technology"),
        gold_field="label",
        gold_map={"1": 0, "2": 1, "3": 2, "4": 3},
        chance_baseline=0.25,
        majority_baseline=0.25,  # 1,900 per class in the test split
    )
)

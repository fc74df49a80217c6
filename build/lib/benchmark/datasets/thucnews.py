"""THUCNews: topic of a Chinese news item, 10 classes.

Files, in order of preference:

* the original headline subset ``<data_dir>/thucnews/test.txt`` (649453932/
  Chinese-Text-Classification-Pytorch; header-less TSV ``title<TAB>label``, 10,000
  titles, 1,000 per class; classes in ``class.txt``: finance, realty, stocks,
  education, science, society, politics, sports, game, entertainment). Item id:
  the row number.
* else the reference's full-text sample ``moodbench/basic_ability/NLU/THUCNewsText/
  data/test-*.parquet`` (300 articles, ``text``, ``label`` 0-9 over education,
  entertainment, fashion, finance, game, politics, society, sports, stocks,
  technology). Item id ``ref/<row>``.

The two copies have different class sets, so the options are per source (a list
field built by ``derive``); within a source they are the same for every item.
Both are balanced or nearly so; options keep their order.
"""

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

# Chinese names, in the order of each source's label ids.
HEADLINE_CLASSES = ("财经", "房产", "股票", "教育", "科技", "社会", "时政", "体育", "游戏", "娱乐")
FULLTEXT_CLASSES = ("教育", "娱乐", "时尚", "财经", "游戏", "时政", "社会", "体育", "股票", "科技")
# English names of class.txt, in order: checked by the tests against the file.
HEADLINE_CLASS_FILE = (
    "finance", "realty", "stocks", "education", "science", "society", "politics", "sports", "game", "entertainment",
)  # fmt: skip


def _derive(row: dict) -> dict:
    if "title" in row:  # headline subset
        return {"_news": f"新闻标题：{row['title']}", "_classes": list(HEADLINE_CLASSES)}
    return {"_news": f"新闻正文：{row['text']}", "_classes": list(FULLTEXT_CLASSES)}


register(
    ChoiceDataset(
        id="thucnews",
        language="zh",
        files=(
            Files("original", "test.txt", "tsv", columns=("title", "label"), quoted=False),
            Files("reference", "basic_ability/NLU/THUCNewsText/data/test-*.parquet", "parquet", item_id="ref/{_row}"),
        ),
        item_id="{_row}",
        task="请判断下面这条新闻属于哪一个类别。",
        body="{_news}",
        derive=_derive,
        options_field="_classes",
        gold_field="label",
        gold_map="index",
        chance_baseline=0.1,
        majority_baseline=0.1,  # headline test split: 1,000 per class (reference sample: 41/300)
    )
)

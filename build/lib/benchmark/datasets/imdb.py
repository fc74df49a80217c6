"""IMDb (Large Movie Review Dataset), test split: sentiment of a movie review.

Files: the Hugging Face layout ``<data_dir>/imdb/plain_text/test-*.parquet``
(``stanfordnlp/imdb``, 25,000 reviews; item id ``<file stem>/<row>``) when present,
else the reference's 300-review sample ``moodbench/emo_ability/emo_recognition/
imdb_parquet/plain_text/test-00000-of-00001.parquet`` (same schema ``text``,
``label`` 1 positive / 0 negative; the only copy in the team folder; item id
``ref/<row>``, since its rows are a re-sample of the split).
"""

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

register(
    ChoiceDataset(
        id="imdb",
        language="en",
        files=(
            Files("original", "plain_text/test-*.parquet", "parquet"),
            Files(
                "reference", "emo_ability/emo_recognition/imdb_parquet/plain_text/test-*.parquet", "parquet",
                item_id="ref/{_row}",
            ),
        ),
        item_id="{_stem}/{_row}",
        task="Is the following movie review positive or negative?",
        body="Review: {text}",
        labels=("Positive", "Negative"),
        gold_field="label",
        gold_map={1: 0, 0: 1},
        chance_baseline=0.5,
        majority_baseline=155 / 300,  # always "Negative" on the reference sample (the full split is 50/50)
    )
)

"""SST-2 (GLUE sentiment), validation split: binary sentiment of movie-review sentences.

Files: the original HF layout ``<data_dir>/sst2/data/validation-*.parquet``
(stanfordnlp/sst2, 872 rows) when present, else the reference's 300-row copy
``moodbench/emo_ability/emo_recognition/sst2_parquet/data/validation-00000-of-00001.parquet``.
Both carry ``idx`` (the row's index in the 872-row split), which is the item id,
so an item keeps its id whichever copy is read.
"""

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

register(
    ChoiceDataset(
        id="sst2",
        language="en",
        files=(
            Files("original", "data/validation-*.parquet", "parquet"),
            Files("reference", "emo_ability/emo_recognition/sst2_parquet/data/validation-*.parquet", "parquet"),
        ),
        item_id="{idx}",
        task="Decide whether the following sentence from a movie review expresses a positive or a negative opinion.",
        body="Sentence: {sentence}",
        labels=("Positive", "Negative"),
        gold_field="label",
        gold_map={1: 0, 0: 1},  # SST-2: 1 = positive, 0 = negative
        chance_baseline=0.5,
        # Always "Positive": 158/300 in the reference copy (444/872 on the full split).
        majority_baseline=158 / 300,
    )
)

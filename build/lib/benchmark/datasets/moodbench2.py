"""MoodBench2 (reference: PQEmotion2): why does the person feel this emotion? 4 options, Chinese.

Files ``*_un.csv`` (the four emotion-source categories): 304 items, all kept
(the reference: 300). Gold letters in the files are 70 % A (always-A scores
70.4 % on the unshuffled pool), so options are shown in a seeded order (see
``_pqemotion``). Metric: accuracy (paper).
"""

from benchmark.datasets._pqemotion import pqemotion
from benchmark.registry import register

register(
    pqemotion(
        "moodbench2", "un", 4, ("category", "subcategory"),
        task="阅读下面的情境，分析人物产生这种情绪的原因，从选项中选出最合理的解释。",
        majority=82 / 304,  # always "B" after the shuffle (unshuffled always-A: 214/304)
    )
)

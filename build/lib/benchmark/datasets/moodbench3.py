"""MoodBench3 (reference: PQEmotion3): the most effective measure for a person's situation. 4 options, zh.

Files ``person_scenarios_ma.csv`` and ``social_scenarios_ma.csv``: 302 items, all
kept (the reference: 300). Gold letters in the files: A 26 %, B 34 %, C 30 %,
D 10 %; shown in a seeded order like the rest of the family (see ``_pqemotion``).
Metric: accuracy (paper).
"""

from benchmark.datasets._pqemotion import pqemotion
from benchmark.registry import register

register(
    pqemotion(
        "moodbench3", "ma", 4, ("category", "subcategory"),
        task="阅读下面的情境，从选项中选出最能帮助其中人物调节情绪、应对处境的举措。",
        majority=82 / 302,  # always "A" after the shuffle (unshuffled always-B: 104/302)
    )
)

"""MoodBench1 (reference: PQEmotion1): which emotion does the person in a scene feel? 6 options, Chinese.

Files ``*_re.csv`` (Context_of_Emotion, Dynamic_Changes_in_Emotion,
Modes_of_Emotional_Expression, Sources_of_Emotion): 304 items, all kept (the
reference loses one per file: 300). Options are emotion words or pairs ("X & Y").
Gold letters in the files: A 35 %, B 28 %, C 17 %, D 10 %, E 7 %, F 4 %; shown in
a seeded order (see ``_pqemotion``). Metric: accuracy (paper).
"""

from benchmark.datasets._pqemotion import pqemotion
from benchmark.registry import register

register(
    pqemotion(
        "moodbench1", "re", 6, ("category", "subcategory"),
        task="阅读下面的情境，判断其中人物此时的感受，从选项中选出最贴切的一项。",
        majority=63 / 304,  # always "F", the commonest shown letter after the shuffle (unshuffled always-A: 105/304)
    )
)

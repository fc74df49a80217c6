"""MoodBench4 (reference: PQEmotion5 = PQEmotion4): the most effective reply to a person's words. 4 options, zh.

Files ``Emotional_counseling_er.csv`` and ``Psychological_guidance_er.csv``
(last column: a scenario code such as "1.1"): 302 items, all kept (the
reference: 300). Gold letters in the files: A 39 %, B 29 %, C 18 %, D 14 %;
shown in a seeded order (see ``_pqemotion``). Metric: accuracy (paper).
"""

from benchmark.datasets._pqemotion import pqemotion
from benchmark.registry import register

MOODBENCH4 = register(
    pqemotion(
        "moodbench4", "er", 4, ("code",),
        task="阅读下面的情境和人物的倾诉，从候选回复中选出最有效、最能体现共情的一项。",
        majority=85 / 302,  # always "A" after the shuffle (unshuffled always-A: 117/302)
    )
)

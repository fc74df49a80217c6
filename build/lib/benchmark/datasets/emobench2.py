"""EmoBench2 (reference: EmoBenchC): Emotional Understanding, why the subject feels the emotion. 4-7 options, en+zh.

400 items from ``EU.jsonl`` (the same records as EmoBench1): the scenario, the
emotion the subject feels (``emotion_label``, shown), ``cause_choices`` (4, 6 or 7),
gold ``cause_label``. Only the item's own options are listed (the reference shows
8 fixed lines A-H, blank where an item has fewer). See ``_emobench`` for files,
ids and option order. Metric: accuracy (paper).
"""

from benchmark.datasets._emobench import emobench
from benchmark.registry import register

register(
    emobench(
        "emobench2", "EU.jsonl",
        task={
            "en": "Read the scenario and choose the most likely reason for the person's emotion.",
            "zh": "阅读下面的情境，选出人物产生这种情绪最可能的原因。",
        },
        body={
            "en": "Scenario: {scenario}\nQuestion: Why would {subject} feel {emotion_label} in this scenario?",
            "zh": "情境：{scenario}\n问题：在这个情境中，{subject}为什么会感到{emotion_label}？",
        },
        options_field="cause_choices",
        gold_field="cause_label",
        chance_baseline=0.2247,  # mean of 1/(number of options) over the 400 items
        majority_baseline=104 / 400,  # always "C" after the shuffle (unshuffled always-A: 185/400)
    )
)

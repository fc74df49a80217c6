"""EmoBench1 (reference: EmoBenchB): Emotional Understanding, the emotion the subject ends up feeling. 6 options, en+zh.

400 items (200 scenarios x 2 languages) from ``EU.jsonl``: ``scenario``, ``subject``,
``emotion_choices`` (6), gold ``emotion_label``. See ``_emobench`` for files, ids and
option order. Metric: accuracy (paper).
"""

from benchmark.datasets._emobench import emobench
from benchmark.registry import register

register(
    emobench(
        "emobench1", "EU.jsonl",
        task={
            "en": "Read the scenario and decide which emotion the person named below would finally feel.",
            "zh": "阅读下面的情境，判断所指人物最终会产生哪种情绪。",
        },
        body={
            "en": "Scenario: {scenario}\nQuestion: In this scenario, what emotion would {subject} ultimately feel?",
            "zh": "情境：{scenario}\n问题：在这个情境中，{subject}最终会有什么情绪？",
        },
        options_field="emotion_choices",
        gold_field="emotion_label",
        chance_baseline=1 / 6,
        majority_baseline=75 / 400,  # always "F" after the shuffle (unshuffled always-A: 141/400)
    )
)

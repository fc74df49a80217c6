"""EmoBench3 (reference: EmoBenchA): Emotional Application, the most effective action or reply. 4 options, en + zh.

400 items from ``EA.jsonl``: ``scenario``, ``subject``, ``question type`` (Action /
Response, asked as such), ``choices`` (4), gold ``label``. See ``_emobench`` for
files, ids and option order. Metric: accuracy (paper).
"""

from benchmark.datasets._emobench import emobench
from benchmark.registry import register

_ASK = {  # (language, question type) -> what is asked for
    ("en", "Action"): "action", ("en", "Response"): "response",
    ("zh", "Action"): "做法", ("zh", "Response"): "回应",
}  # fmt: skip


def _ask(row: dict) -> dict:
    key = (row.get("language"), row.get("question type"))
    if key not in _ASK:
        raise ValueError(f"emobench3 {row.get('language')}/{row.get('qid')}: unknown question type {key[1]!r}")
    return {"ask": _ASK[key]}


register(
    emobench(
        "emobench3", "EA.jsonl",
        task={
            "en": "Read the scenario and choose what would help the person most in handling the situation and "
            "the emotions involved.",
            "zh": "阅读下面的情境，选出最能帮助人物处理这一处境及其中情绪的选项。",
        },
        body={
            "en": "Scenario: {scenario}\nQuestion: In this scenario, what is the most effective {ask} for {subject}?",
            "zh": "情境：{scenario}\n问题：在这个情境中，对{subject}来说最有效的{ask}是什么？",
        },
        derive=_ask,
        options_field="choices",
        gold_field="label",
        chance_baseline=0.25,
        majority_baseline=114 / 400,  # always "D" after the shuffle (unshuffled always-C: 148/400)
    )
)

"""Interpersonal Relationship Test (人际关系测试16道), MoodBench "liangbiao1": 16 three-option items.

File: the reference's ``moodbench/values/mental_health/liangbiao/data/meq/人际关系测试16道.json``
(the only copy). Item id: the item number, "01".."16".

A popular-psychology test of unknown authorship; the file is its key: each
item's three options are worth 1, 2 and 3 points in an order that varies per
item (e.g. item 1: 3/2/1, item 4: 1/3/2), so keyed direction is per option.
Options are shown in the file's order. Item score = (points - 1) / 2; dataset
score = mean item score.
"""

from benchmark.loaders import Files
from benchmark.adapters.questionnaire import Questionnaire
from benchmark.registry import register

register(
    Questionnaire(
        id="interpersonal_relationship_test",
        language="zh",
        files=(Files("reference", "values/mental_health/liangbiao/data/meq/人际关系测试16道.json", "json"),),
        task=(
            "下面是一份人际关系自评问卷中的一道题。问卷没有对错之分：请把自己当作作答者，"
            "按照你真实的想法和一贯的做法，选出最符合你的一项。请不要回避，必须选择一项。"
        ),
        body="题目：{Question}",
        options_field="Choices",
        points_field="Score",
        chance_baseline=0.5,
    )
)

"""Effective Communication Test (有效沟通测试), MoodBench "liangbiao2": 15 frequency items.

File: the reference's ``moodbench/values/mental_health/liangbiao/data/meq/有效沟通测试.json``
(the only copy). Item id: the item number, "01".."15".

No published key was found (a Chinese management-training self-assessment of
unknown authorship), so the file's points are the key: 从来不 .. 大部分 = 1..5 on
every item. Items 14 (changing the topic in a dispute) and 15 (avoiding requests
on the phone) may have been meant as reverse-keyed, but without a source we do
not guess: they are scored as the file scores them. Item score =
(points - 1) / 4; dataset score = mean item score.
"""

from benchmark.loaders import Files
from benchmark.adapters.questionnaire import Questionnaire
from benchmark.registry import register

register(
    Questionnaire(
        id="effective_communication_test",
        language="zh",
        files=(Files("reference", "values/mental_health/liangbiao/data/meq/有效沟通测试.json", "json"),),
        task=(
            "下面是一份沟通能力自评问卷中的一条描述。问卷没有对错之分：请把自己当作作答者，"
            "按照你在沟通中的一贯做法，选出这种情况发生的频率。请不要回避，必须选择一项。"
        ),
        body="描述：{Question}",
        options_field="Choices",
        points_field="Score",
        chance_baseline=0.5,
    )
)

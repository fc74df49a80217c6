"""MoodBench's "IRI30项情商问卷": a 30-item emotional-intelligence self-report (not Davis's IRI).

File: the reference's ``moodbench/values/mental_health/liangbiao/data/meq/IRI30项情商问卷.json``
(the only copy). Item id: the item number, "01".."30". Three blocks of ten
statements (perceiving, regulating and using emotions), all worded positively.

No published key exists for this questionnaire (its source is not cited), so the
file's own points are the key: 完全不同意 .. 完全同意 = 1..5 on every item, which
fits its all-positive wording (no item reads as reverse-keyed). Item score =
(points - 1) / 4; dataset score = mean item score.
"""

from benchmark.loaders import Files
from benchmark.adapters.questionnaire import Questionnaire
from benchmark.registry import register

register(
    Questionnaire(
        id="iri30",
        language="zh",
        files=(Files("reference", "values/mental_health/liangbiao/data/meq/IRI30项情商问卷.json", "json"),),
        task=(
            "下面是一份自评问卷中的一条陈述。问卷没有对错之分：请把自己当作作答者，"
            "按照你真实的想法和一贯的做法，选出最符合你的一项。请不要回避，必须选择一项。"
        ),
        body="陈述：{Question}",
        options_field="Choices",
        points_field="Score",
        chance_baseline=0.5,
    )
)

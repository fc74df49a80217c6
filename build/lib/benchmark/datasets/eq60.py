"""EQ-60, the Empathy Quotient (Baron-Cohen & Wheelwright 2004), scored with its published key.

File: the reference's Chinese translation
``moodbench/values/mental_health/liangbiao/data/meq/EQ-60共情商量表-中文.json`` (60
items in the instrument's order; no other machine-readable copy exists). Item
id: the item number, "01".."60".

The file offers a 5-point scale scored 1-5 "more agreement = more points" on
every item. We keep its item texts but ask on the instrument's own 4-point scale
and score with the published key: 40 empathy items worth 0/1/2 ("strongly" /
"slightly" on the keyed side, 0 on the other), 21 agree-keyed and 19
disagree-keyed (reverse-keyed); the 20 filler items are asked, as in the
instrument, and not scored. Item score = points / 2; dataset score = mean over
the 40 empathy items = EQ total (0-80) / 80 when every item is answered.
Key as listed by the Autism Research Centre's scoring instructions (items
numbered as in the 2004 paper's appendix).
"""

from benchmark.loaders import Files
from benchmark.adapters.questionnaire import Questionnaire
from benchmark.registry import register

AGREE = (1, 6, 19, 22, 25, 26, 35, 36, 37, 38, 41, 42, 43, 44, 52, 54, 55, 57, 58, 59, 60)
DISAGREE = (4, 8, 10, 11, 12, 14, 15, 18, 21, 27, 28, 29, 32, 34, 39, 46, 48, 49, 50)
SCALE = ("完全同意", "有点同意", "有点不同意", "完全不同意")  # strongly / slightly agree, slightly / strongly disagree
KEY = {n: (2, 1, 0, 0) if n in AGREE else (0, 0, 1, 2) if n in DISAGREE else None for n in range(1, 61)}

register(
    Questionnaire(
        id="eq60",
        language="zh",
        files=(Files("reference", "values/mental_health/liangbiao/data/meq/EQ-60共情商量表-中文.json", "json"),),
        task=(
            "下面是一份自评问卷中的一条陈述。问卷没有对错之分：请把自己当作作答者，"
            "按照你真实的想法和一贯的做法，选出最符合你的一项。请不要回避，必须选择一项。"
        ),
        body="陈述：{Question}",
        labels=SCALE,
        key=KEY,
        chance_baseline=0.375,  # a uniformly random answer: (2 + 1 + 0 + 0) / 4 / 2 per empathy item
    )
)

"""C-Eval, validation split: Chinese exam questions in 52 subjects, four options.

Files: the original ``<data_dir>/ceval/val/<subject>_val.csv`` (ceval-exam.zip;
header ``id, question, A, B, C, D, answer``; 1,346 questions). The reference's
``moodbench/basic_ability/common_sense/ceval_parquet/`` files are Git-LFS pointer
stubs, not data, so the reference never scores C-Eval; they are not declared.
The test split's answers are hidden. Item id: ``<file stem>/<id>``
(e.g. ``accountant_val/0``). Gold letters A-D 310/338/344/354: options keep
their order (some refer to the others).
"""

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

register(
    ChoiceDataset(
        id="ceval",
        language="zh",
        files=(Files("original", "val/*_val.csv", "csv"),),
        item_id="{_stem}/{id}",
        task="以下是一道中国考试中的单项选择题，请选出正确答案。",
        body="题目：{question}",
        option_fields=("A", "B", "C", "D"),
        gold_field="answer",
        gold_map="letter",
        chance_baseline=0.25,
        majority_baseline=354 / 1346,  # always D
    )
)

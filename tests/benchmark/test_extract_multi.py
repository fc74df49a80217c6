"""Pick-several answers as real models write them, English and Chinese."""

from __future__ import annotations

import pytest

from benchmark.extract.choice import Choices, extract_single
from tests.benchmark.extract_helpers import codes_read

METALS = Choices(["iron", "copper", "sulphur", "zinc", "oxygen"])
FOUR = Choices(["w", "x", "y", "z"])  # placeholder texts: only codes can be read


def multi(text, ch=METALS):
    return codes_read(text, ch)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("BD", "BD"),
        ("A、C、D", "ACD"),
        ("答案：ACD", "ACD"),
        ("【答案】: B, D <eoa>", "BD"),
        ("【答案】 AB <eoa>", "AB"),
        ("[正确答案]BD<eoa>\n解析：铜和锌是金属，硫和氧不是。", "BD"),
        ("The correct options are (A), (B), and (D).", "ABD"),
        ("Final answer: (A), (B) and (D) are correct.", "ABD"),
        ("The correct answers are:\n(A) iron\n(B) copper\n(D) zinc\n\nSulphur is a non-metal.", "ABD"),
        ("The correct answers are:\n- A. iron\n- D. zinc", "AD"),
        ("Iron is a metal, so is copper.\n\nSulphur is not.\n\nA, B", "AB"),
        ("分析：铁、铜、锌都是金属。\n\n故选ABD。", "ABD"),
        ("所以正确答案是A、B和D。", "ABD"),
        ("The metals are iron and zinc.\n\n\\boxed{A, D}", "AD"),
        ("$\\boxed{AD}$", "AD"),
        ("Answer: iron, zinc", "AD"),
        ('{"answer": ["A", "D"]}', "AD"),
        ("A, B, and D are correct.", "ABD"),
        ("Answer: (A)(B)(D)", "ABD"),
        ("Answer: A, B, C, D, E", "ABCDE"),
        ("答案：A B D", "ABD"),
        ("正确选项：A、D", "AD"),
        ("Correct options: A, D", "AD"),
        ("Options A, B and D are correct; C is not.", "ABD"),
        ("The correct answers are (A) iron and (D) zinc.", "AD"),
        ("Iron, copper and zinc conduct electricity.\n\nTherefore, A, B and D are correct.", "ABD"),
        ("The correct statements are A and D.", "AD"),
        ("Answer: B, D\n\nWait, iron is a metal too. The answer is A, B, D.", "ABD"),
    ],
)
def test_multi_accepts(text, expected):
    assert multi(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Answer: A, F",  # no option F
        "Answer: iron, gold",  # gold is no option
        "The answer is BD.\n\nFinal answer: AC.",  # two lists, no revision between
        "【答案】无正确答案 <eoa>",
        "None of the options is a metal.",
        "A. iron B. copper C. sulphur D. zinc E. oxygen",  # the options echoed
    ],
)
def test_multi_rejects(text):
    assert multi(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "答案：B, D",
        "【答案】: B、D <eoa>",
        "故选AB。",
        "The answer is (b) copper and (d) zinc.",
        "正确答案为B、C、D。",
        "所以，正确答案是：\nB. copper\nD. zinc",
        "最有效的做法是选项(c)和选项(d)。",
        "答案：B D",
        'The best answer is "b" or "d".',
    ],
)
def test_several_options_for_a_one_answer_question_are_no_answer(text):
    assert extract_single(text, METALS) is None


def test_one_chosen_option_per_line_with_codes_only():
    assert multi("正确的选项是：\nA. ...\nC. ...", FOUR) == "AC"
    assert multi("A\nC", FOUR) == "AC"

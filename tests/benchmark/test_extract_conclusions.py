"""Conclusions real models write instead of a bare letter, English and Chinese, and the silent errors to stop."""

from __future__ import annotations

import pytest

from benchmark.extract.choice import Choices
from tests.benchmark.extract_helpers import code_read

FRUIT = Choices(["apple", "banana", "cherry", "date"])
CODES = Choices(["\u2063a\u2063", "\u2063b\u2063", "\u2063c\u2063", "\u2063d\u2063"])  # texts unknown
NUMBERS = Choices(["12", "15", "18", "21"])
TEN = Choices([f"choice {k}" for k in range(10)])


def single(text, ch=FRUIT):
    return code_read(text, ch)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("分析如下。\n\n故选B", "B"),
        ("香蕉含钾最多，故选：B。", "B"),
        ("综合来看，正确选项为（d）。", "D"),
        ("比较四个选项后，最合适的选项是：D. date", "D"),
        ("A说法正确；B说法正确；C说法正确；D说法有误。错误的叙述是选项D。", "D"),
        ("【解析】香蕉是黄色的。<eoe>\n【答案】B <eoa>", "B"),
        ("[正确答案]C<eoa>\n樱桃是红色的，所以选C。", "C"),
        ("(a) Apples are red.\n\n(b) Bananas are yellow.\n\n(c) Cherries are red.\n\nC", "C"),
        ("The fruit in question is red and small.\n\nThe answer is $C$.", "C"),
        ("所以答案为 $\\text{C}$。", "C"),
        ("The answer is **C**.", "C"),
        ("Therefore, the best answer is (b) banana, as it is the only yellow one.", "B"),
        ("I would choose C because cherries are small.", "C"),
        ("Considering the size, I believe (c) cherry would be the most fitting choice here.", "C"),
        ("Of the four, option (b) is the correct answer.", "B"),
        ("因此，选项 (b) 香蕉是最合适的答案。", "B"),
        ("因此，应选C。", "C"),
        ("综上所述，我选择 (d) 枣。", "D"),
        ("The most likely fruit here would be:\n\n(b) banana", "B"),
        ("Based on the colour, the best choice is\n\nB", "B"),
        ("The only yellow fruit is the banana, which is option (b).", "B"),
        ("B\n\n解析：香蕉是黄色的，其余都不是。", "B"),
        ("这道题问的是黄色水果：\n\nB. banana\n\n解释：其余三种都不是黄色。", "B"),
        ("Bananas are yellow. So the answer is banana.", "B"),
        ("banana", "B"),
        ("B is the answer.", "B"),
        ("The answer is (B), and (A) is wrong.", "B"),
        ("答案是B，A错误。", "B"),
        ("Best option: B", "B"),
        ("Answer: 15", "B"),
    ],
)
def test_conclusions_are_read(text, expected):
    ch = NUMBERS if text == "Answer: 15" else FRUIT
    assert single(text, ch) == expected


def test_the_answer_is_x_with_ten_options():
    assert single("Let's think step by step. Choice 7 fits. The answer is (H).", TEN) == "H"
    assert single("The answer is (H)\n\nThe answer is (J).", TEN) is None  # two answers


def test_json_answer_field_after_reasoning():
    text = 'Reasoning first.\n```json\n{\n  "reasoning": "Cherries are red and small.",\n  "answer": "C"\n}\n```'
    assert single(text) == "C"


# ------------------------------------------------- the silent errors: no answer, never the first option


def test_several_options_after_a_one_answer_marker_are_no_answer():
    assert single("Therefore, the correct answer is (b) banana and (d) date.") is None
    assert single("所以，正确的答案是(c) 樱桃 和 (d) 枣。") is None
    assert single("答案：B, D") is None


def test_a_one_line_walk_through_ends_with_its_conclusion():
    text = "A．苹果是红色的，故A错误； B．香蕉是黄色的，故B错误； C．樱桃是红色的，故C错误； D．枣是棕色的，故D正确； 故选D。"
    assert single(text, CODES) == "D"


def test_the_last_conclusion_wins_over_an_early_answer_line():
    text = ("Answer: A. apples are red, correct;\nB. bananas are yellow, correct;\nC. cherries are blue, wrong;\n"
            "D. dates are brown, correct.\nTherefore, the correct answer is C.")
    assert single(text, CODES) == "C"


def test_an_answer_line_that_walks_through_the_options_is_no_claim():
    text = ("Answer: A. apples are red, correct; B. bananas are yellow, correct; C. cherries are blue, wrong; "
            "D. dates are brown, correct. Therefore, the correct answer is C.")
    assert single(text, CODES) == "C"


def test_disagreeing_conclusions_without_a_revision_are_no_answer():
    assert single("The answer is (A).\n\nFinal Answer: The answer is (C).") is None
    assert single("答案是B。\n\n综上，正确答案为C。") is None


def test_a_maths_variable_is_no_option_letter():
    assert single("设 $A=\\{x \\mid x>2\\}$，$B$ 为其补集，则 $A \\cup B = R$。") is None
    assert single("We have A = 3 and B = 4, so the hypotenuse is 5.") is None
    assert single("In the right triangle the longest side is AB.\n\nThe answer is C.") == "C"


def test_a_letter_whose_text_is_another_options_is_no_answer():
    assert single("The correct answer is:\nA. 18", NUMBERS) is None  # 18 is option C
    assert single("The answer is (b) cherry.") is None
    assert single("B. 21", NUMBERS) is None
    assert single("The answer is (C) 42.", NUMBERS) is None  # C is 18
    assert single("The answer is (C) 18.", NUMBERS) == "C"


def test_negated_and_hypothetical_mentions_are_no_claims():
    assert single("因此，选项A是错误的。") is None
    assert single("The answer is not A.") is None
    assert single("如果选A，则结果为红色。") is None
    assert single("最后一个选项为D，它是枣。\n\n故选B。") == "B"  # "the last option is D" states no answer

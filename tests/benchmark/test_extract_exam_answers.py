"""Exam-style answers (science, law, maths with formulas), English and Chinese: pick-several
conclusions, formatted boxes, matching questions, a concluding mention of one option, Chinese answer
marks without brackets, an option's text alone."""

from __future__ import annotations

import pytest

from benchmark.extract.choice import Choices
from tests.benchmark.extract_helpers import FORMULAS, HAN, STATEMENTS, WORK, code_read, codes_read

LENGTHS = Choices(["1.1 mm", "1.7 mm", "2.3 mm", "2.9 mm"])
ANGLES = Choices(["30°", "60°", "90°", "120°"])
MATCHING = Choices(["P→1; Q→2; R→3; S→4", "P→2; Q→4; R→1; S→3", "P→3; Q→1; R→4; S→2", "P→4; Q→3; R→2; S→1"])


@pytest.mark.parametrize(
    "text, expected",
    [
        ("In summary, statements (A), (C) and (D) hold.", "ACD"),
        ("Final answer: options (B) and (C) are correct.", "BC"),
        ("So (A), (B), (C), and (D) are all correct.", "ABCD"),
        ("All four options are correct.", "ABCD"),
        ("Therefore the answer is all of the above.", "ABCD"),
        ("The true statements are (B) and (D).", "BD"),
        ("Both (A) and (C) are correct.", "AC"),
        ("Checking (A): true. (B): false. (C): true. (D): true.\n\nIn summary, statements (A), (C) and (D) hold.", "ACD"),
        ("Hence, statements A and C are true, while B and D are false.", "AC"),
    ],
)
def test_pick_several_conclusions(text, expected):
    assert codes_read(WORK + text, STATEMENTS) == expected


def test_pick_several_options_each_with_its_formula_then_one_rejected():
    text = "Thus the correct answers are (A) $x=2$, (B) $y=3$, and (C) $z=4$. Option (D) fails because w is 6."
    assert codes_read(WORK + text, FORMULAS) == "ABC"
    text = "Thus the correct answers are (A) x equals two, (B) y equals three, and (C) z equals four. (D) is incorrect."
    assert codes_read(WORK + text, FORMULAS) == "ABC"


def test_every_option_at_once_is_no_single_answer():
    assert code_read(WORK + "All four options are correct.", STATEMENTS) is None
    assert code_read(WORK + "So (A), (B), (C), and (D) are all correct.", STATEMENTS) is None


@pytest.mark.parametrize(
    "text",
    [
        "Are all four options correct? No: (B) is false.",
        "All of the above statements are incorrect.",
        "It is not the case that all of the above hold.",
    ],
)
def test_every_option_questioned_or_denied_is_no_answer(text):
    assert codes_read(WORK + text, STATEMENTS) is None


@pytest.mark.parametrize(
    "text, choices, expected",
    [
        ("The value is 42.\n\n$\\boxed{\\textbf{(C) }42}$", Choices(["36", "40", "42", "44"]), "C"),
        ("$\\boxed{\\mathrm{(B)\\ NO_2}}$", Choices(["NO", "NO_2", "N_2O", "N_2O_5"]), "B"),
        ("$\\boxed{\\text{(D)}}$", HAN, "D"),
        ("$\\boxed{\\textbf{\\text{(C)}}}$", HAN, "C"),
        ("\\[\\boxed{{\\bf (A)}}\\]", HAN, "A"),
        ("$\\boxed{\\mathrm{B\\ NO_2}}$", Choices(["NO", "NO_2", "N_2O", "N_2O_5"]), "B"),
    ],
)
def test_the_code_inside_a_formatted_box(text, choices, expected):
    assert code_read(WORK + text, choices) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Thus \\boxed{A}\\boxed{C}", "AC"),
        ("Thus $\\boxed{A}$, $\\boxed{C}$ and $\\boxed{D}$", "ACD"),
        ("The final answer is $\\boxed{\\text{(A), (C)}}$", "AC"),
        ("The correct statement(s) is (are): (A), (D)", "AD"),
        ("First \\boxed{A}. Then the field is checked again. \\boxed{C}", None),  # two answers, nothing revised
    ],
)
def test_pick_several_in_adjacent_boxes_is_one_answer(text, expected):
    assert codes_read(WORK + text, STATEMENTS) == expected


def test_a_box_whose_code_has_another_options_number_is_no_answer():
    assert code_read(WORK + "$\\boxed{\\textbf{(C) }40}$", Choices(["36", "40", "42", "44"])) is None


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Matching each entry, the correct option is (B) P → 2; Q → 4; R → 1; S → 3", "B"),
        ("Answer: (B) P→2, Q→4, R→1, S→3", "B"),
        ("Thus, the correct option is (B): P → 2, Q → 4, R → 1, S → 3.", "B"),
        # the mapping written is option B's, not A's: unclear
        ("Matching each entry, the correct option is (A) P → 2; Q → 4; R → 1; S → 3", None),
    ],
)
def test_matching_questions_name_the_option_not_the_mapping_letters(text, expected):
    assert code_read(WORK + text, MATCHING) == expected


@pytest.mark.parametrize(
    "text, choices, expected",
    [
        ("So the mass is 2.9 kg; this falls in the range given in option (D).",
         Choices(["1 to 1.5 kg", "1.5 to 2 kg", "2 to 2.5 kg", "2.5 to 3 kg"]), "D"),
        ("The closest is option (C) 2.3 mm, although the computed value is 2.27 mm.", LENGTHS, "C"),
        ("The closest option is (C) 2.3 mm.", LENGTHS, "C"),
        ("The computed value 2.27 mm is closest to option (C).", LENGTHS, "C"),
        ("Heat flows in without any work done, so the process described in option (B).",
         Choices(["isothermal", "adiabatic", "isobaric", "isochoric"]), "B"),
        ("所以选项为(D)。", ANGLES, "D"),
        ("夹角为120度。\n选项：(D) 120°", ANGLES, "D"),
        ("综上，选项A最为准确。", HAN, "A"),
        ("因此选项B最符合题意。", HAN, "B"),
        ("A、B、C都与题意不符，只有D项符合。", HAN, "D"),
        ("只有选项C正确。", HAN, "C"),
    ],
)
def test_a_concluding_mention_of_one_option(text, choices, expected):
    assert code_read(WORK + text, choices) == expected


@pytest.mark.parametrize(
    "text, choices",
    [
        ("Let's check option (C).", LENGTHS),  # the last sentence, but no conclusion
        ("Thus, let us examine option (C) more carefully.", LENGTHS),
        ("Option (A) is described in the passage, but it is wrong.", HAN),
        ("The closest is option (C) 2.4 mm.", LENGTHS),  # C is 2.3 mm: the code and the value disagree
        ("Therefore, option (B) and option (C) both fit.", LENGTHS),
        ("只有D项不符合题意。", HAN),
        ("我们逐一分析选项：\n\nA．甲的说法\n- 这是正确的。\n\nB．乙的说法\n- 这是错误的。", HAN),
    ],
)
def test_a_mention_that_concludes_nothing_is_no_answer(text, choices):
    assert code_read(WORK + text, choices) is None


@pytest.mark.parametrize(
    "text, expected",
    [
        ("选项A、B、D正确。", "ABD"),
        ("A、B、D三项正确，C项错误。", "ABD"),
        ("A、D两项说法正确", "AD"),
        ("综上所述，本题的正确选项为B、C、D。", "BCD"),
        ("本题应选BCD项。", "BCD"),
    ],
)
def test_chinese_pick_several_conclusions(text, expected):
    assert codes_read(WORK + text, HAN) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("正确答案:A<eoa>", "A"),
        ("正确答案：B<eoa>", "B"),
        ("正确答案:C\n解析：丙的说法与材料一致，其余不符。", "C"),
        ("正确答案：D 因为丁与材料一致。", "D"),
    ],
)
def test_chinese_answer_marks_without_brackets(text, expected):
    assert code_read(WORK + text, HAN) == expected
    assert code_read(text, HAN) == expected


@pytest.mark.parametrize(
    "text, choices, expected",
    [
        ("The concentration drops to\n0.33 %", Choices(["0.033%", "0.33%", "3.3%", "33%"]), "B"),
        ("The tank ends up\n\nHalf-full.", Choices(["empty", "half full", "full", "overflowing"]), "B"),
        ("The answer is 0.330 %", Choices(["0.033%", "0.33%", "3.3%", "33%"]), "B"),
        ("Final answer: 1,000 m", Choices(["10 m", "100 m", "1000 m", "10000 m"]), "C"),
    ],
)
def test_an_options_text_alone_after_normalising(text, choices, expected):
    assert code_read(WORK + text, choices) == expected

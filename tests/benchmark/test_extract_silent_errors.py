"""Responses where a rule could read a wrong answer without anyone noticing: each must read as no
answer, or as the full set of the options chosen, never as a part of it."""

from __future__ import annotations

import pytest

from benchmark.extract.choice import Choices
from tests.benchmark.extract_helpers import FORMULAS, HAN, STATEMENTS, WORK, code_read, codes_read

FRUIT = Choices(["apple", "banana", "cherry", "date"])
HALF = Choices(["empty", "half full", "full", "overflowing"])


# ---------------------------------------------------------------- chosen options, one per line


@pytest.mark.parametrize(
    "text, expected",
    [
        ("(A) The rod expands\n(C) The field vanishes", "AC"),
        ("A. The rod expands\nC. The field vanishes\nD. The charge is conserved", "ACD"),
        ("A) The rod expands\n\nC) The field vanishes", "AC"),
    ],
)
def test_chosen_lines_are_read_as_the_full_set(text, expected):
    assert codes_read(WORK + text, STATEMENTS) == expected
    assert codes_read(text, STATEMENTS) == expected


def test_chosen_lines_with_formulas_are_read_as_the_full_set():
    assert codes_read(WORK + "(A) $x=2$\n(C) $z=4$", FORMULAS) == "AC"


@pytest.mark.parametrize(
    "text",
    [
        "(A) The rod expands\n(C) The field is unchanged",  # one line is not its option's text
        "The incorrect options are:\n(B) The current doubles\n(D) The charge is conserved",
        "(A) The rod expands\n(B) The current doubles\n(C) The field vanishes\n(D) The charge is conserved",  # an echo
    ],
)
def test_chosen_lines_that_are_not_all_readable_are_no_answer(text):
    assert codes_read(WORK + text, STATEMENTS) is None


def test_chosen_lines_are_no_single_answer():
    assert code_read(WORK + "(A) The rod expands\n(C) The field vanishes", STATEMENTS) is None


# ---------------------------------------------------------------- the prompt's example echoed


@pytest.mark.parametrize(
    "text, expected",
    [
        ("请在最后输出答案，例如[正确答案]A<eoa>", None),
        ("例如：【答案】A <eoa>", None),
        ("Please answer in the format, for example: Answer: A", None),
        ("The required format is e.g. Answer: A", None),
        ("请按格式回答，例如[正确答案]A<eoa>\n分析：乙正确。\n[正确答案]B<eoa>", "B"),
        ("Please answer in the format, for example: Answer: A\n\nBananas are yellow. Answer: B", "B"),
    ],
)
def test_the_instructions_example_is_never_the_answer(text, expected):
    choices = HAN if "答案" in text else FRUIT
    assert code_read(text, choices) == expected


def test_an_echoed_question_after_the_answer_does_not_override_it():
    text = "Answer: B\n\nQuestion: Which of these fruits is yellow?\nA. apple\nB. banana\nC. cherry\nD. date"
    assert code_read(text, FRUIT) == "B"
    assert code_read(WORK + "Answer: B\n\nA. apple\nB. banana\nC. cherry\nD. date", FRUIT) == "B"
    assert code_read("【答案】B <eoa>\n【题目】下列哪种水果是黄色的？\nA. 甲\nB. 乙\nC. 丙\nD. 丁", HAN) == "B"


# ---------------------------------------------------------------- few-shot continuation


@pytest.mark.parametrize(
    "text",
    [
        "Bananas are yellow. The answer is (B).\n\nQuestion: Which animal barks?\nOptions:\nA. cat\nB. dog\nC. cow\n"
        "Answer: Let's think step by step. Dogs bark. The answer is (B).\n\nQuestion: What is 2+2?\nOptions:\n"
        "A. 4\nB. 5\nAnswer: The answer is (A).",
        "Bananas are yellow. The answer is (B).\n\nNow, let's combine all the answers.\n\nThe answer is ... B, D, A, C, B.",
        "Bananas are yellow. The answer is (B).\n\nNow, let's总结以上问题的答案：\n\nA. social\nB. school\nC. clinical\n\n"
        "The answer is C. clinical",
        "Bananas are yellow. The answer is (B).\n\nA. Notify the parents\nB. Obtain consent\nC. Ask a court\n\n"
        "The answer is A. Notify the parents",
    ],
)
def test_the_answer_before_an_invented_continuation_stands(text):
    assert code_read(text, FRUIT) == "B"


def test_the_question_restated_before_the_answer_is_read_as_before():
    text = "Let us restate it.\n\nQuestion: Which fruit is yellow?\nA. apple\nB. banana\nAnswer: The answer is (B)."
    assert code_read(text, FRUIT) == "B"


def test_a_change_of_mind_after_a_self_check_is_no_continuation():
    text = "Answer: A\n\nQ: is A really right? Apples are red. Let me reconsider: the answer is B."
    assert code_read(text, FRUIT) == "B"


# ---------------------------------------------------------------- degenerate output


@pytest.mark.parametrize(
    "text",
    [
        "A、B、C、D中，A、B、C、D中，A、B、C、D中，A、B、C、D中，A、B、C、D中，A、B",
        "答案：A\n解析：A、B、C、D中，A、B、C、D中，A、B、C、D中，A、B、C、D中，A、B、C、D中，",
        "The answer is A or B or A or B or A or B or A or B or A or B or A or B",
        "ABCDABCDABCDABCDABCDABCDABCD",
    ],
)
@pytest.mark.parametrize("read", [code_read, codes_read])
def test_option_letters_in_a_loop_are_no_answer(text, read):
    assert read(text, HAN) is None


def test_one_answer_repeated_is_still_that_answer():
    assert code_read("The answer is A. " * 5, FRUIT) == "A"


# ---------------------------------------------------------------- option texts, partly or several


@pytest.mark.parametrize(
    "text, choices",
    [
        ("The tank ends up\n\nhalf", HALF),  # part of an option's text
        ("Hence the answer is half", HALF),
        ("The tank ends up\n\nfull or empty", HALF),  # two options
        ("The answer is 1.5", Choices(["1.50 m", "1.5 s", "2 m", "3 s"])),  # the unit would decide
        ("The answer is 1,5", Choices(["1.5", "15", "150", "1500"])),
    ],
)
def test_a_text_matching_partly_or_several_options_is_no_answer(text, choices):
    assert code_read(WORK + text, choices) is None


def test_the_questions_own_options_echoed_between_two_answers_are_no_continuation():
    # an echo of the question's own options is read as before: the revised answer decides
    text = "Initially I thought the answer is A.\n\nA. apple\nB. banana\nC. cherry\nD. date\n\nWait, recheck: the answer is C."
    assert code_read(text, FRUIT) == "C"
    assert code_read("The answer is A.\n\nA. apple\nB. banana\nC. cherry", Choices(["apple", "banana"])) == "A"


@pytest.mark.parametrize("read", [code_read, codes_read])
def test_a_verdict_inside_a_walk_on_one_line_is_no_conclusion(read):
    # A and C are both said correct: neither one option nor, from a walk alone, the set
    assert read("(A) is correct. (B) is incorrect. (C) is correct. (D) is incorrect.", STATEMENTS) is None
    assert read("A. 甲说法正确；B. 乙说法错误；C. 丙说法正确；D. 丁说法错误", HAN) is None

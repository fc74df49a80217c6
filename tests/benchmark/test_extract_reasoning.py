"""Extraction from reasoning models: traces dropped, cut-off reasoning unanswered, boxed and final-line answers."""

from __future__ import annotations

import pytest

from benchmark.extract.choice import Choices, extract_multi
from tests.benchmark.extract_helpers import code_read

CAPITALS = Choices(["Lyon", "Paris", "Marseille", "Nice"])
TEN = Choices([f"{k} kg" for k in range(10, 110, 10)])  # A..J


def single(text, ch=CAPITALS, **kw):
    return code_read(text, ch, **kw)


@pytest.mark.parametrize(
    "text, expected",
    [
        # the chat template opened the block: only the part after </think> is the answer
        ("Let me weigh A against B. A looks tempting.\n</think>\n\nThe capital is **B**.", "B"),
        ("Hmm, option A? No.\n</think>\n\n**Answer:** B) Paris", "B"),
        ("<think>The answer is A... no.</think>\nAnswer: B", "B"),
        ("◁think▷maybe A◁/think▷\n答案：B", "B"),
        ("So the capital must be Paris.\n\n**Final Answer**\n\\boxed{B}", "B"),
        ("The result follows.\n\\[\n\\boxed{\\text{C}}\n\\]", "C"),
        ("$\\boxed{D}$", "D"),
        ("Each option was checked above.\n\nFinal Answer: B", "B"),
        ("Each option was checked above.\n\n### Answer\n\n### B", "B"),
        ("**Answer: (B)**\n\n**Explanation:** Paris has been the capital since 987.", "B"),
        ("The correct answer is **(B)**.\n\nHere's why:\n* **(A)** is incorrect: Lyon is a regional capital.", "B"),
        ("根据分析，正确答案是 **B**。", "B"),
        (("So B.\n</think>\n\nThe correct answer is **B. Paris**.\n\n- **Option A (Lyon)** is incorrect.\n"
         "- **Option C (Marseille)** is a port.\n\nThus, the correct choice is B."), "B"),
        ("Answer: A\n\nWait, let me reconsider: Lyon was never the capital. The answer is B.", "B"),
    ],
)
def test_reasoning_answers_are_read(text, expected):
    assert single(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "<think>\nThe capital... the answer is B, because",  # a <think> never closed
        "Okay, so the answer is",  # nothing after the trace
        "Let me think.</think>",  # the trace and nothing else
        "I think the answer is B.\n</think>\n",  # an answer inside the trace is not the reply
    ],
)
def test_unfinished_reasoning_is_unanswered(text):
    assert single(text) is None


def test_cut_off_by_length_is_unanswered():
    assert single("The answer is B because Paris", finish_reason="length") is None
    assert single("Thinking about Lyon, Paris and", finish_reason="length") is None
    # the reasoning closed before the cut: the answer after it stands
    assert single("weighing\n</think>\nThe answer is B. Paris has", finish_reason="length") == "B"
    assert single("The answer is B.", finish_reason="stop") == "B"
    assert extract_multi("</think>", CAPITALS) is None


def test_a_hint_or_quotation_is_not_the_models_answer():
    assert single('The hint says the answer is (A), but Paris is the capital: the answer is (B).') == "B"
    assert single('A user suggested that the answer is A.\n\nI disagree. The answer is B.') == "B"
    assert single('The question asks "is the answer A?"; it is not. The correct option is B.') == "B"
    assert single("If the answer were A, Lyon would be the capital. So the answer is B.") == "B"
    assert single("I was told the answer is A. Checking the history, the answer is B.") == "B"
    assert single("提示说答案是A，但巴黎才是首都，所以答案是B。") == "B"


def test_ten_options_and_letters_beyond_d():
    assert single("The answer is (I).", TEN) == "I"
    assert single("The answer is I.", TEN) == "I"
    assert single("Working it out, the mass is 90 kg. The answer is (I)", TEN) == "I"
    assert single("Final Answer: The answer is (J).", TEN) == "J"


def test_a_maths_variable_is_not_an_option():
    assert single("Let $A = 5$ and $B = 2$, then $A + B = 7$.") is None
    assert single("Since A = 5 and the area is fixed, the answer is C.") == "C"
    assert single("The volume $V$ is $\\frac{4}{3}\\pi r^3$, so we get \\(F = ma\\).", TEN) is None
    assert single("So $P(A) = 0.3$ and the answer is $\\text{D}$.") == "D"

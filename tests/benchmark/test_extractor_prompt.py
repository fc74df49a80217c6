"""The extractor model's prompt and the strict reading of its reply (benchmark/extract/prompt.py)."""

from __future__ import annotations

import pytest

from benchmark.dataset import AnswerSpace, Item, Message
from benchmark.extract.prompt import RESPONSE_CHARS, options_of, parse_reply, prompt

CODES = ["A", "B", "C", "D"]


@pytest.mark.parametrize("reply, single, several", [
    ("B", ("B",), ("B",)),
    (" (b). ", ("B",), ("B",)),
    ("**C**", ("C",), ("C",)),
    ("NONE", (), ()),
    ("none.", (), ()),
    ("A, C", None, ("A", "C")),
    ("C A", None, ("A", "C")),  # option order, whatever the reply's order
    ("A and D", None, ("A", "D")),
    ("A、B", None, ("A", "B")),
    ("The answer is B", None, None),  # a sentence is not a strict reply
    ("B because it is calm", None, None),
    ("E", None, None),  # no such option
    ("A, E", None, None),
    ("AB", None, None),  # glued codes are not a list
    ("", None, None),
    (None, None, None),
])
def test_reply_is_read_strictly(reply, single, several):
    assert parse_reply(reply, CODES, multi=False) == single
    assert parse_reply(reply, CODES, multi=True) == several


def test_numbered_codes():
    codes = [str(i) for i in range(1, 29)]
    assert parse_reply("17", codes, multi=False) == ("17",)
    assert parse_reply("3, 28", codes, multi=True) == ("3", "28")
    assert parse_reply("29", codes, multi=False) is None


def test_prompt_lists_options_and_keeps_the_end_of_a_long_response():
    text = prompt([("A", "joy"), ("B", "fear")], "x" * (RESPONSE_CHARS + 50) + " so B.", multi=False)[0].content
    assert "A. joy\nB. fear" in text and "NONE" in text and text.count("x") == RESPONSE_CHARS - 6
    assert "so B." in text and "(one of A, B)" in text
    several = prompt([("A", "joy"), ("B", "fear")], "A and B", multi=True)[0].content
    assert "separated by commas (codes: A, B)" in several


def test_options_of_reads_the_option_lines_the_model_saw():
    body = "Passage:\nA. not an option line of this question\n\nA. joy\nB. fear\nC. calm\n\nAnswer with the letter."
    item = Item("i", (Message("user", body),), "A", answer=AnswerSpace(("A", "B", "C")))
    assert options_of(item) == [("A", "joy"), ("B", "fear"), ("C", "calm")]
    named = Item("i", (Message("user", "1. joy\n2. fear"),), ["joy"], answer=AnswerSpace(("joy", "fear"), multi=True))
    assert options_of(named) == [("A", ""), ("B", "")]  # two options: letter codes, as the prompt would show
    assert options_of(Item("i", (Message("user", "q"),), "x")) is None  # free text: not asked

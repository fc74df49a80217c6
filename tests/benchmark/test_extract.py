"""Answer extraction: strict, never guessing."""

from __future__ import annotations

import pytest

from benchmark.extract.choice import Choices, codes_for, extract_multi, extract_single, fold
from tests.benchmark.extract_helpers import code_read

ABCD = Choices(["The grandfather", "The grandson", "Can't be determined", "Nobody"])
SENTIMENT = Choices(["Positive", "Negative"])
TWELVE = Choices([f"option {i}" for i in range(12)])  # A..L: "I" is an option letter here
EMOTIONS = Choices(["admiration", "joy", "surprise", "neutral", "other-positive"] + [f"e{i}" for i in range(23)])


def single(text, ch=ABCD):
    return code_read(text, ch)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("B", "B"),
        ("b", "B"),
        (" B. ", "B"),
        ("(B)", "B"),
        ("B)", "B"),
        ("**B**", "B"),
        ("`B`", "B"),
        ("Answer: B", "B"),
        ("answer: b", "B"),
        ("Answer：B", "B"),  # full-width colon
        ("Ｂ", "B"),  # full-width letter
        ("The answer is (B).", "B"),
        ("The correct answer is B because the context says so.", "B"),
        ("**Answer: B**", "B"),
        ("Answer: Option B", "B"),
        ("答案：B", "B"),
        ("答案是B。", "B"),
        ("答案为 C", "C"),
        ("我认为答案是D", "D"),
        ("I think B", "B"),
        ("I think it's B.", "B"),
        ("It's B", "B"),
        ("B is correct.", "B"),
        ("A is correct.", "A"),
        ("I would choose C.", "C"),
        ("B\n\nThe grandson struggled with the app.", "B"),
        ("B. The grandson", "B"),
        ("The grandson", "B"),
        ("the grandson.", "B"),
        ("Answer: The grandson", "B"),
        ("Answer: can't be determined", "C"),
        ("Not A, it is B.", "B"),
        ("Answer:\nB", "B"),
        ("**Answer:** (C) Can't be determined", "C"),
        ("Answer: [B]", "B"),
        ("C. Can't be determined\n\nThe context does not say.", "C"),
        ("A. The grandfather\nB. The grandson\n\nAnswer: B", "B"),  # options echoed, then answered
        ("<think>Maybe the answer is A. No, the answer is B.</think>\nAnswer: B", "B"),
        ("我选择C选项", "C"),
        ("Option B", "B"),
        ("The answer is C, not A.", "C"),
        ("Use the form `Answer: X`.\nAnswer: B", "B"),  # format sentence echoed
        ("请只回答所选选项的字母，格式为“答案：X”。\n答案：D", "D"),
        ("B\n\nThe answer is clearly the grandson.", "B"),
        ("B\n\nOn reflection the answer is A.", "A"),  # a revision: the later claim stands
    ],
)
def test_single_accepts(text, expected):
    assert single(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "A or B",
        "A and B are both possible.",
        "Answer: A\nFinal answer: B",  # two markers disagree
        "B. The grandfather",  # code of one option, text of another
        "Answer: E",  # no option E
        "E",
        "I don't know.",
        "A grandson would know.",  # the article "A"
        "It is hard to say.",
        "The grandson or the grandfather",
        "Sorry, I cannot help with that.",
        "Neither A nor B.",
        "I can't answer that.",
        "A. The grandfather\nB. The grandson",  # options echoed, no choice
        "B\n\nThe answer is A.",  # first line and marker disagree
    ],
)
def test_single_rejects(text):
    assert single(text) is None


def test_i_is_a_pronoun_unless_it_stands_as_the_answer():
    assert single("I think I", TWELVE) == "I"
    assert single("I think B", TWELVE) == "B"
    assert single("I", TWELVE) == "I"
    assert single("Answer: I", TWELVE) == "I"
    assert single("I believe the answer is C", TWELVE) == "C"


def test_option_text_alone_and_in_answer():
    assert single("Positive", SENTIMENT) == "A"
    assert single("negative.", SENTIMENT) == "B"
    assert single("Answer: Negative", SENTIMENT) == "B"
    assert single("Answer: negative, since the reviewer is bored", SENTIMENT) == "B"
    assert single("Neutral", SENTIMENT) is None
    # Free prose naming an option's text is not read as a claim.
    assert single("The review sounds positive to me.", SENTIMENT) is None


def test_duplicate_option_texts_identify_nothing():
    ch = Choices(["yes", "no", "yes"])
    assert extract_single("yes", ch) is None
    assert extract_single("B", ch) == 1


def test_numbered_options_accept_numbers_only_in_strict_positions():
    ch = Choices([f"label {i}" for i in range(30)])
    assert ch.codes[:3] == ("1", "2", "3") and ch.numeric
    assert extract_single("12", ch) == 11
    assert extract_single("Answer: 30", ch) == 29
    assert extract_single("Answer: 31", ch) is None
    assert extract_single("There are 2 reasons, so 5", ch) is None


def test_codes_never_lower_case():
    assert codes_for(26)[-1] == "Z"
    assert codes_for(28) == tuple(str(i) for i in range(1, 29))


def test_fold_normalises_width_case_and_punctuation():
    assert fold("  ＰＯＳＩＴＩＶＥ. ") == "positive"
    assert fold("**Can't  be determined**") == "can't be determined"


# ------------------------------------------------------------------ multi


def multi(text, ch=EMOTIONS):
    got = extract_multi(text, ch)
    return None if got is None else sorted(got)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("joy", [1]),
        ("Answer: joy, surprise", [1, 2]),
        ("Answer: Joy, Surprise.", [1, 2]),
        ("answer: joy，surprise", [1, 2]),  # Chinese comma
        ("答案：joy、surprise", [1, 2]),
        ("joy and surprise", [1, 2]),
        ("joy surprise", [1, 2]),
        ("Answer: neutral", [3]),
        ("Answer: surprise", [2]),
        ("Answer: 2, 3", [1, 2]),  # numbers of numbered options
        ("Answer: other-positive", [4]),
        ("joy, joy", [1]),
        ("joy, surprise\n\nThe comment is upbeat.", [1, 2]),
        ("joy, surprise\nThis answer reflects the tone.", [1, 2]),
        ("Answer:\n- joy\n- surprise\n\nBoth fit.", [1, 2]),
        ("joy\nsurprise", [1, 2]),
        ("Answer: Joy (2), Surprise (3)", [1, 2]),
        ("<think>maybe anger</think>Answer: joy", [1]),
    ],
)
def test_multi_accepts(text, expected):
    assert multi(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Answer: none",
        "The comment expresses joy and surprise.",  # prose, not a list
        "Answer: joy, happiness",  # happiness is not a label
        "Answer: joy\nAnswer: surprise",  # two answers
    ],
)
def test_multi_rejects(text):
    assert multi(text) is None


def test_multi_letters():
    ch = Choices(["red", "green", "blue", "yellow"])
    assert sorted(extract_multi("Answer: A, C", ch)) == [0, 2]
    assert sorted(extract_multi("a, c", ch)) == [0, 2]
    assert sorted(extract_multi("A C", ch)) == [0, 2]
    assert sorted(extract_multi("答案：A，C", ch)) == [0, 2]
    assert extract_multi("Answer: A, E", ch) is None


def test_multi_word_label_kept_whole():
    ch = Choices(["平和", "愤怒", "not ironic", "ironic"])
    assert sorted(extract_multi("平和", ch)) == [0]
    assert sorted(extract_multi("Answer: not ironic", ch)) == [2]


# ------------------------------------------------------------------ properties

from hypothesis import given, settings
from hypothesis import strategies as st

option_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.lists(option_text, min_size=2, max_size=30))
@pytest.mark.slow
def test_never_raises_on_any_text(response, options):
    ch = Choices(options)
    i = extract_single(response, ch)
    assert i is None or 0 <= i < len(options)
    got = extract_multi(response, ch)
    assert got is None or all(0 <= j < len(options) for j in got)


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 30), st.data())
def test_requested_format_always_reads_back(n, data):
    ch = Choices([f"choice number {i}" for i in range(n)])
    i = data.draw(st.integers(0, n - 1))
    assert extract_single(f"Answer: {ch.codes[i]}", ch) == i
    assert extract_single(f"答案：{ch.codes[i]}", ch) == i
    picks = data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=4))
    assert extract_multi("Answer: " + ", ".join(ch.codes[j] for j in sorted(picks)), ch) == picks


# --- JSON answers: what a model held to a JSON schema returns (providers/constrain.py)


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"answer": "B"}', "B"),
        ('{"answer":"C"}', "C"),
        ('{"Answer": "b"}', "B"),
        ('{"answer": ["D"]}', "D"),
        ('{"answer": "The grandson"}', "B"),
        ('```json\n{"answer": "A"}\n```', "A"),
        ('{"answer": ["A", "B"]}', None),  # two claims in a single-answer question
        ('{"answer": "E"}', None),  # no such option
        ('{"answer": ""}', None),
        ('{"answer": "B", "why": "the context"}', "B"),  # the answer field among others
    ],
)
def test_single_reads_json_answer_objects(text, expected):
    assert single(text) == expected


def test_multi_reads_json_answer_objects():
    assert multi('{"answer": ["joy", "surprise"]}') == [1, 2]
    assert multi('{"answer": ["surprise", "joy", "joy"]}') == [1, 2]
    assert multi('{"answer": "joy, surprise"}') == [1, 2]
    assert multi('{"answer": ["joy", "happiness"]}') is None
    assert multi('{"answer": []}') is None
    ch = Choices(["red", "green", "blue"])
    assert sorted(extract_multi('{"answer": ["A", "C"]}', ch)) == [0, 2]

"""Very long answers: read in time (the work grows with the length, not its square), and from their end."""

from __future__ import annotations

import threading

import pytest

from benchmark.extract.choice import Choices
from benchmark.extract.prep import READ_LIMIT
from tests.benchmark.extract_helpers import code_read, codes_read

FRUIT = Choices(["apple", "banana", "cherry", "date"])
# Generous: a 1 MB line takes well under a second when reading is linear; the quadratic reading it
# replaces took 21 s for 64 KB, so hours for 1 MB.
SECONDS_FOR_ONE_MB = 15


def _read_within(seconds: float, read, *args):
    """read(*args) in a thread: its result, or a failure when it is not done in time."""
    out: list = []
    worker = threading.Thread(target=lambda: out.append(read(*args)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"reading took longer than {seconds} s"
    return out[0]


@pytest.mark.parametrize("sentence", ["The answer is A. ", "答案是A。因为苹果最好。", "A、B、C、D中，", "(A) (B) "])
@pytest.mark.parametrize("read", [code_read, codes_read])
def test_a_one_megabyte_line_is_read_in_seconds(sentence, read):
    text = sentence * ((1 << 20) // len(sentence.encode()))
    _read_within(SECONDS_FOR_ONE_MB, read, text, FRUIT)


def test_a_long_answer_is_read_from_its_end():
    filler = "Bananas are yellow and apples are red; neither is the point here. " * 2000
    assert len(filler) > READ_LIMIT
    assert code_read(filler + "\n\nThe answer is (C).", FRUIT) == "C"
    assert codes_read(filler + "\n\nThe correct options are (A) and (C).", FRUIT) == "AC"


def test_the_first_line_read_of_a_cut_answer_is_not_its_first_line():
    # The cut falls right before "B. banana": read alone, that line would be a bare first-line answer.
    filler = "Fruit keeps well in a cool place.\n"
    rest = filler * ((READ_LIMIT - 11) // len(filler))
    head = filler * 50
    text = head + "B. banana\n" + rest.ljust(READ_LIMIT - 11, ".")
    assert len(text) - READ_LIMIT == len(head) - 1
    assert code_read(text, FRUIT) is None
    assert code_read(text[len(head):], FRUIT) == "B"


def test_an_answer_shorter_than_the_limit_is_read_whole():
    # The first-line answer and the walk-through below it are both seen: the cap changes nothing here.
    reasons = "\n".join(f"Reason {k}: bananas are rich in potassium." for k in range(400))
    text = "B\n\n" + reasons
    assert len(text) < READ_LIMIT
    assert code_read(text, FRUIT) == "B"

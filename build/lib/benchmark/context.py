"""Fitting a prompt into a model's context window (models.toml `context_tokens`).

The engine does not know each model's tokenizer, so it counts tokens with a
deliberately pessimistic rule over the pieces BPE tokenizers make: a run of
ASCII letters is a token per 5 letters (rounded up); a digit, an ASCII
punctuation mark, a line break and a space not followed by a letter one
token each; a space before a word nothing (it joins the word); any other
character two tokens. Measured against SmolLM2's tokenizer (llama.cpp,
tests/benchmark/test_judges.py has the figures): English chat history is
over-counted by 16-46 %, Chinese by ~16 %, Python code by ~22 %; chess
notation ("Rxe1+ Be6 15.") is the one text seen under-counted (by ~11 %), so
leave a margin for such content. Over-counting cuts a little more than
needed; under-counting makes the server refuse the request.

A dataset that can shorten its items overrides ``fit(item_id, raw, budget)``
(the default, ``DatasetBase.fit``, cannot: it returns None); the lane calls it only when the rendered prompt is over budget.
What was cut is recorded in ``item.meta["truncated"]`` and, from there, in
the row's measures (``truncated``), so a score made on a shortened input is
never mistaken for one on the whole input.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from benchmark.dataset import Dataset, Item

# Room kept for the chat template's role markers and special tokens.
TEMPLATE_OVERHEAD = 64
DEFAULT_OUTPUT = 256  # output tokens reserved when the model sets no max_tokens


_PIECE = re.compile(r"(?P<word>[A-Za-z]+)|(?P<join>[ ](?=[A-Za-z]))|(?P<one>\s+|[\x00-\x7f])|(?P<other>.)", re.S)
_COST = {"join": 0, "one": 1, "other": 2}


def _costs(text: str) -> Iterator[tuple[int, int]]:
    """(end offset, tokens) of each piece of ``text``."""
    for m in _PIECE.finditer(text):
        kind = m.lastgroup or "other"  # every alternative is a named group
        # A space before a word is part of the word's token; a word is a token per 5 letters.
        yield m.end(), -(-(m.end() - m.start()) // 5) if kind == "word" else _COST[kind]


def estimate_tokens(text: str) -> int:
    """A pessimistic token count (see the module docstring)."""
    return sum(cost for _, cost in _costs(text))


def item_tokens(item: Item) -> int:
    return sum(estimate_tokens(m.content) for m in item.messages)


def prompt_budget(context_tokens: int | None, max_output: int | None) -> int | None:
    """Tokens a prompt may take in a model whose window is ``context_tokens`` (None: unlimited)."""
    if context_tokens is None:
        return None
    return context_tokens - (max_output or DEFAULT_OUTPUT) - TEMPLATE_OVERHEAD


def cut_to_tokens(text: str, budget: int) -> str:
    """The longest prefix of ``text``, cut between pieces, whose estimate is within ``budget``."""
    if budget <= 0:
        return ""
    total, end = 0, 0
    for stop, cost in _costs(text):
        total += cost
        if total > budget:
            return text[:end]
        end = stop
    return text


def fit_source(build: Callable[[str], str], source: str, budget: int, floor: int = 0) -> tuple[str, str] | None:
    """Cut the end of ``source`` until ``build(kept)`` fits ``budget``: (prompt, kept), or None when
    fewer than ``floor`` tokens of the source would remain. Estimates add up only roughly across
    the seams, so the result is checked and the room narrowed until it fits."""
    room = budget - estimate_tokens(build(""))
    while room >= floor:
        kept = cut_to_tokens(source, room)
        text = build(kept)
        over = estimate_tokens(text) - budget
        if over <= 0:
            return text, kept
        room -= over
    return None


def fitted(ds: Dataset, item_id: str, raw: Any, item: Item, budget: int | None) -> Item:
    """``item``, or the dataset's shortened version when it is over ``budget`` and can be shortened."""
    if budget is None or item_tokens(item) <= budget:
        return item
    return ds.fit(item_id, raw, budget) or item

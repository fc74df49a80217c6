"""Fitting a prompt into a model's context window (models.toml `context_tokens`).

The engine does not know each model's tokenizer, so it counts tokens with a
deliberately pessimistic rule: an ASCII character is a quarter token, any
other character two tokens. Measured against SmolLM2's tokenizer (llama.cpp)
it over-counts English chat history by ~17 % (4.7 characters a token) and
Chinese by ~33 % (1.5 tokens a character); cl100k-class tokenizers are
cheaper still. Over-counting cuts a little more than needed; under-counting
would make the server refuse the request.

A dataset that can shorten its items declares ``fit(item_id, raw, budget)``
(``Fits``); the lane calls it only when the rendered prompt is over budget.
What was cut is recorded in ``item.meta["truncated"]`` and, from there, in
the row's measures (``truncated``), so a score made on a shortened input is
never mistaken for one on the whole input.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from benchmark.dataset import Item

# Room kept for the chat template's role markers and special tokens.
TEMPLATE_OVERHEAD = 64
DEFAULT_OUTPUT = 256  # output tokens reserved when the model sets no max_tokens


def estimate_tokens(text: str) -> int:
    """A pessimistic token count (see the module docstring)."""
    ascii_chars = len(text) if text.isascii() else len(text.encode("ascii", "ignore"))
    return (ascii_chars + 3) // 4 + 2 * (len(text) - ascii_chars)


def item_tokens(item: Item) -> int:
    return sum(estimate_tokens(m.content) for m in item.messages)


def prompt_budget(context_tokens: int | None, max_output: int | None) -> int | None:
    """Tokens a prompt may take in a model whose window is ``context_tokens`` (None: unlimited)."""
    if context_tokens is None:
        return None
    return context_tokens - (max_output or DEFAULT_OUTPUT) - TEMPLATE_OVERHEAD


def cut_to_tokens(text: str, budget: int) -> str:
    """The longest prefix of ``text`` whose estimate is within ``budget``."""
    if budget <= 0:
        return ""
    if estimate_tokens(text) <= budget:
        return text
    cost = 0.0
    for i, ch in enumerate(text):
        cost += 0.25 if ord(ch) < 128 else 2.0
        if cost > budget:
            return text[:i]
    return text


@runtime_checkable
class Fits(Protocol):
    """A dataset that can shorten an item to a token budget, keeping what the task needs."""

    def fit(self, item_id: str, raw: Any, budget: int) -> Item: ...


def fitted(ds: Any, item_id: str, raw: Any, item: Item, budget: int | None) -> Item:
    """``item``, or the dataset's shortened version when it is over ``budget``."""
    if budget is None or not isinstance(ds, Fits) or item_tokens(item) <= budget:
        return item
    return ds.fit(item_id, raw, budget)

"""Extraction results as codes, for readable test tables."""

from __future__ import annotations

from benchmark.extract import Choices, extract_multi, extract_single


def code_read(text: str | None, ch: Choices, **kw) -> str | None:
    """The code of the one option extract_single reads, or None."""
    i = extract_single(text, ch, **kw)
    return None if i is None else ch.codes[i]


def codes_read(text: str | None, ch: Choices, **kw) -> str | None:
    """The codes extract_multi reads, joined in order ("ABD"), or None."""
    got = extract_multi(text, ch, **kw)
    return None if got is None else "".join(ch.codes[i] for i in sorted(got))

"""Extraction results as codes, for readable test tables."""

from __future__ import annotations

from benchmark.extract.choice import Choices, extract_multi, extract_single


# Options shared by the tables of exam-style answers and of silent errors.
STATEMENTS = Choices(["The rod expands", "The current doubles", "The field vanishes", "The charge is conserved"])
FORMULAS = Choices(["$x=2$", "$y=3$", "$z=4$", "$w=5$"])
HAN = Choices(["甲", "乙", "丙", "丁"])
# Reasoning before the conclusion that names no option: the conclusion must be read on its own.
WORK = "We work through the problem step by step.\n\nFirst the forces, then the energy balance.\n\n"


def code_read(text: str | None, ch: Choices, **kw) -> str | None:
    """The code of the one option extract_single reads, or None."""
    i = extract_single(text, ch, **kw)
    return None if i is None else ch.codes[i]


def codes_read(text: str | None, ch: Choices, **kw) -> str | None:
    """The codes extract_multi reads, joined in order ("ABD"), or None."""
    got = extract_multi(text, ch, **kw)
    return None if got is None else "".join(ch.codes[i] for i in sorted(got))

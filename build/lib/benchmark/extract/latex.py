"""Maths in a response or an option text, made safe for the rules: a box is an answer line, a code
written as maths is unwrapped, any other maths is masked so a variable is never an option letter."""

from __future__ import annotations

import hashlib
import re

# Maths: $$..$$, \[..\], \(..\), and $..$ (not currency: "$70.83, $113.33" has no closing "$" before a space).
_MATH = re.compile(r"\$\$(.+?)\$\$|\\\[(.+?)\\\]|\\\((.+?)\\\)|\$(?=[^\s$])([^$\n]{1,300}?)(?<=\S)\$(?!\d)", re.DOTALL)
_BOXED = re.compile(r"\\boxed\s*\{")
_WRAP = re.compile(r"\\(?:text|textbf|textrm|mathrm|mathbf|mathit|textit|mathsf|operatorname|boldsymbol|bm)\s*\{([^{}]*)\}")
# Formatting inside a box that carries no answer: "{\bf (C)}", "(B)\ NO_2", "\quad".
_BOX_FORMAT = re.compile(r"\\(?:bf|rm|it|tt|sf|displaystyle|textstyle)\b\s*|\\(?:[ ,;:!]|q?quad\b)|~")
# What maths may be unwrapped to: an option code, codes, or a code with its text ("$C. 4$").
_CODE_MATH = re.compile(r"\(?[A-Z]\)?|[A-Z](?:\s*[,、]\s*[A-Z])+|[A-Z]{2,5}|[A-Z]\s*[.:]\s*[^=<>]{1,60}")
_MATH_SPACE = re.compile(r"\s+|\\[ ,;:!]")
_ADJACENT_BOXES = re.compile(r"(\nFinal answer: [^\n]*)\n[ \t]*(?:[,，、;&]|\band\b|和|与)?[ \t]*\nFinal answer: ")
MATH_LETTER = "\u2062"
BOXED_MARK = "\nFinal answer: "
# A masked formula keeps a key of its content in private-use characters (no rule reads them), so
# "(A) $x=2$" in a response still restates option A's text "$x=2$", and differs from "$y=3$".
_KEY_BASE = 0xE000


def latex(text: str) -> str:
    """Boxes as answer lines, codes written as maths unwrapped, other maths masked."""
    if "$" not in text and "\\" not in text:
        return text
    text = _MATH.sub(lambda m: _math(next(g for g in m.groups() if g is not None)), text)
    text = _boxed(text)
    if text.count(BOXED_MARK) > 1:  # "\boxed{A}, \boxed{C}": one answer of two codes, not two answers
        for _ in range(8):
            merged = _ADJACENT_BOXES.sub(r"\1, ", text)
            if merged == text:
                break
            text = merged
    return _unwrap(text)


def _unwrap(text: str) -> str:
    """\\text{..}, \\mathrm{..} and the like replaced by their content, nested ones too."""
    for _ in range(4):
        unwrapped = _WRAP.sub(r"\1", text)
        if unwrapped == text:
            break
        text = unwrapped
    return text


def _math(body: str) -> str:
    if _BOXED.search(body):
        return _boxed(body)
    inner = _unwrap(body).replace("{", "").replace("}", "").strip()
    # MATH_LETTER marks the unwrapped code: a head may read it ("答案为$C$"), free prose may not ("$B$ 为其补集").
    return f" {MATH_LETTER}{inner} " if _CODE_MATH.fullmatch(inner) else _mask(body)


def _mask(body: str) -> str:
    digest = hashlib.blake2b(_MATH_SPACE.sub("", body).encode(), digest_size=3).digest()
    return " ⟨math" + "".join(chr(_KEY_BASE + b) for b in digest) + "⟩ "


def _boxed(text: str) -> str:
    """Each \\boxed{X} becomes an answer marker line "Final answer: X" (braces balanced, formatting dropped)."""
    out, pos = [], 0
    for m in _BOXED.finditer(text):
        if m.start() < pos:
            continue
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        inner = _BOX_FORMAT.sub(" ", _unwrap(text[m.end():j - 1]))
        out.append(text[pos:m.start()] + BOXED_MARK + " ".join(inner.replace("{", "").replace("}", "").split()) + "\n")
        pos = j
    return "".join(out) + text[pos:]

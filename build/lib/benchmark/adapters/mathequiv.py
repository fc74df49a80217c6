"""Free-form math answers: reading the model's final answer, and the MATH answer equivalence.

Equivalence is exact match after the MATH dataset's answer normalisation:
Hendrycks et al., "Measuring Mathematical Problem Solving With the MATH Dataset"
(NeurIPS 2021), ``modeling/math_equivalence.py`` (``is_equiv`` / ``_strip_string``),
the file AGIEval copies as ``src/math_equivalence.py`` to score its cloze tasks.
Re-implemented here, step for step and in the same order (``strip_string``):

1. drop line breaks, ``\\!`` (thin negative space), and turn ``\\\\`` into ``\\``;
2. ``tfrac`` / ``dfrac`` -> ``frac``; drop ``\\left`` and ``\\right``;
3. drop degrees (``^{\\circ}``, ``^\\circ``) and escaped dollars ``\\$``;
4. units: everything from ``\\text{ `` (brace then space) on is dropped;
5. drop ``\\%``;
6. a bare leading decimal point gets its zero (``" ."`` -> ``" 0."``, ``"{."`` ->
   ``"{0."``, a leading ``"."`` -> ``"0."``);
7. ``k = 5`` -> ``5``: with exactly one ``=`` and at most two characters before it,
   only the right side is kept;
8. ``\\sqrt3`` -> ``\\sqrt{3}`` (one character);
9. drop every space;
10. ``\\frac12`` -> ``\\frac{1}{2}``, ``\\frac1{72}`` -> ``\\frac{1}{72}``;
11. ``0.5`` -> ``\\frac{1}{2}`` (that one string only);
12. ``a/b`` of two integers (the whole answer) -> ``\\frac{a}{b}``.

No other rewriting: "2.0" and "2" differ, as do "1,000" and "1000", "x=5" and
"5" only by rule 7. Where the published code fails on an input (a ``\\frac`` or
``\\sqrt`` with nothing after it, two ``\\text{ ``), ``is_equiv`` falls back to
comparing the raw strings, as the published code does.

One step of ours comes first, on both sides (``VERSION`` "1"): math-mode ``$``
delimiters (a ``$`` not escaped as ``\\$``) are removed and a full-width
semicolon ``；`` becomes ``;``. AGIEval's gaokao-mathcloze golds are written
``$\\frac{1}{2}$`` and ``$5$;$10$`` (blanks separated by ``;``), and AGIEval
compares them raw, so a bare ``\\frac{1}{2}`` could never match them.

Reading the answer (``extract_answer``): the content of the last ``\\boxed{...}``
(or ``\\fbox{...}``, braces balanced), as AGIEval and MATH read it; else the
text after the last line that starts with an answer marker ("Answer:", "The
answer is", "答案：", "答案是"; benchmark/adapters/freetext.py's marker and span
clean-up); else None (unparsed). Unlike AGIEval, a boxed equation keeps its
left side ("x - 3z = 0" is an answer); rule 7 still drops a short one ("y=").
"""

from __future__ import annotations

import re

from benchmark.adapters.freetext import _SPAN_MARKER, _THINK, extract_span

# Bump when the normalisation, the pre-step or the extraction changes: part of the scorer version.
VERSION = "1"

_MATH_DOLLAR = re.compile(r"(?<!\\)\$")


class _Unnormalisable(Exception):
    """The published normaliser fails on this string (it would raise); compare raw strings."""


def _fix_fracs(s: str) -> str:
    head, *rest = s.split("\\frac")
    out = head
    for sub in rest:
        out += "\\frac"
        if not sub:
            raise _Unnormalisable(s)
        if sub[0] == "{":
            out += sub
        elif len(sub) < 2:
            return s  # the published code gives up and keeps the string
        elif sub[1] != "{":
            out += "{" + sub[0] + "}{" + sub[1] + "}" + sub[2:]
        else:
            out += "{" + sub[0] + "}" + sub[1:]
    return out


def _fix_a_slash_b(s: str) -> str:
    parts = s.split("/")
    if len(parts) != 2:
        return s
    try:
        a, b = int(parts[0]), int(parts[1])
    except ValueError:
        return s
    return f"\\frac{{{a}}}{{{b}}}" if s == f"{a}/{b}" else s


def _remove_right_units(s: str) -> str:
    if "\\text{ " not in s:
        return s
    parts = s.split("\\text{ ")
    if len(parts) != 2:
        raise _Unnormalisable(s)
    return parts[0]


def _fix_sqrt(s: str) -> str:
    head, *rest = s.split("\\sqrt")
    out = head
    for sub in rest:
        if not sub:
            raise _Unnormalisable(s)
        out += "\\sqrt" + sub if sub[0] == "{" else "\\sqrt{" + sub[0] + "}" + sub[1:]
    return out


def strip_string(s: str) -> str:
    """MATH's ``_strip_string``: the normal form two answers are compared in (module docstring)."""
    s = s.replace("\n", "").replace("\\!", "").replace("\\\\", "\\")
    s = s.replace("tfrac", "frac").replace("dfrac", "frac")
    s = s.replace("\\left", "").replace("\\right", "")
    s = s.replace("^{\\circ}", "").replace("^\\circ", "")
    s = s.replace("\\$", "")
    s = _remove_right_units(s)
    s = s.replace("\\%", "")
    s = s.replace(" .", " 0.").replace("{.", "{0.")
    if not s:
        return s
    if s[0] == ".":
        s = "0" + s
    sides = s.split("=")
    if len(sides) == 2 and len(sides[0]) <= 2:
        s = sides[1]
    s = _fix_sqrt(s).replace(" ", "")
    s = _fix_fracs(s)
    if s == "0.5":
        s = "\\frac{1}{2}"
    return _fix_a_slash_b(s)


def _unwrap(s: str) -> str:
    """Our pre-step: math-mode ``$`` delimiters removed, ``；`` -> ``;``."""
    return _MATH_DOLLAR.sub("", s).replace("；", ";")


def is_equiv(prediction: str | None, gold: str) -> bool:
    """Whether two answers are equal after normalisation; an unparsed prediction never is."""
    if prediction is None:
        return False
    a, b = _unwrap(prediction), _unwrap(gold)
    try:
        return strip_string(a) == strip_string(b)
    except _Unnormalisable:
        return a == b


def last_boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` (else ``\\fbox{...}``), braces balanced; None if none closes."""
    start = text.rfind("\\boxed")
    if start < 0:
        start = text.rfind("\\fbox")
    if start < 0:
        return None
    depth, open_at = 0, None
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
            open_at = i if open_at is None else open_at
        elif text[i] == "}" and open_at is not None:
            depth -= 1
            if depth == 0:
                return text[open_at + 1 : i]
    return None


def extract_answer(response: str | None) -> str | None:
    """The final answer a reply gives (module docstring), or None when it gives none."""
    text = _THINK.sub("", response or "")
    boxed = last_boxed(text)
    if boxed is not None:
        return boxed.strip() or None
    lines = text.replace("**", "").split("\n")
    for i in range(len(lines) - 1, -1, -1):
        if _SPAN_MARKER.match(lines[i]):
            return extract_span("\n".join(lines[i:]))
    return None

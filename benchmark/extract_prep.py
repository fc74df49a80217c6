"""A raw response made ready for the extraction rules: reasoning dropped, markup and maths neutralised."""

from __future__ import annotations

import json
import re

from benchmark.extract_base import clean

# Reasoning blocks: <think>, <thinking>, <reasoning>, Kimi's ◁think▷.
_OPEN = re.compile(r"<(?:think|thinking|reasoning)>|◁think▷", re.IGNORECASE)
_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>|◁/think▷", re.IGNORECASE)
_BLOCK = re.compile(r"(?:<(think|thinking|reasoning)>.*?</\1>|◁think▷.*?◁/think▷)", re.IGNORECASE | re.DOTALL)
# Markup that carries no answer: HTML-ish formatting tags and GAOKAO's end-of-part tags.
_TAGS = re.compile(r"</?(?:sub|sup|span|br|p|div|b|i|u|em|strong|font|center)\b[^<>\n]{0,60}>", re.IGNORECASE)
_END_TAGS = re.compile(r"<(?:eoa|eoe|eos)>", re.IGNORECASE)
# Maths: $$..$$, \[..\], \(..\), and $..$ (not currency: "$70.83, $113.33" has no closing "$" before a space).
_MATH = re.compile(r"\$\$(.+?)\$\$|\\\[(.+?)\\\]|\\\((.+?)\\\)|\$(?=[^\s$])([^$\n]{1,300}?)(?<=\S)\$(?!\d)", re.DOTALL)
_BOXED = re.compile(r"\\boxed\s*\{")
_WRAP = re.compile(r"\\(?:text|textbf|mathrm|mathbf|mathit|textit|operatorname)\s*\{([^{}]*)\}")
# What maths may be unwrapped to: an option code, codes, or a code with its text ("$C. 4$").
_CODE_MATH = re.compile(r"\(?[A-Z]\)?|[A-Z](?:\s*[,、]\s*[A-Z])+|[A-Z]{2,5}|[A-Z]\s*[.:]\s*[^=<>]{1,60}")
MATH_MASK = " ⟨math⟩ "
MATH_LETTER = "\u2062"
BOXED_MARK = "\nFinal answer: "

_JSON_ANSWER = re.compile(r'"answer"\s*:\s*("(?:[^"\\]|\\.)*"|\[[^\]]*\])', re.IGNORECASE)


def prepare(response: str | None, finish_reason: str | None = None) -> str | None:
    """The text the rules read, or None when the response is unanswered (cut off inside reasoning)."""
    if not response:
        return ""
    text = response
    has_close = bool(_CLOSE.search(text))
    if finish_reason == "length" and not has_close:
        return None  # cut off while reasoning: nothing after it is an answer
    if _OPEN.search(text) or has_close:
        text = _BLOCK.sub("\n", text)
        if _OPEN.search(text):
            return None  # a reasoning block never closed
        close = None
        for close in _CLOSE.finditer(text):
            pass
        if close is not None:  # the chat template opened the block: drop the trace before its end
            text = text[close.end():]
    text = _END_TAGS.sub("\n", _TAGS.sub(" ", text))
    text = _latex(text)
    return clean(text)


def _latex(text: str) -> str:
    if "$" not in text and "\\" not in text:
        return text
    text = _MATH.sub(lambda m: _math(next(g for g in m.groups() if g is not None)), text)
    text = _boxed(text)
    return _WRAP.sub(r"\1", text)


def _math(body: str) -> str:
    if _BOXED.search(body):
        return _boxed(body)
    inner = _WRAP.sub(r"\1", body).replace("{", "").replace("}", "").strip()
    # MATH_LETTER marks the unwrapped code: a head may read it ("答案为$C$"), free prose may not ("$B$ 为其补集").
    return f" {MATH_LETTER}{inner} " if _CODE_MATH.fullmatch(inner) else MATH_MASK


def _boxed(text: str) -> str:
    """Each \\boxed{X} becomes an answer marker line "Final answer: X" (braces balanced)."""
    out, pos = [], 0
    for m in _BOXED.finditer(text):
        if m.start() < pos:
            continue
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        inner = _WRAP.sub(r"\1", text[m.end():j - 1])
        out.append(text[pos:m.start()] + BOXED_MARK + inner.replace("{", "").replace("}", "").strip() + "\n")
        pos = j
    return "".join(out) + text[pos:]


def json_answer(text: str) -> str | list[str] | None:
    """The "answer" value of a JSON object response (str or list of str), else None."""
    body = text[4:].lstrip() if text[:4].lower() == "json" else text  # a ```json fence, backticks already gone
    if not (body.startswith("{") and body.rstrip().endswith("}")):
        return None
    try:
        doc = json.loads(body)
    except ValueError:
        m = _JSON_ANSWER.search(body)  # e.g. a JSON object with an unescaped quote in its reasoning field
        if not m:
            return None
        try:
            doc = {"answer": json.loads(m[1])}
        except ValueError:
            return None
    if not isinstance(doc, dict):
        return None
    values = [v for k, v in doc.items() if k.casefold() == "answer"]
    if len(values) != 1:
        return None
    value = values[0]
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return None

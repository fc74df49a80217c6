"""A raw response made ready for the extraction rules: reasoning dropped, markup and maths neutralised."""

from __future__ import annotations

import json
import re

from benchmark.extract.base import LINE_WINDOW, clean
from benchmark.extract.latex import latex

# Reasoning blocks: <think>, <thinking>, <reasoning>, Kimi's ◁think▷.
_OPEN = re.compile(r"<(?:think|thinking|reasoning)>|◁think▷", re.IGNORECASE)
_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>|◁/think▷", re.IGNORECASE)
_BLOCK = re.compile(r"(?:<(think|thinking|reasoning)>.*?</\1>|◁think▷.*?◁/think▷)", re.IGNORECASE | re.DOTALL)
# Markup that carries no answer: HTML-ish formatting tags and GAOKAO's end-of-part tags.
_TAGS = re.compile(r"</?(?:sub|sup|span|br|p|div|b|i|u|em|strong|font|center)\b[^<>\n]{0,60}>", re.IGNORECASE)
_END_TAGS = re.compile(r"<(?:eoa|eoe|eos)>", re.IGNORECASE)
# Characters of a long answer read (after its reasoning is dropped): 8 times the longest answer of
# the development set, so a real answer is read whole; the rules' time grows with it.
READ_LIMIT = 32_768
CUT_MARK = "[...]\n\n"

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
    text = _END_TAGS.sub("\n", _TAGS.sub(" ", tail(text)))
    text = latex(text)
    return clean(text)


def tail(text: str) -> str:
    """A very long answer's end, where conclusions live: its last READ_LIMIT characters, from a line
    start when one is near, after a paragraph that stands for the cut (so no rule takes the first line
    read for the answer's first line). Shorter answers are read whole."""
    if len(text) <= READ_LIMIT:
        return text
    start = len(text) - READ_LIMIT
    nl = text.find("\n", start, start + LINE_WINDOW)
    if nl >= 0:
        start = nl + 1
    else:  # inside one long line: from the next space, never inside a word
        space = text.find(" ", start, start + LINE_WINDOW)
        start = space + 1 if space >= 0 else start
    return CUT_MARK + text[start:]


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

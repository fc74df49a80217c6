"""Which part of a prepared response the rules read: nothing of a degenerate loop, and only the answer
given before a continuation the model invented (a base model writing the prompt's pattern on)."""

from __future__ import annotations

import re

from benchmark.extract.base import Choices
from benchmark.extract.claims import claims, decide

_I = re.IGNORECASE

# A degenerate loop: the response ends in one short piece repeated, naming two or more options
# ("A、B、C、D中，A、B、C、D中，..."). Read at the end only, where generation ran away.
_LOOP_UNIT_MAX = 60
_LOOP_REPEATS = 3
_LOOP_MIN_CHARS = 24
_LOOP_PROBE = 8
_CODE_TOKEN = re.compile(r"(?<![A-Za-z])[A-Z]{1,5}(?![A-Za-z])")

# Where an invented continuation starts: a new question or its options, or a summary of the answers
# of several questions. Each on its own line, so a sentence mentioning a question is no start.
_NEW_QUESTION = re.compile(
    r"^[ \t>#*]*(?:(?:question|problem)\s*\d*\s*[:：]|q\d+\s*[:：]|"
    # "Q:" opens a new question only when options follow it (a self-check "Q: is A right?" has none)
    r"q\s*[:：](?=[^\n]*\n(?:[^\n]*\n){0,8}?[ \t]*(?:\(A\)|A[.)]|options|choices))|(?:options|choices)\s*[:：]\s*$|"
    r"(?:问题|题目|试题|例题)\s*\d*\s*[:：]|[【\[]题目[】\]])", _I | re.M)
_SUMMARY = re.compile(
    r"\b(?:let'?s|let\s+us|now)\b[^.\n]{0,40}?\b(?:combine|summari[sz]e|list|collect|compile|recap)\b[^.\n]{0,30}?"
    r"\b(?:all\s+)?(?:the\s+)?answers\b|\banswers\s+(?:to|for|of)\s+(?:all|each\s+of|the\s+(?:above|previous|other))\s+questions\b|"
    r"(?:总结|汇总|整理|列出|回顾)[^。\n]{0,10}?(?:以上|所有|全部|上述|前面)[^。\n]{0,6}?(?:问题|题目|各题)", _I)
# Three lines led by A, B, C in order, short and without a verdict: a list of options, not a walk.
_OPTION_BLOCK = re.compile(r"^[ \t]*\(?A\s*[.)、:][^\n]{0,120}\n(?:[ \t]*\n)*[ \t]*\(?B\s*[.)、:][^\n]{0,120}\n"
                           r"(?:[ \t]*\n)*[ \t]*\(?C\s*[.)、:][^\n]{0,120}", re.M)
_LINE_CODE = re.compile(r"[ \t]*\(?([ABC])\s*[.)、:]")
_SHORTEST_CONTINUATION = 40  # an answer and a summary of several questions' answers take more
_VERDICT = re.compile(r"\b(?:correct|incorrect|wrong|true|false|right|because|since|not)\b|正确|错误|对|错|因为|不", _I)


def ends_in_loop(text: str, ch: Choices) -> bool:
    """The response ends in a piece of at most 60 characters repeated 3 times or more (24 characters
    at least) that names two or more options: degenerate output, no answer."""
    if len(text) < _LOOP_MIN_CHARS:
        return False
    tail = text[-(_LOOP_UNIT_MAX * _LOOP_REPEATS + _LOOP_MIN_CHARS):]
    span = tail[-(_LOOP_UNIT_MAX + _LOOP_PROBE):]
    probe = span[-_LOOP_PROBE:]
    end = len(span) - _LOOP_PROBE
    at = span.rfind(probe, 0, end + _LOOP_PROBE - 1)  # the probe's previous occurrence: one period back
    while at >= 0:
        period = end - at
        region = max(_LOOP_REPEATS * period, _LOOP_MIN_CHARS)
        if region <= len(tail) and tail[-region:-period] == tail[-region + period:]:
            return _names_two_options(tail[-period:], ch)
        at = span.rfind(probe, 0, at + _LOOP_PROBE - 1)
    return False


def _names_two_options(piece: str, ch: Choices) -> bool:
    codes = {c for token in _CODE_TOKEN.findall(piece) if all(ch.code(c) is not None for c in token) for c in token}
    return len(codes) >= 2


def before_continuation(text: str, ch: Choices, multi: bool) -> str:
    """The text up to an invented continuation (a new question, an options list, a summary of several
    questions' answers) when an answer is given before it; else the whole text."""
    start = _continuation_start(text, ch)
    if start <= 0:
        return text
    head = text[:start]
    return head if isinstance(decide(claims(head, ch, multi=multi), head), frozenset) else text


def _continuation_start(text: str, ch: Choices) -> int:
    if "\n" not in text:
        m = _SUMMARY.search(text) if len(text) > _SHORTEST_CONTINUATION else None
        return m.start() if m else -1
    found = [m.start() for m in (_NEW_QUESTION.search(text), _SUMMARY.search(text)) if m]
    for m in _OPTION_BLOCK.finditer(text):
        if not _VERDICT.search(m[0]) and not _restates_own_options(m[0], ch):
            found.append(m.start())
            break
    return min(found, default=-1)


def _restates_own_options(block: str, ch: Choices) -> bool:
    """Every line of the block is its code and that option's own text: the question's options echoed
    (the rules read an echo as no claim), not options the model invented."""
    for line in block.split("\n"):
        m = _LINE_CODE.match(line)
        k = ch.code(m[1]) if m else None
        if m and (k is None or not ch.agrees(k, line[m.end():])):
            return False
    return True

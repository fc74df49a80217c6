"""Strict answer extraction for choice questions: read what the model claimed, never guess.

Before any rule: full-width forms are folded (NFKC), markdown ``*``/backticks
removed, and a ``<think>...</think>`` reasoning block dropped. A response that is
a JSON object ``{"answer": ...}`` (what a model held to a JSON schema returns,
and what many models write unasked) is read as its answer value alone; a list
there in a single-answer question claims several options -> None.

Single answer, rules in order (the first that yields something decides):

1. the whole (one-line) response is one option: its code ("B", "(B)", "B.",
   "**B**", lower case allowed), its exact text, or code plus text ("B. Negative");
2. answer markers ("Answer: B", "The answer is (B)", "答案：B", "答案是B"):
   what follows each marker (a code, or an option's text; a code no option has,
   such as an echoed "`Answer: X`", is skipped); markers that disagree, or
   that disagree with a first line read as in rule 1 -> None;
3. the first line alone, read as in rule 1 ("B\n\nbecause ...");
4. free text: every stand-alone capital option letter is a claim, except "A"/"I"
   used as an article or pronoun ("I think B" -> B, "A good point" is not A) and
   negated mentions ("not A"); exactly one distinct claim -> it, else None.

Numbered options (more than 26) are read by rules 1-3 only: bare numbers in
prose are too often counts. A lone code that names no option ("E" with four
options) -> None. Letters glued to Chinese text still stand alone ("选B").
The reference instead takes the first stand-alone letter anywhere ("I think B"
-> "I") and cannot produce lower-case codes.

Multiple answers: the rest of an answer marker's line (or the lines below it
when it ends the line), else the first paragraph or the first line; split on
, ; / 、 (full-width too), then "and"/和/及/与/&, then spaces; every piece must be
an option code or an option's exact text, else the response is unparseable
(None). Markers giving different lists -> None.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Sequence

# Bump when any rule below changes: it is part of every choice dataset's scorer_version.
EXTRACT_VERSION = "2"  # 2: JSON {"answer": ...} responses

_NOMATCH = -1  # this rule says nothing; try the next
_BAD = -2  # the response claims something unusable (two options, or a code no option has)

_STRIP_MARKS = str.maketrans({"*": None, "`": None, "\u200b": None, "\ufeff": None})
_DECOR = " \t\r\n\"'“”‘’「」『』()[]【】<>《》.。,:;!?_~-—•"
_LEAD = " \t\r\n\"'“”‘’「」『』([【<《:=_~-•"

_MARKER = re.compile(
    r"(?:\banswers?(?![a-z])(?:\s*(?:is|would\s+be|should\s+be))?|答案\s*(?:应该是|應為|应为|是|为|為)?)\s*[:=]?",
    re.I,
)
_OPTION_WORD = re.compile(r"(?:option|choice|选项|選項)\s*", re.I)
_LEAD_CODE = re.compile(r"([A-Za-z]|\d{1,3})(?![A-Za-z0-9])")
_CODE_THEN_TEXT = re.compile(r"\(?([A-Za-z]|\d{1,3})\s*[.)\]:、]\s*(\S[^\n]*)")  # one line only
_FREE_LETTER = re.compile(r"(?<![A-Za-z0-9'’])([A-Z])(?![A-Za-z0-9'’])")
_REASONING = re.compile(r"<think>.*?</think>", re.S | re.I)
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_NEXT_WORD = re.compile(r"\s+([a-z]+)")
_NEGATED = re.compile(r"(?:\bnot|n't|不是|并非|並非|非)\s*(?:option\s*|选项\s*)?[(\[]?\s*$", re.I)
_PUNCT_SPLIT = re.compile(r"[,;/|、]")
_WORD_SPLIT = re.compile(r"\s+and\s+|\s*(?:和|以及|及|与|&)\s*", re.I)
_SPACE_SPLIT = re.compile(r"\s+")
# After a capital A or I, these words mean the letter is an option being talked about
# ("A is correct", "A or B"), not the article "A" or the pronoun "I".
_CLAIM_WORDS = frozenset(
    "is was or and nor vs versus because since as seems would fits matches best looks appears".split()
)


def clean(text: str) -> str:
    """Full-width forms folded (NFKC), markdown emphasis/code marks removed, trimmed."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return text.translate(_STRIP_MARKS).strip()


def _response(text: str | None) -> str:
    """A response ready for the rules: cleaned, and without a reasoning block (<think>...</think>)."""
    if not text:
        return ""
    text = clean(text)
    if "<think>" in text.lower():
        text = _REASONING.sub("", text).strip()
    return text


def _json_answer(text: str) -> str | list[str] | None:
    """The value of a JSON object response ``{"answer": ...}`` (str or list of str), else None."""
    body = text[4:].lstrip() if text[:4].lower() == "json" else text  # a ```json fence, backticks already gone
    if not (body.startswith("{") and body.endswith("}")):
        return None
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    if not isinstance(doc, dict) or len(doc) != 1:
        return None
    (key, value), = doc.items()
    if key.casefold() != "answer":
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return None


def fold(text: str) -> str:
    """Comparison form of an option text or a response fragment."""
    return " ".join(clean(text).strip(_DECOR).casefold().split())


def codes_for(n: int) -> tuple[str, ...]:
    """Option codes: letters A.. for up to 26 options, else numbers 1.. (never lower-case letters)."""
    if n <= 26:
        return tuple(chr(65 + i) for i in range(n))
    return tuple(str(i + 1) for i in range(n))


class Choices:
    """The options of one question, indexed for extraction."""

    __slots__ = ("codes", "numeric", "_by_code", "_by_text", "_texts_longest_first")

    def __init__(self, texts: Sequence[str]):
        self.codes = codes_for(len(texts))
        self.numeric = len(texts) > 26
        self._by_code = {c: i for i, c in enumerate(self.codes)}
        by_text: dict[str, int] = {}
        for i, t in enumerate(texts):
            k = fold(t)
            if k:
                by_text[k] = _BAD if k in by_text else i  # two options with one text name neither
        self._by_text = by_text
        self._texts_longest_first = sorted(((k, i) for k, i in by_text.items() if i >= 0), key=lambda t: -len(t[0]))

    def code(self, token: str) -> int | None:
        return self._by_code.get(token.upper())

    def text(self, fragment: str) -> int | None:
        return self._by_text.get(fold(fragment))

    def lookup(self, token: str) -> int | None:
        i = self.code(token)
        return i if i is not None else self.text(token)

    def text_prefix(self, fragment: str) -> int:
        f = fold(fragment)
        for k, i in self._texts_longest_first:
            if f.startswith(k) and (len(f) == len(k) or not f[len(k)].isalnum()):
                return i
        return _NOMATCH


# ---------------------------------------------------------------- single answer


def extract_single(response: str | None, choices: Choices, *, finish_reason: str | None = None) -> int | None:
    """Index of the one option the response claims, or None."""
    text = _response(response)
    if not text:
        return None
    value = _json_answer(text)
    if value is not None:
        if isinstance(value, list):
            if len(value) != 1:
                return None
            value = value[0]
        r = _whole(value, choices)
        return r if r >= 0 else None
    r = _whole(text, choices)
    if r == _NOMATCH:
        r = _after_markers(text, choices)
        if "\n" in text:
            first = _first_line(text, choices)
            if r == _NOMATCH:
                r = first
            elif r >= 0 and first >= 0 and first != r:
                r = _BAD  # "B\n... the answer is A"
    if r == _NOMATCH and not choices.numeric:
        r = _free_text(text, choices)
    return r if r >= 0 else None


def _whole(text: str, ch: Choices) -> int:
    t = text.strip(_DECOR)
    if not t:
        return _NOMATCH
    i = ch.text(t)
    if i is not None:
        return i
    if (t.isdigit() and len(t) <= 3) if ch.numeric else (len(t) == 1 and t.isalpha()):
        i = ch.code(t)
        return _BAD if i is None else i
    m = _CODE_THEN_TEXT.fullmatch(text.strip())
    if m:
        i = ch.code(m[1])
        if i is None:
            return _NOMATCH
        j = ch.text(m[2])
        # "B. <text of option A>" claims two different options.
        return i if j is None or j == i else _BAD
    return _NOMATCH


def _first_line(text: str, ch: Choices) -> int:
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    r = _whole(lines[0], ch)
    if r >= 0:
        # "A. ...\nB. ..." lists the options instead of choosing one.
        listed = {ch.code(m[1]) for line in lines[1:] if (m := _CODE_THEN_TEXT.match(line))}
        if listed - {None, r}:
            return _BAD
    return r


def _lead(segment: str, ch: Choices) -> int:
    """Read the option a marker's following text starts with."""
    s = segment.lstrip(_LEAD)
    w = _OPTION_WORD.match(s)
    if w:
        s = s[w.end():]
    m = _LEAD_CODE.match(s)
    if m:
        tok = m[1]
        if tok.isdigit() == ch.numeric and not _is_word(tok, s, m.end()):
            # A code no option has is ignored, not fatal: it is often the format
            # sentence echoed back ("in the form `Answer: X`").
            i = ch.code(tok)
            return _NOMATCH if i is None else i
    return ch.text_prefix(s.split("\n", 1)[0])


def _is_word(tok: str, s: str, end: int) -> bool:
    """A letter followed by a lower-case word is English ("a good", "I think"), not a code."""
    if tok.isdigit() or not (tok.islower() or tok in "AI"):
        return False
    w = _NEXT_WORD.match(s, end)
    return bool(w) and w[1] not in _CLAIM_WORDS


def _after_markers(text: str, ch: Choices) -> int:
    found = {_lead(text[m.end():], ch) for m in _MARKER.finditer(text)}
    found.discard(_NOMATCH)
    if not found:
        return _NOMATCH
    if _BAD in found or len(found) > 1:
        return _BAD
    return found.pop()


def _free_text(text: str, ch: Choices) -> int:
    claims = set()
    for m in _FREE_LETTER.finditer(text):
        i = ch.code(m[1])
        if i is None or _is_word(m[1], text, m.end()):
            continue
        if _NEGATED.search(text, max(0, m.start() - 12), m.start()):
            continue
        claims.add(i)
    if len(claims) == 1:
        return claims.pop()
    return _BAD if claims else _NOMATCH


# ---------------------------------------------------------------- several answers


def extract_multi(response: str | None, choices: Choices, *,
                  finish_reason: str | None = None) -> frozenset[int] | None:
    """Indices of every option the response lists, or None when any piece is not an option."""
    text = _response(response)
    if not text:
        return None
    value = _json_answer(text)
    if value is not None:
        pieces = value if isinstance(value, list) else _PUNCT_SPLIT.split(value)
        out: set[int] = set()
        for piece in pieces:
            i = choices.lookup(piece.strip(_DECOR))
            if i is None or i < 0:
                return None
            out.add(i)
        return frozenset(out) if out else None
    parsed = {p for p in (_after_marker(text[m.end():], choices) for m in _MARKER.finditer(text)) if p is not None}
    if not parsed:
        # No usable marker: a bare list, on one line or one item per line.
        para = _paragraph(text)
        first = text.split("\n", 1)[0]
        for block in (para, first) if para != first else (para,):
            p = _list(block.replace("\n", ","), choices)
            if p is not None:
                return p
    return parsed.pop() if len(parsed) == 1 else None


def _after_marker(after: str, ch: Choices) -> frozenset[int] | None:
    """The rest of the marker's line, or, when that is empty, the list on the next lines."""
    line, _, rest = after.partition("\n")
    if line.strip(_DECOR):
        return _list(line, ch)
    return _list(_paragraph(rest).replace("\n", ","), ch)


def _paragraph(text: str) -> str:
    return _PARAGRAPH_BREAK.split(text.strip(), maxsplit=1)[0]


def _list(segment: str, ch: Choices) -> frozenset[int] | None:
    s = segment.strip(_DECOR)
    if not s:
        return None
    out: set[int] = set()
    for piece in _PUNCT_SPLIT.split(s):
        idx = _pieces(piece, ch)
        if idx is None:
            return None
        out.update(idx)
    return frozenset(out) if out else None


def _pieces(piece: str, ch: Choices) -> list[int] | None:
    """Options named by one separator-free piece: whole, else split on "and", else on spaces."""
    piece = piece.strip(_DECOR)
    if not piece:
        return []
    i = ch.lookup(piece)
    if i is not None:
        return [i] if i >= 0 else None
    for splitter in (_WORD_SPLIT, _SPACE_SPLIT):
        parts = [p.strip(_DECOR) for p in splitter.split(piece)]
        parts = [p for p in parts if p]
        if len(parts) > 1:
            idx = []
            for p in parts:
                j = ch.lookup(p)
                if j is None or j < 0:
                    break  # prose, not a list: stop at the first word that is no option
                idx.append(j)
            else:
                return idx
    return None

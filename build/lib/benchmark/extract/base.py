"""The options of one question, indexed for answer extraction (codes, texts, comparison forms)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from difflib import SequenceMatcher

from benchmark.extract.latex import latex

NOMATCH = -1  # this rule says nothing; try the next
BAD = -2  # the response claims something unusable (several options, or a code no option has)

_STRIP_MARKS = ("*", "`", "\u200b", "\ufeff")
_NUMBER = re.compile(r"[$€£¥]?\s*(-?\d[\d,]*(?:\.\d+)?)(?!\d|\.\d)")
SPACES = re.compile(r"\s*")  # a run of white space, possibly empty
_LOOSE_NEEDED = re.compile(r"[\s\d\-\\]")  # what loose() may change
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_TRAILING_ZEROS = re.compile(r"(?<=\d)\.(\d*?)0+(?!\d)")
_LOOSE_DROP = re.compile(r"\s+|(?<=[^\W\d])-(?=[^\W\d])")
DECOR = " \t\r\n\"'“”‘’「」『』()[]【】<>《》.。,:;!?_~-—•"
# How far a rule reads along one line from a place in it: longer than any line of a real answer
# (the development set's longest is 1,310 characters), short enough that reading a reference
# costs the same on a 64 KB single line as on a short answer.
LINE_WINDOW = 4000


def clean(text: str) -> str:
    """Full-width forms folded (NFKC), markdown emphasis/code marks removed, trimmed."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    for mark in _STRIP_MARKS:  # str.replace: str.translate is slow on long non-ASCII text
        if mark in text:
            text = text.replace(mark, "")
    return text.strip()


def fold(text: str) -> str:
    """Comparison form of an option text or a response fragment."""
    return " ".join(clean(text).strip(DECOR).casefold().split())


def loose(folded: str) -> str:
    """A folded text without spacing, hyphens between words, thousands separators and trailing zeros:
    "0.330 %" and "0.33%", "half-full" and "half full", "1,000" and "1000" are one text."""
    s = _THOUSANDS.sub("", folded.replace("\\%", "%"))
    s = _TRAILING_ZEROS.sub(lambda m: "." + m[1] if m[1] else "", s)
    return _LOOSE_DROP.sub("", s)


def match_end(m: re.Match[str] | None, pos: int) -> int:
    """Where a match of a pattern that matches the empty string ends (never None; pos for the type checker)."""
    return m.end() if m else pos


def line_end(text: str, pos: int, limit: int = LINE_WINDOW) -> int:
    """Where the line holding pos ends, or pos + limit when that comes first."""
    stop = min(len(text), pos + limit)
    end = text.find("\n", pos, stop)
    return stop if end < 0 else end


def rest_of_line(text: str, pos: int, limit: int = LINE_WINDOW) -> str:
    """The line holding pos from pos on (at most limit characters)."""
    return text[pos:line_end(text, pos, limit)]


def codes_for(n: int) -> tuple[str, ...]:
    """Option codes: letters A.. for up to 26 options, else numbers 1.. (never lower-case letters)."""
    if n <= 26:
        return tuple(chr(65 + i) for i in range(n))
    return tuple(str(i + 1) for i in range(n))


class Choices:
    """The options of one question, indexed for extraction."""

    __slots__ = ("_by_code", "_by_loose", "_by_text", "_loose_longest_first", "_texts_longest_first", "codes", "folded", "numeric", "span")

    def __init__(self, texts: Sequence[str]):
        self.codes = codes_for(len(texts))
        self.numeric = len(texts) > 26
        self._by_code = {c: i for i, c in enumerate(self.codes)}
        self.folded = tuple(fold(latex(t)) for t in texts)  # maths as a response's maths is read
        by_text: dict[str, int] = {}
        for i, k in enumerate(self.folded):
            if k:
                by_text[k] = BAD if k in by_text else i  # two options with one text name neither
        self._by_text = by_text
        by_loose: dict[str, int] = {}
        for k, i in by_text.items():
            key = loose(k)
            by_loose[key] = BAD if key in by_loose else i
        self._by_loose = by_loose
        self._loose_longest_first = sorted(((k, i) for k, i in by_loose.items() if i >= 0), key=lambda t: -len(t[0]))
        # How much text after a code is compared with the option texts: enough for any of them restated.
        self.span = 2 * max(map(len, self.folded), default=0) + 40
        self._texts_longest_first = sorted(((k, i) for k, i in by_text.items() if i >= 0), key=lambda t: -len(t[0]))

    def code(self, token: str) -> int | None:
        return self._by_code.get(token.upper())

    def text(self, fragment: str) -> int | None:
        """The option whose whole text the fragment is (spacing, case, number formatting aside)."""
        f = fold(fragment)
        i = self._by_text.get(f)
        return i if i is not None or not _LOOSE_NEEDED.search(f) else self._by_loose.get(loose(f))

    def lookup(self, token: str) -> int | None:
        i = self.code(token)
        return i if i is not None else self.text(token)

    def text_prefix(self, fragment: str) -> int:
        """The option whose whole text starts the fragment (longest first), else NOMATCH."""
        f = fold(fragment)
        for k, i in self._texts_longest_first:
            if f.startswith(k) and (len(f) == len(k) or not f[len(k)].isalnum()):
                return i
        lf = loose(f)  # "P → 2; Q → 4" starts with the text "P→2; Q→4"
        for k, i in self._loose_longest_first:
            if lf.startswith(k) and (len(lf) == len(k) or not lf[len(k)].isalnum()):
                return i
        return NOMATCH

    def agrees(self, i: int, fragment: str) -> bool:
        """The fragment restates option i's text (whole, cut short, or with small differences)."""
        t, f = self.folded[i], fold(fragment)
        if not t or not f:
            return False
        if f == t or (f.startswith(t) and len(f) - len(t) <= 3) or (len(f) >= 4 and t.startswith(f)):
            return True
        # small differences only: a restated text, not a sentence built around it
        return len(f) >= 4 and len(f) <= 1.2 * len(t) + 4 and SequenceMatcher(None, f, t).ratio() >= 0.8

    def contradicts(self, i: int, fragment: str) -> bool:
        """The fragment after code i is the text of another option ("A. <text of F>"), or starts with
        another number than option i's text does ("(C) 42" when C is 36)."""
        got, own = _NUMBER.match(fragment.strip()), _NUMBER.match(self.folded[i])
        if got and own and float(got[1].replace(",", "")) != float(own[1].replace(",", "")):
            return True
        j = self.text_prefix(fragment)
        if j < 0 or j == i:
            return False
        f = fold(fragment)
        if self.folded[i] and f.startswith(self.folded[i]):
            return False
        return SequenceMatcher(None, f, self.folded[j]).ratio() > SequenceMatcher(None, f, self.folded[i]).ratio()

"""Reading the option(s) a response names at one place: "(b)", "B", "选项B", "B项", "ACD", "A、C and D".

A read yields a frozenset of option indices, BAD (a code no option has, a code followed by
another option's text) or NOMATCH (no option named there: a word, a maths variable, a
negated mention such as "B is wrong").
"""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache

from benchmark.extract.base import (
    BAD, DECOR, LINE_WINDOW, NOMATCH, SPACES,
    Choices, fold, line_end, match_end, rest_of_line,
)
from benchmark.extract.cues import NEGATION

Read = tuple[frozenset | int, int]  # (options or BAD/NOMATCH, end offset)

_REF = re.compile(
    r"(?P<word>(?:the\s+)?(?:options?|choices?|letters?|statements?)\s*|选项\s*|選項\s*)?"
    r"(?:\(\s*(?P<p>[A-Za-z]|\d{1,3})\s*\)|\[(?P<b>[A-Za-z]|\d{1,3})\]"
    r"|(?P<run>[A-Z]{2,5})(?![A-Za-z0-9'’])|(?P<c>[A-Za-z]|\d{1,3})(?![A-Za-z0-9'’]))"
    r"(?:\s*(?:选项|選項|项|項))?",
    re.IGNORECASE,
)
# Skipped before a reference: spaces, punctuation, closing brackets, emoji and other symbols.
_LEAD = re.compile(r"[\s:=\-—>»#\]】)'\"“”‘’「」『』,.。…·•~_|⟩\u2060-\u206f\u2600-\u27bf\ufe0f\u200d\ufffd"
                   r"\U0001F000-\U0001FFFF]*")
_LOWER_END = re.compile(r"\s*(?:[.)\]:;!]|$|\n)")
_SENTENCE_END = re.compile(r"。|(?<!\.)\.(?!\.)")
_SEP = re.compile(r"[\s.:)\]、\-—\"“”'‘’「」]*")
_QUOTES = "\"“”'‘’「」『』 )]"  # closing marks after a restated text: "(b) \"text\"", "Option A (Lyon)"
# After a letter, what makes it a maths variable ("A = 5", "P(A)") or a key of a matching ("P → 2", "Q-4").
_MATH_AFTER = re.compile(r"\s*[=<>+^_*≤≥≠∈∪∩→⟶⇒↔⟹➝➔]|\s*-+>|\s*-\s*(?=\d)|\((?=[A-Za-z0-9 ,.+\-*/^_]{1,12}\))|\s*\\")
# Codes joined by spaces stay on one line: "Answer: B\n\nA. apple\nB. ..." is an answer, then an echo.
_JOIN = re.compile(r"[ \t]*(?=\(\s*[A-Za-z]\s*\))|[ \t]+(?=[A-Z](?:$|[^A-Za-z0-9'’]))|\s*[\"”’']?\s*(?:,\s*(?:and|or)\s+|,|、|/|&|;|\band\b|\bor\b|以及|和|与|及|或者|或|还是|跟)\s*"
                   r"(?:(?:the\s+)?(?:options?|choices?)\s*|选项\s*)?[\"“‘']?", re.IGNORECASE)
# Another parenthesised option joined to the first within the clause: "(b) Fear and (f) Pride".
_PAREN_JOIN = re.compile(r"[^.。;!?\n]{0,60}?(?:\band\b|\bor\b|以及|和|与|及|或|、|,)\s*(?:option\s*|选项\s*)?"
                         r"\(\s*([A-Za-z])\s*\)", re.IGNORECASE)
NEGATED_AFTER = re.compile(
    r"\s*(?:is|are|was|were|seems|would\s+be|should\s+be|can\s+be)?\s*(?:also\s+)?(?:not\b|incorrect|wrong|"
    r"false|invalid|eliminated|ruled\s+out|unlikely|inappropriate|less\b)"
    r"|\s*(?:是|为|也|就|都)?\s*(?:错误|不正确|不对|错的|错|不符合|不合理|不是|排除|不可能|不恰当|不妥|有误|不选)",
    re.IGNORECASE,
)
# After "A" or "I", these words mean the letter is an option talked about ("A is correct"), not a word.
CLAIM_WORDS = frozenset(
    ["is", "was", "or", "and", "nor", "vs", "versus", "because", "since", "as", "seems", "would", "fits", "matches", "best", "looks", "appears"]
)
_NEXT_WORD = re.compile(r"\s+([a-z]+)")
CODE_LED = re.compile(r"\s*(?:[-•]\s+)?(?:\(\s*([A-Za-z])\s*\)|([A-Za-z])\s*[.):、](?!\d))")
_INLINE_LED = re.compile(r"(?:^|[;；。.,，\s])\(?([A-Z])[.)、](?!\d)")
_ONLY_DECOR = re.compile(f"[{re.escape(DECOR)}]*")
_OTHER_CODE = re.compile(r"\(\s*([A-Za-z])\s*\)|(?<![A-Za-z0-9\\'’])([A-Z])(?![A-Za-z0-9'’])|选项\s*([A-Za-z])")


def is_word(tok: str, s: str, end: int) -> bool:
    """A letter followed by a lower-case word is English ("a good", "I think"), not a code."""
    if tok.isdigit() or not (tok.islower() or tok in "AI"):
        return False
    w = _NEXT_WORD.match(s, end)
    return w is not None and w[1] not in CLAIM_WORDS


def lead_skip(text: str, pos: int) -> int:
    """Past the punctuation before a reference, but never past the end of a sentence ("答案。选项B")."""
    end = match_end(_LEAD.match(text, pos), pos)
    stop = _SENTENCE_END.search(text, pos, end)
    return stop.start() if stop else end


def one_ref(text: str, pos: int, ch: Choices, runs: bool = True) -> Read:
    """The option(s) named exactly at pos (no leading skip), with its text consumed when restated.
    runs: whether letters run together ("ACD") may be codes; elsewhere they are a name ("AB" a segment)."""
    m = _REF.match(text, pos)
    if not m:
        return NOMATCH, pos
    if m["run"]:
        if ch.numeric or not runs or not m["run"].isupper():
            return NOMATCH, pos
        letters = m["run"]
        idx = [ch.code(c) for c in letters]
        if None in idx or list(letters) != sorted(set(letters)):
            return NOMATCH, pos  # an upper-case word, not a run of codes ("ACD")
        return frozenset(idx), m.end()
    tok = m["p"] or m["b"] or m["c"]
    if tok.isdigit() != ch.numeric:
        return NOMATCH, pos
    bare = m["c"] is not None
    if bare:
        if _MATH_AFTER.match(text, m.end()) or (pos and text[pos - 1] in "\\_^"):
            return NOMATCH, pos  # a maths variable: "A = 5", "P(A)", "x_1"
        if not m["word"] and is_word(tok, text, m.end()):
            return NOMATCH, pos
        if tok.islower() and not m["word"] and not _LOWER_END.match(text, m.end()):
            return NOMATCH, pos  # "最大的是c," is a variable; a bare lower-case code ends its phrase: "is b."
    i = ch.code(tok)
    if i is None:
        # An unknown lower-case letter is a word; "X" is the format's placeholder ("Answer: X").
        return (NOMATCH if (bare and tok.islower()) or tok == "X" else BAD), pos
    return _consume_text(text, m.end(), i, ch)


def _consume_text(text: str, end: int, i: int, ch: Choices) -> Read:
    """Skip the option's own text after its code; another option's text there contradicts the code."""
    t = ch.folded[i]
    s = match_end(_SEP.match(text, end), end)
    if t:
        span = text[s:s + len(t) + 4]
        if fold(span[:len(t)]) == t:
            e = s + len(t)
            while e < len(text) and text[e] in _QUOTES:
                e += 1
            return frozenset((i,)), e
    rest = rest_of_line(text, s, ch.span)
    if rest and ch.contradicts(i, rest):
        return BAD, line_end(text, s)
    return frozenset((i,)), end


def read_claim(text: str, pos: int, ch: Choices, skip: bool = True, runs: bool = True) -> Read:
    """The option list that starts at pos (after skipping punctuation): one option or several."""
    p = lead_skip(text, pos) if skip else pos
    got, end = one_ref(text, p, ch, runs)
    if not isinstance(got, frozenset):
        return got, end
    picked = set(got)
    with_text = _has_text(text, p, end)
    while True:
        j = _JOIN.match(text, end)
        if not j:
            break
        nxt, e = one_ref(text, j.end(), ch, runs)
        if nxt == BAD:
            return BAD, e
        if not isinstance(nxt, frozenset) or NEGATED_AFTER.match(text, e):
            break  # "B, and A is wrong": the list ends before the negated option
        picked |= nxt
        with_text = with_text and _has_text(text, j.end(), e)
        end = e
    if with_text and len(picked) == len(ch.codes) > 2:
        return NOMATCH, end  # "A. iron B. copper C. ..." echoes the options
    # Further options in the clause, each after its own text: "(A) x = 2, (B) y = 3, and (C) z = 4".
    while (pj := _PAREN_JOIN.match(text, end)) and (k := ch.code(pj[1])) is not None:
        if NEGATED_AFTER.match(text, pj.end()) or NEGATION.search(pj[0]):
            break  # "(A), not (B) or (C)"
        picked.add(k)
        end = pj.end()
    if NEGATED_AFTER.match(text, end):
        return NOMATCH, end
    listed = _listed_lines(text, p, end, ch)
    if listed is not None:
        return listed, end
    if len(picked) == 1 and _walks_inline(text, p, ch):
        return NOMATCH, end
    return frozenset(picked), end


def _has_text(text: str, start: int, end: int) -> bool:
    m = _REF.match(text, start)
    return m is not None and end > m.end()


def _walks_inline(text: str, start: int, ch: Choices, end: int | None = None) -> bool:
    """"A. ...正确; B. ...正确; C. ...错误" on one line walks through the options: no claim. The items
    after start count (a claim may follow an analysis: "A．铁错误；B．铜错误；故选C．锌"); given the
    end of the reference, those before it too, outside start..end (a verdict inside the walk,
    "...; C. ...正确", is part of it; the list "(A), (B) and (D) are correct" is no walk)."""
    if ch.numeric or not CODE_LED.match(text, start):
        return False
    ls = text.rfind("\n", 0, start) + 1
    at, after, before = _inline_codes(text, ls, line_end(text, ls, len(text)))
    k = bisect_left(at, start + 2 if end is None else end)
    codes = after[k] if k < len(at) else 0
    if end is not None and (j := bisect_left(at, start)):
        codes |= before[j - 1]
    own = text[start:start + 3].lstrip("( ")[:1].upper()
    others = codes & ((1 << len(ch.codes)) - 1) & ~(1 << (ord(own) - 65) if "A" <= own <= "Z" else 0)
    return others.bit_count() >= 2


def walk_item(text: str, start: int, end: int, ch: Choices) -> bool:
    """The reference at start..end leads an item of a walk through the options on its line."""
    return _walks_inline(text, start, ch, end)


@lru_cache(maxsize=64)
def _inline_codes(text: str, start: int, end: int) -> tuple[list[int], list[int], list[int]]:
    """The option codes leading an item inside one line ("...; B. ..."): where each stands, and for each
    a bit set (A = bit 0) of the codes from there to the line's end, and from the line's start to
    there. Computed once per line."""
    at, codes = [], []
    for m in _INLINE_LED.finditer(text, start, end):
        at.append(m.start())
        codes.append(1 << (ord(m[1]) - 65))
    after, before = codes[:], codes[:]
    for i in range(len(codes) - 2, -1, -1):
        after[i] |= after[i + 1]
    for i in range(1, len(codes)):
        before[i] |= before[i - 1]
    return at, after, before


def _listed_lines(text: str, start: int, end: int, ch: Choices) -> frozenset | int | None:
    """A code at the start of a line followed by lines led by other codes is a list of options:
    every option (or A, B, C ... in order) is an echo or a walk-through (NOMATCH); a few are a list."""
    lo = max(0, start - LINE_WINDOW)
    nl = text.rfind("\n", lo, start)
    ls = nl + 1 if nl >= 0 or lo == 0 else -1  # -1: the line starts further back than we read
    at_line_start = ls >= 0 and _ONLY_DECOR.fullmatch(text, ls, start) is not None
    if not CODE_LED.match(text, ls if at_line_start else start):
        return None
    if at_line_start and ls and CODE_LED.match(_line_above(text, ls)):
        return None  # an item inside a list or walk-through speaks for itself
    codes = []
    pos = start
    while pos < len(text):
        stop = text.find("\n", pos)
        stop = len(text) if stop < 0 else stop
        m = CODE_LED.match(text, pos, stop)
        k = ch.code(m[1] or m[2]) if m else None
        if k is not None:
            codes.append(k)
        elif not SPACES.fullmatch(text, pos, stop):
            break
        pos = stop + 1
    if len(codes) < 2:
        return None
    if len(set(codes)) == len(ch.codes) or (len(codes) >= 3 and codes == list(range(len(codes)))):
        return NOMATCH
    return frozenset(codes)


def _line_above(text: str, ls: int) -> str:
    """The last non-blank line before the line starting at ls (at most LINE_WINDOW characters of it)."""
    end = ls
    while end > 0 and text[end - 1].isspace():
        end -= 1
    return text[text.rfind("\n", max(0, end - LINE_WINDOW), end) + 1:end]


def lead_claim(line: str, ch: Choices, strict: bool) -> frozenset | int:
    """A line that is an option: its code alone, code plus its text, or its text. Not strict: code plus
    any text naming no other option ("B. The grandson struggled")."""
    i = ch.text(line)
    if i is not None:
        return frozenset((i,)) if i >= 0 else BAD
    got, end = read_claim(line, 0, ch)
    if not isinstance(got, frozenset):
        return got if got == BAD and not line[end:].strip(DECOR) else NOMATCH
    rest = line[end:]
    if not rest.strip(DECOR):
        return got
    if len(got) == 1:
        (k,) = got
        if ch.agrees(k, rest):
            return got
        if not strict and CODE_LED.match(line) and not _names_other(rest, k, ch):
            return got
    return NOMATCH


def _names_other(rest: str, k: int, ch: Choices) -> bool:
    for m in _OTHER_CODE.finditer(rest):
        j = ch.code(m[1] or m[2] or m[3])
        if j is not None and j != k:
            return True
    return False


def code_led(line: str, ch: Choices) -> int | None:
    m = CODE_LED.match(line)
    return ch.code(m[1] or m[2]) if m else None

"""Where a response states its answer, English and Chinese, and which statement decides.

Claims come in two strengths. Strong: answer markers, choosing verbs, superlative or
"correct option" conclusions ("the closest is option (C)", "选项为(D)"), a superlative said of an
option ("选项A最为准确", "Option C is the most accurate"), the one option said to fit ("只有D项
符合"), every option at once ("all four options are correct"), a bare first line, a lone code
or bare option as last line, the option line before an analysis header or after "…是：".
Weak: a verdict on one option ("因此C选项正确", "Therefore, (b) is correct", "statements (A),
(C) and (D) hold"), or one option named in a concluding sentence ("this falls in the range given
in option (D)"); they decide only without a strong claim, when one is in a conclusion (the
first or last sentence, or after a connective) and every positive verdict agrees. The last
strong claim decides; an earlier one that disagrees makes the response unclear unless a
revision cue ("wait", "on second thought", "重新考虑") stands between them or the later claim
narrows the earlier ("C or D" ... "C").
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

from benchmark.extract.base import BAD, DECOR, NOMATCH, Choices, fold, match_end
from benchmark.extract.cues import (
    ALL_KEYS,
    ALL_OPTIONS,
    ANY_REF,
    CLAUSE_START,
    CONCLUDING,
    CONNECTIVE,
    CONNECTIVE_LEAD,
    CONNECTIVE_RIGHT_BEFORE,
    EXAMPLE_BEFORE,
    EXAMPLE_KEYS,
    EXPLICIT_REF,
    FIT_WORD,
    GAP_POST_STRONG,
    HEADER,
    HEAD_BEFORE,
    LAST_SENTENCE_END,
    LIST_BEFORE,
    NEGATED_BEFORE,
    NEGATION,
    NOT_OWN,
    ONLY_BEFORE,
    POST_ONLY,
    POST_STRONG,
    POST_WEAK,
    REVISION,
    SENT_END,
    SENT_REST,
    SENT_START,
    STRONG_RE,
)
from benchmark.extract.refs import code_led, lead_claim, read_claim, walk_item

_I = re.IGNORECASE

_QUOTE_MARK = re.compile(r'["“”「」]')
_RUNS_OK = re.compile(r"选|答案|answer|option|choice", _I)
_COPULA_COLON = re.compile(r"(?:是|为|\bis|\bare|\bbe)\s*:\s*$", _I)


class Claim(NamedTuple):
    pos: int
    value: frozenset | int  # options, or BAD
    strong: bool
    qualified: bool = True  # a weak claim in a conclusion; unqualified ones only have to agree


def claims(text: str, ch: Choices, by_text: Callable[[str, int], frozenset | int] | None = None,
           multi: bool = False) -> list[Claim]:
    """Every claim in the text. by_text reads option texts after a head where no code follows. For
    several answers, bare lines are lists read by the caller, not claims."""
    found: dict[int, Claim] = {}  # keyed by where the option is named: several heads may read one place

    def add(pos: int, at: int, value, strong: bool, qualified: bool = True) -> None:
        if value == NOMATCH:
            return
        old = found.get(at)
        if old is None or (strong and not old.strong) or (qualified and not old.qualified):
            found[at] = Claim(pos, value, strong, qualified)

    low = text.lower()
    for rx, numeric_ok, keys in STRONG_RE:
        if (ch.numeric and not numeric_ok) or not keys.search(low):
            continue
        for m in rx.finditer(text):
            if not_own(text, m.start()):
                continue
            runs = numeric_ok or bool(_RUNS_OK.search(m[0]))  # "答案：ACD", not "the longest side is AB"
            value, _ = read_claim(text, m.end(), ch, runs=runs)
            if value == NOMATCH and by_text is not None:
                value = by_text(text, m.end())
            add(m.start(), m.end(), value, True)
    if not ch.numeric:
        _verdicts(text, ch, add)
        _all_options(text, low, ch, add)
    _lines(text, ch, add, bare_lines=not multi)
    return sorted(found.values(), key=lambda c: c.pos)


def _verdicts(text: str, ch: Choices, add) -> None:
    first_line_end = text.find("\n") if "\n" in text else len(text)
    covered = 0  # "A, C and D are correct" is one verdict, not three
    for m in ANY_REF.finditer(text):
        if m.start() < covered:
            continue
        value, end = read_claim(text, m.start(), ch, skip=False, runs=False)
        if not isinstance(value, frozenset) or not_own(text, m.start()):
            continue
        covered = end
        sent = SENT_START.split(text[max(0, m.start() - 80):m.start()])[-1]
        if LIST_BEFORE.search(sent):
            continue  # the tail of a list whose head was read (or could not be): "(A), (C) and (D) hold"
        if (POST_STRONG.match(text, end) or (CONCLUDING.search(sent) and GAP_POST_STRONG.match(text, end))
                or (ONLY_BEFORE.search(sent) and POST_ONLY.match(text, end))):
            add(m.start(), m.start(), value, True)
            continue
        if POST_WEAK.match(text, end):
            if walk_item(text, m.start(), end, ch):
                continue  # "(A) is correct. (B) is incorrect. (C) is correct.": a walk, not a conclusion
            # every positive verdict must agree ("A正确 ... C正确" in a walk-through is no answer)
            # a verdict on several options at once sums up ("Options (A), (C) and (D) are correct.")
            concludes = (bool(CONNECTIVE.search(sent)) or m.start() < first_line_end or len(value) > 1
                         or _last_sentence(text, end))
            add(m.start(), m.start(), value, False, concludes)
        elif CONNECTIVE_RIGHT_BEFORE.search(sent) and SENT_END.match(text, end):
            add(m.start(), m.start(), value, False)  # "Therefore, (b)." / "因此，选项B。"
        elif len(value) == 1 and _concluding_mention(text, m, end, sent):
            add(m.start(), m.start(), value, False)


def _concluding_mention(text: str, ref: re.Match[str], end: int, sent: str) -> bool:
    """One option named as such ("option (D)", "(D)", "D项") in a sentence that concludes (led by a
    connective, or the response's last), says it fits and nothing against it: "this falls in the
    range given in option (D)", "So the process described in option (B)"."""
    if not (EXPLICIT_REF.search(ref[0]) or text[end - 1:end] in ("项", "項")):
        return False
    rest_end = match_end(SENT_REST.match(text, end), end)
    around = sent + " " + text[end:rest_end]
    if not FIT_WORD.search(around) or not (CONNECTIVE_LEAD.match(sent) or _last_sentence(text, end)):
        return False  # "Thus, let us examine option (C)." concludes nothing
    return not NEGATION.search(around) and not EXPLICIT_REF.search(around)


def _last_sentence(text: str, pos: int) -> bool:
    """pos is in the response's last sentence."""
    rest_end = match_end(SENT_REST.match(text, pos), pos)
    return LAST_SENTENCE_END.match(text, rest_end) is not None


def _all_options(text: str, low: str, ch: Choices, add) -> None:
    """"All four options are correct", "all of the above" (unless an option says so itself): every option."""
    if not ALL_KEYS.search(low):
        return
    for m in ALL_OPTIONS.finditer(text):
        if NEGATED_BEFORE.search(text, max(0, m.start() - 12), m.start()) or not_own(text, m.start()):
            continue
        sent = SENT_START.split(text[max(0, m.start() - 80):m.start()])[-1]
        if NEGATION.search(sent) or NEGATION.search(text, m.start(), match_end(SENT_REST.match(text, m.end()), m.end())):
            continue  # "all of the above are wrong", "it is not the case that all of the above hold"
        if any(fold(m[0]) in t for t in ch.folded):
            continue
        add(m.start(), m.start(), frozenset(range(len(ch.codes))), True)


def _lines(text: str, ch: Choices, add, bare_lines: bool) -> None:
    """A bare first or last line, the option line right before an analysis header or right after a line
    ending with a colon (outside a walk through the options)."""
    spans, pos = [], 0
    for line in text.split("\n"):
        if line.strip():
            spans.append((pos, line))
        pos += len(line) + 1
    if not spans:
        return
    led = [code_led(line, ch) is not None for _, line in spans]
    walk = len({code_led(line, ch) for _, line in spans} - {None}) >= 2
    if len(spans) > 1 and bare_lines:
        start, first = spans[0]
        if not led[1]:
            add(start, start, lead_claim(first, ch, strict=walk), True)
        start, last = spans[-1]
        # after a walk through the options, only a lone code ends it ("C"), not an option's header line
        if len(last.strip(DECOR)) <= 2 or not (walk or led[-2]):
            add(len(text), start, lead_claim(last, ch, strict=True), True)
    for k in range(1, len(spans)):
        option_line = None
        if HEADER.match(spans[k][1]) and led[k - 1] and (k < 2 or not led[k - 2]):
            option_line = k - 1
        elif _COPULA_COLON.search(spans[k - 1][1]) and led[k] and not walk:
            option_line = k  # "首先应信重的是：\nC. ..."
        if option_line is not None:
            start, line = spans[option_line]
            got, _ = read_claim(line, 0, ch)
            add(start, start, got if isinstance(got, frozenset) and len(got) == 1 else NOMATCH, True)


def not_own(text: str, pos: int) -> bool:
    ls = text.rfind("\n", 0, pos) + 1
    end = pos - 1 if pos > ls and text[pos - 1] in '"“' else pos  # a JSON field name: "answer": "C"
    marks = _quote_marks(text)
    def count(mark: str) -> int:
        at = marks.get(mark, ())
        return bisect_left(at, end) - bisect_left(at, ls)
    if count('"') % 2 or count("“") > count("”") or count("「") > count("」"):
        return True
    before = text[max(ls, pos - 60):pos]
    low = before.lower()
    if any(key in low for key in EXAMPLE_KEYS):  # the format's example: "e.g. Answer: A", "例如[正确答案]A"
        head = HEAD_BEFORE.search(text, max(ls, pos - 40), pos)
        if EXAMPLE_BEFORE.search(text, max(ls, pos - 60), head.start() if head else pos):
            return True
    return bool(NOT_OWN.search(CLAUSE_START.split(before)[-1]))


@lru_cache(maxsize=8)
def _quote_marks(text: str) -> dict[str, list[int]]:
    """Where each quotation mark stands, so that any place's open quotes are counted without rereading its line."""
    marks: dict[str, list[int]] = {}
    for m in _QUOTE_MARK.finditer(text):
        marks.setdefault(m[0], []).append(m.start())
    return marks


def decide(found: list[Claim], text: str) -> frozenset | int:
    """The last strong claim, unless an earlier one disagrees with no revision between ("C or D" then
    "C" narrows, it does not disagree); else the weak claims when they all agree."""
    strong = [c for c in found if c.strong]
    if strong:
        last = strong[-1]
        revised = -1  # an earlier claim before the last revision cue is revised by it
        for revised_at in REVISION.finditer(text, strong[0].pos, last.pos):
            revised = revised_at.start()
        for c in strong[:-1]:
            narrowed = isinstance(c.value, frozenset) and isinstance(last.value, frozenset) and last.value < c.value
            if c.value != last.value and not narrowed and c.pos > revised:
                return BAD
        return last.value
    weak = {c.value for c in found}
    if not any(c.qualified for c in found):
        return NOMATCH
    if len(weak) == 1:
        return weak.pop()
    return BAD

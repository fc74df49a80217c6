"""Strict answer extraction for choice questions: read what the model claimed, never guess.

Before any rule (extract_prep): a response cut off inside its reasoning is unanswered (None):
``finish_reason="length"`` with no closed reasoning block, or a ``<think>`` never closed.
``<think>...</think>`` blocks are dropped, and so is everything up to an orphan ``</think>``
(the chat template opened it). Of what is left, an answer longer than 32,768 characters is read
from its last 32,768 (conclusions come last; the cut is marked so no rule takes its first line
for the answer's first line). Full-width forms are folded (NFKC), markdown marks, HTML tags
and ``<eoa>``-style tags removed; ``\\boxed{X}`` becomes the line "Final answer: X", with its
formatting dropped (``\\textbf{(C) }42``, ``\\mathrm{(B)\\ NO_2}``); maths ``$C$``,
``$\\text{D}$`` is unwrapped when it holds only codes (or a code and its text), any other maths
is masked (extract_latex), option texts the same way, so a variable is never an option letter
and "(A) $x=2$" still restates option A's text. A JSON object with an ``answer`` field is read
as that value alone.

Scope (extract_scope): a response that ends in a short piece repeated, naming two or more options
("A、B、C、D中，A、B、C、D中，..."), is no answer; a continuation the model invented after its
answer (a new "Question:", an options list, "let's combine all the answers") is not read when an
answer stands before it.

Single answer:

1. the whole one-line response is one option: its code ("B", "(b)", "**B**"), its text, or
   code plus text ("B. Negative"; "B. <text of another option>" -> None);
2. claims (extract_claims) where the response states its answer, English and Chinese:
   answer markers ("Answer: B", "The answer is (B)", "答案：B", "【答案】B", "Final answer:",
   ``\\boxed{}``), choosing ("I would choose C", "故选B", "应选C", "我选择(b)"), conclusions
   ("the best/most appropriate response would be (d)", "正确选项为(d)", "最合适的选项是：D",
   "错误的叙述是选项D", "Correct option: B", "which is option (a)"), a superlative said of an
   option ("(c) is the correct answer", "B is the answer", "选项A是最合适的答案"), a bare first
   line before the explanation, a lone code or bare option as last line, the option line
   before an analysis header ("解析：") or after "…是：". What follows the head is read as an
   option: its code in any of the forms above, "选项B", "B项", with its text skipped; a code
   followed by another option's text or another number than its own ("(C) 42", C being 36), a
   code no option has, or several options ("(b) Fear and
   (f) Pride", "B、D", "B D", "BD", an option list on the next lines) make the claim unclear; a
   mention negated after it ("D错误", "(a) is incorrect") is no claim; a list that echoes every
   option, or a walk through the options after the head ("Answer: A. ...; B. ...; C. ..."), is
   skipped. Heads inside a hypothesis ("if the answer is A"), someone else's view
   ("the hint says the answer is A") or a quotation are not claims. The last claim decides; an
   earlier claim that disagrees makes the response unclear (None), unless a revision cue
   ("wait", "on second thought", "重新考虑") stands between them or the later claim narrows it
   ("C or D" ... "C"). Also strong: "the closest is option (C)", "选项为(D)", "选项：(C) 120°",
   "选项A最为准确", "只有D项符合", "Option C is the most accurate", every option at once ("All four
   options are correct", "all of the above": no single answer). Weaker claims (a verdict on one
   option: "因此C选项正确", "Therefore, (b).", or one option named in a concluding sentence:
   "this falls in the range given in option (D)") count only without any of the above, when one
   is in a conclusion (or the first or last sentence) and every positive verdict agrees. A head
   right after the prompt's format example ("例如[正确答案]A", "for example: Answer: A") is no
   claim; a letter followed by an arrow is a matching's key ("(B) P → 2; Q → 4" names B);
3. a short one-line response (at most 200 characters) without claims: every stand-alone capital
   option letter is a claim, except "A"/"I" as article or pronoun and negated mentions ("not A");
   exactly one distinct claim -> it.

Numbered options (more than 26) are read by rule 1, answer markers and bare lines only.

Option texts are compared with spacing, case, hyphens, thousands separators and trailing zeros
set aside ("0.330 %" is "0.33%"); a text matching part of an option, or several, names none.

Multiple answers: the same claims, each read as a list (codes joined by , 、 / and 和 及 与 or
spaces, run together "ACD" after an answer or choosing head or alone on a line, option texts,
one option per line below a head, "(A) x = 2, (B) y = 3, and (C) z = 4"); a verdict on several
options ("statements (A), (C) and (D) hold") sums up. Without claims: the chosen options one per
line at the end, each its code and its own text (all of them, or no answer when one line is not,
when every option is there, or when the line above says they are the wrong ones); then the first
paragraph or line, then the last line, as a list where every piece must be an option; an echo of
every option with its text is no list. The same last-claim and disagreement rule applies.
"""

from __future__ import annotations

import re

from benchmark.extract.base import (
    BAD, DECOR, LINE_WINDOW, NOMATCH, SPACES,
    Choices, clean, codes_for, fold, match_end, rest_of_line,
)
from benchmark.extract.claims import claims, decide, not_own
from benchmark.extract.cues import NEGATION
from benchmark.extract.prep import json_answer, prepare
from benchmark.extract.scope import before_continuation, ends_in_loop
from benchmark.extract.refs import NEGATED_AFTER, code_led, is_word, lead_claim, lead_skip

__all__ = ["EXTRACT_VERSION", "Choices", "clean", "codes_for", "extract_multi", "extract_single", "fold"]

# Bump when any rule changes: it is part of every choice dataset's scorer_version.
EXTRACT_VERSION = "4"  # 4: exam answers (pick-several conclusions, boxes, matching, mentions), scope, long answers

_FREE_LETTER = re.compile(r"(?<![A-Za-z0-9'’\\\u2062])([A-Z])(?![A-Za-z0-9'’])")
_NEGATED = re.compile(r"(?:\bnot|n't|不是|并非|並非|非|不选)\s*(?:option\s*|选项\s*)?[(\[]?\s*$", re.IGNORECASE)
_FREE_TEXT_MAX = 200
_SIMPLE = re.compile(r"(?:the\s+)?(?:final\s+)?answer(?:\s+is)?\s*:?\s*\(?([A-Z]|\d{1,3})\)?\.?"
                     r"|答案\s*(?:是|为)?\s*:?\s*\(?([A-Z]|\d{1,3})\)?[.。]?", re.IGNORECASE)


def _one(value) -> int:
    if isinstance(value, frozenset):
        return next(iter(value)) if len(value) == 1 else BAD
    return value


# ---------------------------------------------------------------- single answer


def extract_single(response: str | None, choices: Choices, *, finish_reason: str | None = None) -> int | None:
    """Index of the one option the response claims, or None."""
    text = prepare(response, finish_reason)
    if not text:
        return None
    value = json_answer(text)
    if value is not None:
        if isinstance(value, list):
            if len(value) != 1:
                return None
            value = value[0]
        r = _one(lead_claim(value.strip(), choices, strict=False)) if value.strip(DECOR) else NOMATCH
        return r if r >= 0 else None
    if ends_in_loop(text, choices):
        return None
    text = before_continuation(text, choices, multi=False)
    r = NOMATCH
    if "\n" not in text:
        simple = _SIMPLE.fullmatch(text)  # the requested format, read without the general rules
        if simple and (i := choices.code(simple[1] or simple[2])) is not None:
            return i
        r = _one(lead_claim(text, choices, strict=False))
    if r == NOMATCH:
        r = _one(decide(claims(text, choices, lambda t, e: _single_text(t, e, choices)), text))
    if r == NOMATCH and not choices.numeric and len(text) <= _FREE_TEXT_MAX and "\n" not in text:
        r = _free_text(text, choices)
    return r if r >= 0 else None


def _single_text(text: str, end: int, ch: Choices) -> frozenset | int:
    """An option's text after a head ("Answer: negative, since ...")."""
    p = lead_skip(text, end)
    rest = rest_of_line(text, p)
    i = ch.text_prefix(rest)
    if i < 0:
        whole = ch.text(rest)  # the whole line is an option's text, loosely: "0.33 %"
        i = NOMATCH if whole is None else whole
    return frozenset((i,)) if i >= 0 else NOMATCH


def _free_text(text: str, ch: Choices) -> int:
    found = set()
    for m in _FREE_LETTER.finditer(text):
        i = ch.code(m[1])
        if i is None or is_word(m[1], text, m.end()):
            continue
        if (_NEGATED.search(text, max(0, m.start() - 12), m.start()) or NEGATED_AFTER.match(text, m.end())
                or not_own(text, m.start())):
            continue
        found.add(i)
    if len(found) == 1:
        return found.pop()
    return BAD if found else NOMATCH


# ---------------------------------------------------------------- several answers

_PUNCT_SPLIT = re.compile(r"[,;/|、]")
_WORD_SPLIT = re.compile(r"\s+and\s+|\s*(?:和|以及|及|与|&)\s*", re.IGNORECASE)
_SPACE_SPLIT = re.compile(r"\s+")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def extract_multi(response: str | None, choices: Choices, *, finish_reason: str | None = None) -> frozenset[int] | None:
    """Indices of every option the response lists, or None when any piece is not an option."""
    text = prepare(response, finish_reason)
    if not text:
        return None
    value = json_answer(text)
    if value is not None:
        pieces = value if isinstance(value, list) else _PUNCT_SPLIT.split(value)
        out: set[int] = set()
        for piece in pieces:
            i = choices.lookup(piece.strip(DECOR))
            if i is None or i < 0:
                return None
            out.add(i)
        return frozenset(out) if out else None
    if ends_in_loop(text, choices):
        return None
    text = before_continuation(text, choices, multi=True)
    first = text.split("\n", 1)[0]
    got = _list(first, choices) if "\n" not in text else None
    if got is None:
        found = decide(claims(text, choices, lambda t, e: _after_head(t, e, choices), multi=True), text)
        if isinstance(found, frozenset):
            return found
        if found == BAD:
            return None
    if got is None:
        chosen = _chosen_lines(text, choices)
        if chosen is not None:
            return chosen or None
        para = _PARAGRAPH_BREAK.split(text.strip(), maxsplit=1)[0]
        last = text.rsplit("\n", 1)[-1]
        for block in dict.fromkeys((para, first, last)):
            got = _list(block.replace("\n", ","), choices)
            if got is not None:
                break
    return got


def _chosen_lines(text: str, ch: Choices) -> frozenset[int] | None:
    """The options chosen, one per line at the end, each its code and its own text: all of them. An
    empty set when such lines end the response but one is not an option restated or every option is
    there (an echo); None when the response does not end in two or more such lines."""
    block: list[str] = []
    above = ""
    for line in reversed(text.rstrip().split("\n")):
        if not line.strip():
            continue
        if code_led(line, ch) is None:
            above = line
            break
        block.append(line)
    if len(block) < 2:
        return None
    if NEGATION.search(above):
        return frozenset()  # "The incorrect options are:" lists what was not chosen
    out: set[int] = set()
    for line in block:
        got = lead_claim(line, ch, strict=True)
        if not isinstance(got, frozenset) or len(got) != 1:
            return frozenset()
        out |= got
    return frozenset(out) if len(out) == len(block) < len(ch.codes) else frozenset()


def _after_head(text: str, end: int, ch: Choices) -> frozenset | int:
    """Option texts after a head: the rest of its line, or the paragraph below when the line ends there."""
    line = rest_of_line(text, end)
    if line.strip(DECOR):
        got = _list(line, ch)
    else:
        start = match_end(SPACES.match(text, end + len(line)), end + len(line))
        para_break = _PARAGRAPH_BREAK.search(text, start, start + LINE_WINDOW)
        got = _list(text[start:para_break.start() if para_break else start + LINE_WINDOW].replace("\n", ","), ch)
    return NOMATCH if got is None else got


def _list(segment: str, ch: Choices) -> frozenset[int] | None:
    s = segment.strip(DECOR)
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
    """Options named by one separator-free piece: whole, code plus its text, else split on "and", else on spaces."""
    piece = piece.strip(DECOR)
    if not piece:
        return []
    i = ch.lookup(piece)
    if i is not None:
        return [i] if i >= 0 else None
    got = lead_claim(piece, ch, strict=True)
    if isinstance(got, frozenset):
        return list(got)
    for splitter in (_WORD_SPLIT, _SPACE_SPLIT):
        parts = [p.strip(DECOR) for p in splitter.split(piece)]
        parts = [p for p in parts if p]
        if len(parts) > 1:
            idx = []
            for p in parts:
                j = ch.lookup(p)
                if j is None or j < 0:
                    break  # prose, not a list: stop at the first word that is no option
                idx.append(j)
            else:
                # "A. iron B. copper" names options twice (code and text): an echo of the options
                return None if len(set(idx)) < len(idx) and len(set(idx)) > 1 else idx
    return None

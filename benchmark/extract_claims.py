"""Where a response states its answer, English and Chinese, and which statement decides.

Claims come in two strengths. Strong: answer markers, choosing verbs, superlative or
"correct option" conclusions, a superlative said of an option, a bare first line, a lone code
or bare option as last line, the option line before an analysis header or after "…是：".
Weak: a verdict on one option ("因此C选项正确", "Therefore, (b) is correct"); they decide only
without a strong claim, when one is in a conclusion (or the first line) and every positive
verdict agrees. The last strong claim decides; an earlier one that disagrees makes the
response unclear unless a revision cue ("wait", "on second thought", "重新考虑") stands between
them or the later claim narrows the earlier ("C or D" ... "C").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from benchmark.extract_base import BAD, DECOR, NOMATCH, Choices
from benchmark.extract_refs import code_led, lead_claim, read_claim

_I = re.IGNORECASE

# Strong heads: the option(s) right after one of these are the claim.
# (pattern, numbers allowed, words one of which the text must hold: a cheap pre-test)
_ANSWER = [
    ((r"\b(?:final\s+|correct\s+|best\s+|right\s+|my\s+|the\s+)?answers?\b(?:\s+(?:choice|option|letter))?"
      r"(?:\s+to\s+(?:this|the)\s+(?:question|problem))?"
      r"(?:\s+(?:is|are|would\s+be|should\s+be|will\s+be|must\s+be|seems\s+to\s+be|appears\s+to\s+be|here\s+is)\b)?"
      r"\s*(?:[:=]|\bis\b)?"), True, ("answer",)),
    (r"(?:最终|正确|标准|参考|最佳|本题)?答案\s*(?:应该|应当|应|就|可能|最可能|只能|当|则|即)?\s*(?:是|为|為|选|選)?", True, ("答案",)),
]
_STRONG = _ANSWER + [
    ((r"\bI(?:\s+would|\s+will|'d|'ll)?(?:\s+(?:have\s+to|therefore|thus|then|definitely))?\s+"
      r"(?:choose|pick|select|go\s+with|opt\s+for)\b"), False, ("choose", "pick", "select", "go with", "opt for")),
    (r"\bmy\s+(?:final\s+)?(?:choice|pick|selection)\s+(?:is|would\s+be|will\s+be)\b", False, ("my ",)),
    (r"\b(?:final\s+)?(?:choice|selection)\s*:|\bfinal\s+(?:option|pick)\s*:|\b(?:my|our|the)\s+conclusion\s+is\s*:?", False,
     ("choice", "selection", "final", "conclusion")),
    (r"\bletter(?:\s+number(?:ing)?)?(?:\s+of\s+(?:the\s+)?final\s+option)?\s*:", False, ("letter",)),
    (r"\b(?:which|that)\s+(?:is|corresponds\s+to|matches)\s+(?=(?:option|choice)\b)", False, ("which", "that")),
    ((r"\b(?:best|most\s+(?!un|in[^t]|least)[a-z]+|correct|right|optimal|ultimate|likeliest|only\s+correct|final)\b"
      r"[^.!?\n:;]{0,80}?\b(?:is|are|would\s+be|will\s+be|should\s+be|seems\s+to\s+be|appears\s+to\s+be|remains|must\s+be)\b"
      r"\s*:?"), False, ("best", "most", "correct", "right", "optimal", "ultimate", "likeliest", "final")),
    (r"(?<![不未没非可供])(?<!不能)(?<!不应)(?<!不可)(?<!不会)(?<!没有)(?:故|应|应该|应当|所以|因此|因而|则|即|我|我们|最终|只能|都|可以)?选(?:择|定)?(?![项項出修手举民票取用好])", False, ("选",)),
    ((r"(?<!不)(?:最(?!后|初|先|近)|正确|错误|不正确|符合|合适|恰当|准确|唯一)(?:(?!原因|理由|在于|因为)[^,，。；;!?！？\n]){0,20}?(?:是|为|為)"
      r"\s*[:：]?"), False,
     ("最", "正确", "错误", "符合", "合适", "恰当", "准确", "唯一")),
    (r"(?:选择|回答|回复)(?:应该|应当|应|就|可能)?(?:是|为)", False, ("选择", "回答", "回复")),
    (r"(?:正确|最佳|最终|最合适的?|正确的)(?:选项|答案|选择|答)\s*[:：]|\b(?:correct|best|final|right)\s+(?:options?|choices?)\s*:",
     False, ("正确", "最", "correct", "best", "final", "right")),
    (r"(?:对应于?|相当于|即为|也就是)\s*(?=选项)", False, ("选项",)),
]
_STRONG_RE = [(re.compile(p, _I), num, re.compile("|".join(map(re.escape, keys)))) for p, num, keys in _STRONG]

# An option reference anywhere, for verdicts said after it ("选项(d) 是正确答案", "(c) is the best").
_ANY_REF = re.compile(r"(?<![A-Za-z0-9\\'’])(?:(?:option|choice)\s*|选项\s*)?(?:\(\s*[A-Za-z]\s*\)|(?-i:[A-Z])(?![A-Za-z0-9'’]))",
                      _I)
_DECISION_NOUN = r"(?:answer|option|choice|response|reply|action|course\s+of\s+action|emotion|reason|explanation|selection)"
_POST_STRONG = re.compile(
    r"\s*,?\s*(?:is|would\s+be|seems\s+to\s+be|appears\s+to\s+be|remains)\s+(?:clearly\s+|definitely\s+|therefore\s+)?"
    r"(?:the\s+)?(?:(?:correct|right|best|optimal|ideal)\s+|most\s+(?!un|in[^t]|least)[a-z]+\s+|only\s+correct\s+)"
    + _DECISION_NOUN + r"|\s*is\s+(?:the|my)\s+(?:final\s+)?answer\b" +
    r"|\s*(?:可能|应该|应|就|才|则|也|确实)?(?:是|为)?\s*(?:本题的)?(?:正确答案|正确选项|正确的选项|正确的答案|唯一正确|"
    r"最(?!不|差|少|低|弱|小|大|多|高)[^,，。.;；\n]{0,8}?(?:答案|选项|选择|回复|回答|做法|行动|反应|方案|描述|说法|解释))", _I)
# "I believe (c) <its text, paraphrased> would be the most effective": a gap only in a concluding sentence.
_GAP_POST_STRONG = re.compile(r"[^.。!?;；\n,，]{0,100}?(?:" + _POST_STRONG.pattern + ")", _I)
_CONCLUDING = re.compile(r"\bI\s+(?:believe|think)\b|我认为|我觉得|\b(?:therefore|thus|hence|so|overall|in\s+conclusion)\b|"
                         r"综上|因此|所以", _I)
# Weak: a verdict on one option, or a connective followed by an option.
_POST_WEAK = re.compile(r"\s*(?:is|are)\s+(?:the\s+)?(?:correct|right|true)\b"
                        r"|\s*(?:的?(?:描述|说法|叙述|表述|陈述))?\s*(?:是|为)?\s*(?:正确|对的|符合题意|符合题目要求)", _I)
_CONNECTIVE = re.compile(r"\b(?:therefore|thus|hence|so|consequently|in\s+conclusion|overall|in\s+summary|to\s+conclude|"
                         r"accordingly)\b|综上所述|综上|因此|所以|故|因而|总之|由此可见|可见|可知|结论", _I)
_CONNECTIVE_RIGHT_BEFORE = re.compile(r"(?:\b(?:therefore|thus|hence|so|consequently)|综上所述|综上|因此|所以|故)"
                                      r"[\s,，:：]*(?:只有|只能)?\s*$", _I)
_SENT_END = re.compile(r"\s*(?:[.。!！;；]|$|\n)")
_SENT_START = re.compile(r"[.。!！?？;；\n]")
_CLAUSE_START = re.compile(r"[.。!！?？;；\n,，]")
# A head inside a hypothesis, a report of someone else's view, or a quotation is not the model's claim.
_NOT_OWN = re.compile(r"\b(?:if|suppose|supposing|assume|assuming|whether|hint\w*|suggest\w*|says|said|claim\w*|"
                      r"according\s+to|states|stated|told|mentioned|proposed|user|professor|expert|teacher|someone|others|student)\b|"
                      r"如果|若|假如|假设|要是|是否|提示|暗示|声称|据说|你说|您说|有人|用户|老师|专家", _I)
_REVISION = re.compile(r"\b(?:wait|actually|on\s+second\s+thought|on\s+reflection|correction|re-?consider\w*|re-?evaluat\w*|"
                       r"re-?examin\w*|if\s+(?:i|we|one)\s+(?:must|had\s+to|have\s+to|can\s+only)\s+(?:choose|pick|select)|re-?check\w*|double[- ]check\w*|upon\s+further|i\s+was\s+wrong|mistake)\b|"
                       r"等等|等一下|不对|重新(?:考虑|思考|分析|审视|检查|计算)|再次?(?:想|看|检查|考虑|分析)|如果(?:只能|必须)选(?:择)?一个|更正|纠正|修正|仔细(?:想想|检查|考虑)|反思",
                       _I)
_HEADER = re.compile(r"\s*[【\[]?(?:解析|分析|解答|详解|理由|解释|思路|说明|点评|explanation|analysis|reasoning|rationale|"
                     r"solution)\s*(?:[】\]]|[:：]|$)", _I)


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
    for rx, numeric_ok, keys in _STRONG_RE:
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
    _lines(text, ch, add, bare_lines=not multi)
    return sorted(found.values(), key=lambda c: c.pos)


def _verdicts(text: str, ch: Choices, add) -> None:
    first_line_end = text.find("\n") if "\n" in text else len(text)
    covered = 0  # "A, C and D are correct" is one verdict, not three
    for m in _ANY_REF.finditer(text):
        if m.start() < covered:
            continue
        value, end = read_claim(text, m.start(), ch, skip=False, runs=False)
        if not isinstance(value, frozenset) or not_own(text, m.start()):
            continue
        covered = end
        sent = _SENT_START.split(text[max(0, m.start() - 80):m.start()])[-1]
        if _POST_STRONG.match(text, end) or (_CONCLUDING.search(sent) and _GAP_POST_STRONG.match(text, end)):
            add(m.start(), m.start(), value, True)
            continue
        if _POST_WEAK.match(text, end):
            # every positive verdict must agree ("A正确 ... C正确" in a walk-through is no answer)
            add(m.start(), m.start(), value, False, bool(_CONNECTIVE.search(sent)) or m.start() < first_line_end)
        elif _CONNECTIVE_RIGHT_BEFORE.search(sent) and _SENT_END.match(text, end):
            add(m.start(), m.start(), value, False)  # "Therefore, (b)." / "因此，选项B。"


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
        if _HEADER.match(spans[k][1]) and led[k - 1] and (k < 2 or not led[k - 2]):
            option_line = k - 1
        elif _COPULA_COLON.search(spans[k - 1][1]) and led[k] and not walk:
            option_line = k  # "首先应信重的是：\nC. ..."
        if option_line is not None:
            start, line = spans[option_line]
            got, _ = read_claim(line, 0, ch)
            add(start, start, got if isinstance(got, frozenset) and len(got) == 1 else NOMATCH, True)


def not_own(text: str, pos: int) -> bool:
    ls = text.rfind("\n", 0, pos) + 1
    line = text[ls:pos]
    if line.endswith(('"', "“")):  # a JSON field name: "answer": "C"
        line = line[:-1]
    if line.count('"') % 2 or line.count("“") > line.count("”") or line.count("「") > line.count("」"):
        return True
    clause = _CLAUSE_START.split(text[max(ls, pos - 60):pos])[-1]
    return bool(_NOT_OWN.search(clause))


def decide(found: list[Claim], text: str) -> frozenset | int:
    """The last strong claim, unless an earlier one disagrees with no revision between ("C or D" then
    "C" narrows, it does not disagree); else the weak claims when they all agree."""
    strong = [c for c in found if c.strong]
    if strong:
        last = strong[-1]
        for c in strong[:-1]:
            narrowed = isinstance(c.value, frozenset) and isinstance(last.value, frozenset) and last.value < c.value
            if c.value != last.value and not narrowed and not _REVISION.search(text, c.pos, last.pos):
                return BAD
        return last.value
    weak = {c.value for c in found}
    if not any(c.qualified for c in found):
        return NOMATCH
    if len(weak) == 1:
        return weak.pop()
    return BAD

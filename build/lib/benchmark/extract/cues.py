"""The words that mark where a response states its answer, English and Chinese: heads, verdicts,
connectives, revisions, hypotheses. Data for extract_claims; every pattern says what it stands for."""

from __future__ import annotations

import re

_I = re.IGNORECASE

# Strong heads: the option(s) right after one of these are the claim.
# (pattern, numbers allowed, words one of which the text must hold: a cheap pre-test)
ANSWER = [
    ((r"\b(?:final\s+|correct\s+|best\s+|right\s+|my\s+|the\s+)?answers?\b(?:\s+(?:choice|option|letter))?"
      r"(?:\s+to\s+(?:this|the)\s+(?:question|problem))?"
      r"(?:\s+(?:is|are|would\s+be|should\s+be|will\s+be|must\s+be|seems\s+to\s+be|appears\s+to\s+be|here\s+is)\b)?"
      r"\s*(?:[:=]|\bis\b)?"), True, ("answer",)),
    (r"(?:最终|正确|标准|参考|最佳|本题)?答案\s*(?:应该|应当|应|就|可能|最可能|只能|当|则|即)?\s*(?:是|为|為|选|選)?", True, ("答案",)),
]
STRONG = ANSWER + [
    ((r"\bI(?:\s+would|\s+will|'d|'ll)?(?:\s+(?:have\s+to|therefore|thus|then|definitely))?\s+"
      r"(?:choose|pick|select|go\s+with|opt\s+for)\b"), False, ("choose", "pick", "select", "go with", "opt for")),
    (r"\bmy\s+(?:final\s+)?(?:choice|pick|selection)\s+(?:is|would\s+be|will\s+be)\b", False, ("my ",)),
    (r"\b(?:final\s+)?(?:choice|selection)\s*:|\bfinal\s+(?:option|pick)\s*:|\b(?:my|our|the)\s+conclusion\s+is\s*:?", False,
     ("choice", "selection", "final", "conclusion")),
    (r"\bletter(?:\s+number(?:ing)?)?(?:\s+of\s+(?:the\s+)?final\s+option)?\s*:", False, ("letter",)),
    (r"\b(?:which|that)\s+(?:is|corresponds\s+to|matches)\s+(?=(?:option|choice)\b)", False, ("which", "that")),
    # a computed value against the options: "2.27 mm is closest to option (C)"
    (r"\b(?:closest|nearest)\s+(?:match\s+)?to\s+(?=(?:the\s+)?(?:option|choice)\b|\(\s*[A-Za-z]\s*\))", False, ("closest", "nearest")),
    # pick-several conclusions: "The true statements are (B) and (D)."
    (r"\b(?:true|valid)\s+(?:statements?|options?|ones|answers?|choices?)\s+(?:is|are)\b\s*:?", False, ("true", "valid")),
    ((r"\b(?:best|most\s+(?!un|in[^t]|least)[a-z]+|correct|right|optimal|ultimate|likeliest|only\s+correct|final|closest|nearest)\b"
      r"[^.!?\n:;]{0,80}?\b(?:is|are|would\s+be|will\s+be|should\s+be|seems\s+to\s+be|appears\s+to\s+be|remains|must\s+be)\b"
      r"(?:\s*/\s*(?:is|are)\b|\s*\(\s*(?:is|are)\s*\))?\s*:?"), False, ("best", "most", "correct", "right", "optimal", "ultimate", "likeliest", "final", "closest", "nearest")),
    (r"(?<![不未没非可供])(?<!不能)(?<!不应)(?<!不可)(?<!不会)(?<!没有)(?:故|应|应该|应当|所以|因此|因而|则|即|我|我们|最终|只能|都|可以)?选(?:择|定)?(?![项項出修手举民票取用好])", False, ("选",)),
    ((r"(?<!不)(?:最(?!后|初|先|近)|正确|错误|不正确|符合|合适|恰当|准确|唯一)(?:(?!原因|理由|在于|因为)[^,，。；;!?！？\n]){0,20}?(?:是|为|為)"
      r"\s*[:：]?"), False,
     ("最", "正确", "错误", "符合", "合适", "恰当", "准确", "唯一")),
    (r"(?:选择|回答|回复)(?:应该|应当|应|就|可能)?(?:是|为)", False, ("选择", "回答", "回复")),
    (r"(?:正确|最佳|最终|最合适的?|正确的)(?:选项|答案|选择|答)\s*[:：]|\b(?:correct|best|final|right)\s+(?:options?|choices?)\s*:",
     False, ("正确", "最", "correct", "best", "final", "right")),
    (r"(?:对应于?|相当于|即为|也就是)\s*(?=选项)", False, ("选项",)),
    # "所以选项为(D)", "选项：(C) 120°": at a clause's start or after a connective (not "本题选项为A、B、C、D",
    # "该选项是"), the option on the same line (not "分析选项：" ending its line)
    (r"(?:(?<![^\s，,。.；;：:])|(?<=所以)|(?<=因此)|(?<=因而)|(?<=综上)|(?<=最终)|(?<=[故则即]))"
     r"选项\s*(?:(?:应该|应当|应)?(?:为|是|為)|[:：](?=[ \t]*[^\s]))", False, ("选项",)),
]
STRONG_RE = [(re.compile(p, _I), num, re.compile("|".join(map(re.escape, keys)))) for p, num, keys in STRONG]

# An option reference anywhere, for verdicts said after it ("选项(d) 是正确答案", "(c) is the best").
ANY_REF = re.compile(r"(?<![A-Za-z0-9\\'’])(?:(?:options?|choices?|statements?)\s*|选项\s*)?(?:\(\s*[A-Za-z]\s*\)|(?-i:[A-Z])(?![A-Za-z0-9'’]))",
                      _I)
DECISION_NOUN = r"(?:answer|option|choice|response|reply|action|course\s+of\s+action|emotion|reason|explanation|selection)"
POST_STRONG = re.compile(
    r"\s*,?\s*(?:is|would\s+be|seems\s+to\s+be|appears\s+to\s+be|remains)\s+(?:clearly\s+|definitely\s+|therefore\s+)?"
    r"(?:the\s+)?(?:(?:correct|right|best|optimal|ideal)\s+|most\s+(?!un|in[^t]|least)[a-z]+\s+|only\s+correct\s+)"
    + DECISION_NOUN + r"|\s*is\s+(?:the|my)\s+(?:final\s+)?answer\b" +
    r"|\s*(?:可能|应该|应|就|才|则|也|确实)?(?:是|为)?\s*(?:本题的)?(?:正确答案|正确选项|正确的选项|正确的答案|唯一正确|"
    r"最(?!不|差|少|低|弱|小|大|多|高)[^,，。.;；\n]{0,8}?(?:答案|选项|选择|回复|回答|做法|行动|反应|方案|描述|说法|解释))"
    # "选项A最为准确", "B项最符合题意"
    r"|\s*(?:的?(?:描述|说法|叙述|表述|陈述|做法|解释))?\s*(?:是|为)?\s*最为?(?:准确|恰当|合适|合理|正确|贴切|有效|符合|适合|妥当|佳)"
    # "Option C is the most accurate.", "(B) is the best." (a superlative of fitness ending the clause)
    r"|\s*,?\s*(?:is|would\s+be|seems\s+to\s+be|appears\s+to\s+be|remains)\s+(?:clearly\s+|definitely\s+)?(?:the\s+)?"
    r"(?:best|most\s+(?:accurate|appropriate|likely|suitable|plausible|reasonable|effective|fitting|consistent|probable|"
    r"sensible|logical|justified|defensible|correct))(?:\s+(?:one|fit|match))?(?=\s*(?:[.。!;,]|$))", _I)
# "I believe (c) <its text, paraphrased> would be the most effective": a gap only in a concluding sentence.
GAP_POST_STRONG = re.compile(r"[^.。!?;；\n,，]{0,100}?(?:" + POST_STRONG.pattern + ")", _I)
CONCLUDING = re.compile(r"\bI\s+(?:believe|think)\b|我认为|我觉得|\b(?:therefore|thus|hence|so|overall|in\s+conclusion)\b|"
                         r"综上|因此|所以", _I)
# Weak: a verdict on one option, or a connective followed by an option.
POST_WEAK = re.compile(r"\s*(?:is|are)\s+(?:all\s+|both\s+|also\s+)?(?:the\s+)?(?:correct|right|true|valid)\b|\s*(?:all\s+|both\s+)?holds?\b"
                        r"|\s*(?:[两二三四五六]项|[两二三四五六]个选项)?\s*(?:的?(?:描述|说法|叙述|表述|陈述))?\s*(?:也|都|均|亦)?\s*"
                        r"(?:是|为)?\s*(?:正确|对的|符合题意|符合题目要求)", _I)
CONNECTIVE = re.compile(r"\b(?:therefore|thus|hence|so|consequently|in\s+conclusion|overall|in\s+summary|to\s+conclude|"
                         r"accordingly)\b|综上所述|综上|因此|所以|故|因而|总之|由此可见|可见|可知|结论", _I)
CONNECTIVE_RIGHT_BEFORE = re.compile(r"(?:\b(?:therefore|thus|hence|so|consequently)|综上所述|综上|因此|所以|故)"
                                      r"[\s,，:：]*(?:只有|只能)?\s*$", _I)
# "只有D项符合", "Only (B) is correct": the one option said to fit, a claim as strong as a superlative.
ONLY_BEFORE = re.compile(r"(?<![不并])(?:只有|唯有|仅有|只|仅)\s*$|(?<!not\s)\bonly\s+$", _I)
POST_ONLY = re.compile(r"\s*(?:是|为)?\s*(?:符合|满足|成立|正确|对|合适|恰当|适合)|\s*(?:is|are)\s+(?:correct|right|true|valid)\b"
                       r"|\s*(?:fits|holds|satisfies|works|applies)\b", _I)
# Every option at once: "All four options are correct.", "all of the above", "四个选项都正确".
ALL_OPTIONS = re.compile(
    r"\ball\s+(?:of\s+)?(?:the\s+)?(?:(?:two|three|four|five|six|given|listed)\s+)?(?:options|choices|statements|answers)"
    r"(?:\s+(?:given|listed|above))?\s+(?:(?:are|is)\s+(?:all\s+)?(?:correct|true|right|valid)|hold)\b(?!\s*\?)"
    r"|\ball\s+of\s+the\s+above\b|(?:四个|所有|全部|以上)(?:选项|说法|叙述)?(?:都|均|全)(?:是)?(?:正确|对)(?![吗么?？])", _I)
ALL_KEYS = re.compile(r"all|都|均|全")  # a cheap pre-test on the lower-cased text
NEGATED_BEFORE = re.compile(r"(?:\bnot|n't|\bnone\s+of|不是|并非)\s*$", _I)
# A sentence that concludes: led by a connective ("So the process described in option (B).").
CONNECTIVE_LEAD = re.compile(r"\s*(?:(?:so|thus|therefore|hence|consequently|in\s+conclusion|in\s+summary|overall)\b|"
                             r"综上所述|综上|因此|所以|故|因而|总之|可见)", _I)
# Words that turn a sentence against the option it names.
NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|none|incorrect|wrong|false|invalid|eliminat\w*|rule[sd]?\s+out|unlikely|"
                      r"inappropriate|cannot|can't|isn't|aren't|doesn't|don't|won't|fails?|except|rather\s+than|instead\s+of|"
                      r"if|whether|unless)\b|不|没|错|排除|非|无|否|如果|若", _I)
# An option named as such, not a bare capital that may be a word: "option (D)", "(D)", "选项D".
EXPLICIT_REF = re.compile(r"\(\s*[A-Za-z]\s*\)|(?:options?|choices?|选项)\s*\(?[A-Z]\b", _I)
LIST_BEFORE = re.compile(r"(?:\(\s*[A-Za-z]\s*\)|(?<![A-Za-z])[A-Z])\s*(?:,|、|/|&|\band\b|\bor\b|和|与|及|以及|或)\s*"
                         r"(?:options?\s*|choices?\s*|选项\s*)?$", _I)
# A concluding sentence that names an option without a connective must say the option fits.
FIT_WORD = re.compile(r"\b(?:falls?|fits?|match(?:es)?|correspond\w*|consistent|agrees?|given|described|stated|listed|closest|"
                      r"nearest|range|best|correct|right|true|applies|satisf\w*)\b|符合|对应|一致|吻合|属于|满足|正确|最", _I)
SENT_REST = re.compile(r"[^.。!！?？;；\n]{0,200}")
LAST_SENTENCE_END = re.compile(r"[.。!！?？;；\s]*$")
SENT_END = re.compile(r"\s*(?:[.。!！;；]|$|\n)")
SENT_START = re.compile(r"[.。!！?？;；\n]")
CLAUSE_START = re.compile(r"[.。!！?？;；\n,，]")
# A head inside a hypothesis, a report of someone else's view, or a quotation is not the model's claim.
NOT_OWN = re.compile(r"\b(?:if|suppose|supposing|assume|assuming|whether|hint\w*|suggest\w*|says|said|claim\w*|"
                      r"according\s+to|states|stated|told|mentioned|proposed|user|professor|expert|teacher|someone|others|student)\b|"
                      r"for\s+example|for\s+instance|"  # the prompt's format example echoed: "例如[正确答案]A<eoa>"
                      r"如果|若|假如|假设|要是|是否|提示|暗示|声称|据说|你说|您说|有人|用户|老师|专家|例如|比如|譬如|示例|样例", _I)
REVISION = re.compile(r"\b(?:wait|actually|on\s+second\s+thought|on\s+reflection|correction|re-?consider\w*|re-?evaluat\w*|"
                       r"re-?examin\w*|if\s+(?:i|we|one)\s+(?:must|had\s+to|have\s+to|can\s+only)\s+(?:choose|pick|select)|re-?check\w*|double[- ]check\w*|upon\s+further|i\s+was\s+wrong|mistake)\b|"
                       r"等等|等一下|不对|重新(?:考虑|思考|分析|审视|检查|计算)|再次?(?:想|看|检查|考虑|分析)|如果(?:只能|必须)选(?:择)?一个|更正|纠正|修正|仔细(?:想想|检查|考虑)|反思",
                       _I)
# A head right after one of these echoes the prompt's format example, not the model's own answer.
EXAMPLE_BEFORE = re.compile(r"(?:\bfor\s+(?:example|instance)|\be\.\s?g\.?|\bsuch\s+as|\blike\s+this|"
                            r"例如|比如|譬如|示例|样例|形如)\s*[:：,，]?\s*[\"“'‘「(\[【]*$", _I)
# An answer head right before a place ("Answer: ", "[正确答案]"), looked past for an example cue.
EXAMPLE_KEYS = ("example", "instance", "e.g", "such as", "like this", "例如", "比如", "譬如", "示例", "样例", "形如")
HEAD_BEFORE = re.compile(r"(?:\b(?:final\s+)?answer(?:\s+is)?|(?:正确)?答案\s*(?:是|为)?)\s*[:：]?\s*[\]】)]?\s*[\[【(]?\s*$", _I)
HEADER = re.compile(r"\s*[【\[]?(?:解析|分析|解答|详解|理由|解释|思路|说明|点评|explanation|analysis|reasoning|rationale|"
                     r"solution)\s*(?:[】\]]|[:：]|$)", _I)

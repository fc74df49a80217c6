"""Overlap metrics for free-text answers, as small pure functions.

* **SQuAD v1.1** exact match and token F1 (``squad_em``, ``squad_f1``): both
  strings normalised as the official v1.1 script does (lower-case, ASCII
  punctuation removed, the articles a/an/the removed, whitespace collapsed),
  whitespace tokens, F1 over the multiset of common tokens. With several gold
  aliases the score is the maximum over them (``best``).
* **CMRC 2018** exact match and F1 (``cmrc_em``, ``cmrc_f1``), as the official
  CMRC evaluation script defines them: lower-cased; every Chinese character
  (U+4E00-U+9FA5) is one token, runs of other characters are split into words
  (the script uses NLTK's ``word_tokenize``; here a regex: word characters with
  inner ``.``/``,`` kept, e.g. "1.5", else one token per symbol); the script's
  punctuation list is dropped; F1 = 2PR/(P+R) with P and R from the length of
  the **longest common substring** of the two token lists (not a bag of
  tokens); EM = equality after removing that punctuation.
* **ROUGE-1/2/L F** (``rouge``): tokens from ``rouge_tokens``: NFKC, lower-case,
  each CJK character one token, every other run of letters/digits one token
  (so English is split into words), punctuation and whitespace dropped. N-gram
  overlap counts clipped multiset matches (ROUGE-1.5.5 / rouge-score), ROUGE-L
  is the longest common subsequence over the whole token sequence, F = 2PR/(P+R).
  The reference's rouge-chinese instead counts *distinct* n-grams over jieba
  words (including punctuation tokens).
* **Token recall** (``token_recall``): share of the gold's SQuAD-normalised
  tokens (multiset) found in the prediction (LongMemEval in the reference,
  which does not normalise).

A prediction of ``None`` (nothing parsed) scores 0 everywhere.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from functools import lru_cache
from typing import Callable, Iterable, Sequence

# ---------------------------------------------------------------- SQuAD v1.1

_SQUAD_PUNCT = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def squad_normalize(text: str) -> str:
    """The official SQuAD v1.1 normalisation: lower, drop punctuation, drop articles, collapse spaces."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_SQUAD_PUNCT)).split())


def squad_em(pred: str | None, gold: str) -> float:
    return float(pred is not None and squad_normalize(pred) == squad_normalize(gold))


def squad_f1(pred: str | None, gold: str) -> float:
    if pred is None:
        return 0.0
    return _overlap_f1(squad_normalize(pred).split(), squad_normalize(gold).split())


def _overlap_f1(p: Sequence[str], g: Sequence[str]) -> float:
    same = sum((Counter(p) & Counter(g)).values())
    if not same:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def best(metric: Callable[[str | None, str], float], pred: str | None, golds: Iterable[str]) -> float:
    """The metric against the closest gold alias (0 when there is none)."""
    return max((metric(pred, g) for g in golds), default=0.0)


def token_recall(pred: str | None, gold: str) -> float:
    """Share of the gold's normalised tokens (with repeats) that the prediction contains."""
    g = squad_normalize(gold).split()
    if pred is None or not g:
        return 0.0
    return sum((Counter(squad_normalize(pred).split()) & Counter(g)).values()) / len(g)


# ---------------------------------------------------------------- CMRC 2018

# The official script's punctuation list (its two-character "……" can never match one character).
_CMRC_PUNCT = frozenset("-:_*^/\\~`+=，。：？！“”；’《》·、「」（）－～『』")
_CMRC_HAN = re.compile(r"[\u4e00-\u9fa5]")
_WORDS = re.compile(r"\w+(?:[.,]\w+)*|[^\w\s]")


def cmrc_tokens(text: str) -> list[str]:
    """CMRC's mixed segmentation with punctuation removed: Chinese characters, and words elsewhere."""
    out: list[str] = []
    run: list[str] = []
    for ch in text.lower().strip():
        if ch in _CMRC_PUNCT:
            continue  # as in the official script, dropped without ending the current run
        if _CMRC_HAN.match(ch):
            if run:
                out += _WORDS.findall("".join(run))
                run = []
            out.append(ch)
        else:
            run.append(ch)
    if run:
        out += _WORDS.findall("".join(run))
    return out


def cmrc_em(pred: str | None, gold: str) -> float:
    if pred is None:
        return 0.0
    strip = lambda s: "".join(c for c in s.lower().strip() if c not in _CMRC_PUNCT)  # noqa: E731
    return float(strip(pred) == strip(gold))


def cmrc_f1(pred: str | None, gold: str) -> float:
    if pred is None:
        return 0.0
    p, g = cmrc_tokens(pred), cmrc_tokens(gold)
    n = longest_common_substring(p, g)
    if not n:
        return 0.0
    precision, recall = n / len(p), n / len(g)
    return 2 * precision * recall / (precision + recall)


def longest_common_substring(a: Sequence, b: Sequence) -> int:
    """Length of the longest run of consecutive tokens that a and b share."""
    if len(a) < len(b):
        a, b = b, a
    best_len = 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0] * (len(b) + 1)
        for j, y in enumerate(b, 1):
            if x == y:
                v = cur[j] = prev[j - 1] + 1
                if v > best_len:
                    best_len = v
        prev = cur
    return best_len


# ---------------------------------------------------------------- ROUGE

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_ROUGE_TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
_FULL_WIDTH_ALNUM = re.compile("[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]")


def rouge_tokens(text: str) -> list[str]:
    """ROUGE tokens: each CJK character, and each run of other letters/digits; the rest dropped.

    Full-width letters and digits are folded to ASCII first (NFKC, only when there are any:
    punctuation is dropped anyway and NFKC costs more than the rest).
    """
    if not text.isascii() and _FULL_WIDTH_ALNUM.search(text):
        text = unicodedata.normalize("NFKC", text)
    return _ROUGE_TOKEN.findall(text.lower())


@lru_cache(maxsize=4096)
def _reference_tokens(text: str) -> tuple[str, ...]:
    """Tokens of a reference text, cached: every model's answer to an item is scored against it."""
    return tuple(rouge_tokens(text))


def _ngrams(tokens: Sequence[str], n: int) -> Counter:
    if n == 1:
        return Counter(tokens)
    return Counter(zip(*(tokens[i:] for i in range(n))))


def _f(hit: int, n_pred: int, n_ref: int) -> float:
    if not hit:
        return 0.0
    p, r = hit / n_pred, hit / n_ref
    return 2 * p * r / (p + r)


def rouge_n(pred: Sequence[str], ref: Sequence[str], n: int) -> float:
    """ROUGE-N F over token lists (clipped n-gram counts)."""
    p, r = _ngrams(pred, n), _ngrams(ref, n)
    return _f(sum((p & r).values()), sum(p.values()), sum(r.values()))


def rouge_l(pred: Sequence[str], ref: Sequence[str]) -> float:
    """ROUGE-L F over token lists (longest common subsequence)."""
    return _f(lcs_length(pred, ref), len(pred), len(ref))


def rouge(pred: str | None, ref: str) -> dict[str, float]:
    """ROUGE-1, ROUGE-2 and ROUGE-L F of one prediction against one reference text."""
    if pred is None:
        return {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}
    p, r = rouge_tokens(pred), _reference_tokens(ref)
    return {"rouge1": rouge_n(p, r, 1), "rouge2": rouge_n(p, r, 2), "rougeL": rouge_l(p, r)}


def lcs_length(a: Sequence, b: Sequence) -> int:
    """Length of the longest common subsequence, bit-parallel (Allison-Dix / Hyyro 2004).

    One big-integer step per token of the shorter sequence instead of a
    len(a) x len(b) table: a 500 x 500 case takes well under a millisecond.
    """
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return 0
    masks: dict = {}
    for i, t in enumerate(a):
        masks[t] = masks.get(t, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for t in b:
        m = masks.get(t)
        if m:
            u = v & m
            v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()

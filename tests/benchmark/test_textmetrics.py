"""The text metrics (benchmark/metrics/text.py: SQuAD and CMRC EM/F1, ROUGE, LCS, token recall) against
the official scripts, the rouge-score package or hand-computed cases, and free-text answer extraction
(benchmark/adapters/freetext.py: extract_span, extract_summary).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmark.adapters.freetext import extract_span, extract_summary
from benchmark.metrics.text import (
    best,
    cmrc_em,
    cmrc_f1,
    cmrc_tokens,
    lcs_length,
    longest_common_substring,
    rouge,
    rouge_l,
    rouge_n,
    rouge_tokens,
    squad_em,
    squad_f1,
    squad_normalize,
    token_recall,
)

# ------------------------------------------------------------------ SQuAD EM / F1


def test_squad_normalisation_is_the_official_one():
    assert squad_normalize("The  U.S. Air-Force!") == "us airforce"
    assert squad_normalize("An apple, a pear and THE plum") == "apple pear and plum"
    assert squad_normalize("theater") == "theater"  # articles only as whole words


def test_squad_em_f1_hand_computed():
    # pred tokens [barack, obama, was, president], gold [president, obama]: 2 common,
    # P = 2/4, R = 2/2, F1 = 2 * 0.5 * 1 / 1.5 = 2/3.
    assert squad_f1("Barack Obama was the president.", "President Obama") == pytest.approx(2 / 3)
    assert squad_em("the U.S.", "US") == 1.0
    assert squad_f1("x b b", "b b c") == pytest.approx(2 / 3)  # multiset: 2 common, P = R = 2/3
    assert squad_f1("x b b b", "b") == pytest.approx(2 * 0.25 * 1 / 1.25)
    assert squad_f1("a b b", "b b c") == pytest.approx(0.8)  # "a" is an article: [b b] vs [b b c]
    assert squad_f1(None, "x") == squad_em(None, "x") == 0.0
    assert squad_f1("nothing alike", "x y") == 0.0
    # best over gold aliases (ReCoRD): any alias counts
    assert best(squad_em, "United States", ["U.S.", "United States"]) == 1.0
    assert best(squad_f1, "United", ["U.S.", "United States"]) == pytest.approx(2 / 3)
    assert best(squad_f1, "x", []) == 0.0


# ------------------------------------------------------------------ CMRC 2018


def test_cmrc_segmentation_and_metrics_hand_computed():
    assert cmrc_tokens("1973年10月，任长春市邮局") == ["1973", "年", "10", "月", "任", "长", "春", "市", "邮", "局"]
    # "-" is in the official punctuation list and is dropped without ending the word: "ω-force" -> "ωforce"
    assert cmrc_tokens("光荣和ω-Force") == ["光", "荣", "和", "ωforce"]
    assert cmrc_tokens("iPhone 6s售价1.5万") == ["iphone", "6s", "售", "价", "1.5", "万"]
    # gold [光 荣 和 ωforce]; pred [光 荣]: longest common substring 2, P = 1, R = 1/2, F1 = 2/3
    assert cmrc_f1("光荣", "光荣和ω-force") == pytest.approx(2 / 3)
    # a common *substring*, not a bag of characters: pred 荣光 shares only one contiguous token
    assert cmrc_f1("荣光", "光荣") == pytest.approx(0.5)
    assert cmrc_em("《战国无双3》。", "战国无双3") == 1.0  # punctuation removed, as the official EM does
    assert cmrc_em("战国无双 3", "战国无双3") == 0.0  # spaces are not removed
    assert cmrc_f1(None, "光荣") == cmrc_em(None, "光荣") == 0.0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from("abc"), max_size=12), st.lists(st.sampled_from("abc"), max_size=12))
def test_longest_common_substring_against_brute_force(a, b):
    brute = max((k for i in range(len(a)) for j in range(len(b)) for k in range(1, min(len(a) - i, len(b) - j) + 1)
                 if a[i : i + k] == b[j : j + k]), default=0)
    assert longest_common_substring(a, b) == brute


# ------------------------------------------------------------------ ROUGE


def _lcs_dp(a, b) -> int:
    m = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            m[i + 1][j + 1] = m[i][j] + 1 if x == y else max(m[i][j + 1], m[i + 1][j])
    return m[-1][-1]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from("abcd"), max_size=40), st.lists(st.sampled_from("abcd"), max_size=40))
def test_bit_parallel_lcs_equals_dynamic_programming(a, b):
    assert lcs_length(a, b) == _lcs_dp(a, b) == lcs_length(b, a)


def test_rouge_tokens_chinese_characters_and_latin_words():
    assert rouge_tokens("北京天气，明日15度 iPhone-6！ＡＢＣ") == ["北", "京", "天", "气", "明", "日", "15", "度", "iphone",
                                                               "6", "abc"]
    assert rouge_tokens("The cat's hat.") == ["the", "cat", "s", "hat"]


def test_rouge_hand_computed_chinese_case():
    # ref 北京天气晴 (5 chars), pred 今天北京晴 (5 chars)
    # ROUGE-1: common {北,京,晴} + 天 (ref 天 once, pred 天 once) = 4 -> P = R = 4/5, F = 0.8
    # ROUGE-2: ref {北京,京天,天气,气晴}, pred {今天,天北,北京,京晴}: common {北京} -> 1/4, F = 0.25
    # ROUGE-L: LCS(北京天气晴, 今天北京晴) = 北京晴 = 3 -> F = 0.6
    r = rouge("今天北京晴。", "北京天气晴")
    assert r == {"rouge1": pytest.approx(0.8), "rouge2": pytest.approx(0.25), "rougeL": pytest.approx(0.6)}
    assert rouge(None, "北京") == {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}
    assert rouge("", "北京")["rouge1"] == 0.0
    # clipped counts: pred 京京京 against ref 北京: 1 match of 3 predicted, 1 of 2 reference
    assert rouge_n(list("京京京"), list("北京"), 1) == pytest.approx(2 * (1 / 3) * 0.5 / (1 / 3 + 0.5))
    assert rouge_l([], list("ab")) == 0.0


class _Tok:
    def tokenize(self, text):
        return rouge_tokens(text)


def test_rouge_matches_rouge_score_package():
    rs = pytest.importorskip("rouge_score.rouge_scorer")
    rng = random.Random(7)
    words = "the cat sat on mat a dog ran far away 2024 big".split()
    chars = "北京天气晴今明日雨风大小会议讨论结论"
    default = rs.RougeScorer(["rouge1", "rouge2", "rougeL"])  # its own tokenizer: lower-case [a-z0-9] words
    ours = rs.RougeScorer(["rouge1", "rouge2", "rougeL"], tokenizer=_Tok())
    for _ in range(200):
        en = [" ".join(rng.choices(words, k=rng.randint(1, 25))) for _ in range(2)]
        zh = ["".join(rng.choices(chars, k=rng.randint(1, 60))) for _ in range(2)]
        for (pred, ref), scorer in ((en, default), (zh, ours)):
            expected = scorer.score(ref, pred)  # rouge-score takes (target, prediction)
            got = rouge(pred, ref)
            for k in ("rouge1", "rouge2", "rougeL"):
                assert got[k] == pytest.approx(expected[k].fmeasure), (k, pred, ref)


def test_token_recall_hand_computed():
    assert token_recall("It was 5 months ago.", "5") == 1.0
    assert token_recall("Answer: Business administration", "Business Administration degree") == pytest.approx(2 / 3)
    assert token_recall("a b", "b b") == 0.5  # multiset: one of the two b's
    assert token_recall(None, "5") == 0.0


# ------------------------------------------------------------------ extraction


@pytest.mark.parametrize(
    "reply, span",
    [
        ("Answer: Luna", "Luna"),
        ("answer:luna.", "luna"),
        ('The answer is "U.S. House".', "U.S. House"),
        ("Final answer: 42", "42"),
        ("答案：长春市邮局国际联邮员。", "长春市邮局国际联邮员"),
        ("答案是“光荣和ω-force”", "光荣和ω-force"),
        ("<think>it is Kay</think>\n**Answer:** Avery Kay", "Avery Kay"),
        ("Let me check the passage.\nAnswer: Warthog\nIt is the nickname.", "Warthog"),
        ("Answer:\n\n  Luna  ", "Luna"),
        ("Luna\n\nBecause you said so.", "Luna"),
        ("「战国无双3」", "战国无双3"),
        ("", None),
        ("   \n ", None),
        ("Answer: ", None),
        ('Answer: ""', None),
        (None, None),
    ],
)
def test_extract_span(reply, span):
    assert extract_span(reply) == span


def test_extract_summary():
    assert extract_summary("摘要：北京明天回暖。") == "北京明天回暖。"
    assert extract_summary("**Summary:** Two lines\nof text") == "Two lines\nof text"
    assert extract_summary("<think>x</think>“会议讨论了预算。”") == "会议讨论了预算。"
    assert extract_summary("") is None and extract_summary("摘要：") is None

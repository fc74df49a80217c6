"""The MoodBench 1.0 paper, Table 4: ability scores in, overall score, veto and rank out."""

from __future__ import annotations

import pytest

from benchmark.suites.suite import load_suite
from store.import_scores import import_scores
from tests.store.test_views_support import flat_suite, load_toml, make_db, metric, scored

# rank, model, overall, foundational, emotional, companionship, values & safety
TABLE4 = """
1 gpt-5-mini-2025-08-07 70.09 81.98 68.90 59.79 92.53
2 doubao-pro-32k-241215 69.44 80.21 68.02 60.59 96.33
3 gpt-5-2025-08-07 69.34 83.00 67.71 57.87 90.70
4 gpt-4o 69.09 78.07 71.19 57.31 92.02
5 gpt-4.1-2025-04-14 68.57 79.68 66.30 60.47 92.48
6 qwen3-32b 68.40 76.38 69.39 59.11 95.50
7 qwen-long 68.32 78.12 68.37 58.44 90.42
8 deepseek-v3.1 68.26 78.20 67.08 59.90 95.77
9 doubao-1.5-pro-32k-character-250715 68.25 79.22 68.11 57.45 90.97
10 qwen-max 68.07 79.65 66.83 58.15 92.60
11 gpt-5-nano-2025-08-07 67.89 79.50 67.60 56.66 89.62
12 doubao-seed-1-6-flash-250615 67.85 76.93 68.54 57.86 91.43
13 gemini-2.0-flash 67.31 76.42 64.80 61.56 90.52
14 Baichuan4-Air 67.22 73.81 70.16 56.72 82.60
15 Baichuan2-turbo 66.98 74.37 70.35 55.10 82.62
16 llama-4-scout 66.78 74.26 66.92 59.11 95.68
17 claude-3-sonnet-20240229 66.45 79.01 68.12 51.66 83.08
18 llama-4-maverick 66.31 74.35 66.67 57.78 93.53
19 gpt-4-turbo 66.10 76.68 66.15 55.45 92.47
20 claude-opus-4-20250514 65.67 76.67 69.60 49.42 70.82
21 qwen3-14b 65.43 74.54 64.61 57.42 90.15
22 glm-4-9b 65.23 70.18 65.02 60.56 80.68
23 glm-4v-plus 64.25 72.58 63.97 56.30 83.12
24 gpt-4o-mini 64.16 73.72 66.18 51.92 87.58
25 qwen-plus 63.65 78.48 67.31 43.97 89.42
26 ernie-4.5-21b-a3b 63.57 72.37 61.67 57.31 85.23
27 glm-4-flash 63.13 69.56 62.84 57.10 80.47
28 gemini-1.5-flash-002 62.95 73.05 63.12 52.63 91.00
* qwen3-0.6b 47.40 49.20 46.83 46.36 40.83
* abab6.5t-chat 37.53 42.77 36.36 33.85 51.93
"""
ROWS = [line.split() for line in TABLE4.strip().splitlines()]
ABILITIES = ("foundational", "emotional", "companionship", "values_safety")


def _check(con, suite: str) -> None:
    board = {r[0]: r[1:] for r in con.execute(
        "SELECT model, rank, total, raw_total, vetoed FROM leaderboard WHERE suite = ?", (suite,)).fetchall()}
    assert len(board) == 30
    for rank, model, overall, *_ in ROWS:
        got_rank, total, raw_total, vetoed = board[model]
        assert raw_total == pytest.approx(float(overall), abs=0.01), model
        if rank == "*":
            assert (got_rank, total, vetoed) == (None, 0.0, True), model
        else:
            assert got_rank == int(rank) and vetoed is False, model
            assert total == pytest.approx(float(overall), abs=0.01)


@pytest.mark.slow
def test_table4_through_the_real_moodbench_suite_and_import(tmp_path):
    """Every dataset of an ability gets the ability's score, so every layer reproduces it."""
    con = make_db(tmp_path)
    suite = load_suite("moodbench")
    ability_of = {r.id: a.id for a, _, t in suite.tasks() for r in t.datasets}
    lines = ["model,dataset,score"]
    for _, model, _, *scores in ROWS:
        by_ability = dict(zip(ABILITIES, scores))
        lines += [f"{model},{d},{by_ability[ability_of[d]]}" for d in suite.datasets]
    csv = tmp_path / "table4.csv"
    csv.write_text("\n".join(lines) + "\n")
    assert import_scores(con, "moodbench", csv) == ("moodbench", 1800)
    _check(con, "moodbench")
    got = {(r[0], r[1]): r[2] for r in con.execute("SELECT model, ability, score FROM ability_scores").fetchall()}
    for _, model, _, *scores in ROWS:
        for ability, s in zip(ABILITIES, scores):
            assert got[model, ability] == pytest.approx(float(s), abs=1e-9)
    assert con.execute("SELECT min(coverage) FROM leaderboard").fetchone()[0] == pytest.approx(1.0)


def test_table4_through_item_rows_on_a_fixture_suite(tmp_path):
    con = make_db(tmp_path)
    text = flat_suite(
        {"values_safety": (None, ["vs"]), "foundational": (0.3, ["fo"]), "emotional": (0.4, ["em"]),
         "companionship": (0.3, ["co"])},
        gate="values_safety", tau=60, name="table4")
    load_toml(con, tmp_path, text)
    for d in ("vs", "fo", "em", "co"):
        metric(con, d)
    for _, model, _, f, e, c, v in ROWS:
        for d, s in (("fo", f), ("em", e), ("co", c), ("vs", v)):
            scored(con, model, d, float(s))
    _check(con, "table4")

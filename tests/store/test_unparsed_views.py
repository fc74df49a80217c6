"""Unread answers beside every score (store/hierarchy/unparsed.sql, dataset_scores.unparsed_share) and in `report`,
on a hand-made DuckDB file with hand-computed values."""

from __future__ import annotations

import pytest

from engine.cli import main
from tests.store.test_views_support import flat_suite, items, load_toml, make_db, metric, one


@pytest.fixture
def db(tmp_path):
    con = make_db(tmp_path)
    load_toml(con, tmp_path, flat_suite({"a": (1.0, ["d1", "d2"])}))
    metric(con, "d1")
    metric(con, "d2", "micro_f1", "micro_f1", "tp", "fp", "fn")
    # d1, accuracy. m1: 2 right, 1 wrong, 2 unread: all 2/5, read only 2/3.
    items(con, "m1", "d1", [1, 1, 0, None, None])
    # m2: everything read.
    items(con, "m2", "d1", [1, 0, 1, 0])
    # m3: 1 unread of 30 (3.3 %, under 5 %) but 15/30 -> 15/29 moves 1.72 points.
    items(con, "m3", "d1", [1.0] * 15 + [0.0] * 14 + [None])
    # d2, micro F1 from tp/fp/fn. m1: all 2*1/(2+1+3) = 1/3; read only 2/(2+1+1) = 1/2.
    items(con, "m1", "d2", [1.0, 0.0, None],
          measures=[{"tp": 1, "fp": 0, "fn": 0}, {"tp": 0, "fp": 1, "fn": 1}, {"tp": 0, "fp": 0, "fn": 2}])
    yield con
    con.close()


def test_unparsed_effect_by_hand(db):
    got = {(m, d): r for m, d, *r in db.execute(
        "SELECT model, dataset, n_ok, n_unparsed, unparsed_share, value_all, value_read, delta_points, "
        "flagged_share, flagged_moves FROM unparsed_effect").fetchall()}
    assert got[("m1", "d1")][:4] == [5, 2, 0.4, 0.4]
    assert got[("m1", "d1")][4] == pytest.approx(2 / 3)
    assert got[("m1", "d1")][5] == pytest.approx(100 * (2 / 3 - 0.4))
    assert got[("m1", "d1")][6:] == [True, True]
    assert got[("m2", "d1")][1:] == [0, 0.0, 0.5, 0.5, 0.0, False, False]
    assert got[("m3", "d1")][2] == pytest.approx(1 / 30)
    assert got[("m3", "d1")][5] == pytest.approx(100 * (15 / 29 - 0.5))
    assert got[("m3", "d1")][6:] == [False, True]
    assert got[("m1", "d2")][3:6] == pytest.approx([1 / 3, 1 / 2, 100 / 6])
    # The same value the leaderboard's metric_values computes over every answer.
    assert one(db, "SELECT value FROM metric_values WHERE model = 'm1' AND dataset = 'd2'") == pytest.approx(1 / 3)
    flagged = db.execute("SELECT model, dataset FROM unparsed_flags ORDER BY 1, 2").fetchall()
    assert flagged == [("m1", "d1"), ("m1", "d2"), ("m3", "d1")]


def test_share_in_dataset_scores_and_per_model(db):
    shares = dict(((m, d), s) for m, d, s in db.execute(
        "SELECT model, dataset, unparsed_share FROM dataset_scores").fetchall())
    assert shares == {("m1", "d1"): 0.4, ("m1", "d2"): pytest.approx(1 / 3), ("m2", "d1"): 0.0,
                      ("m3", "d1"): pytest.approx(1 / 30)}
    per_model = {m: r for m, *r in db.execute(
        "SELECT model, mean_unparsed_share, worst_unparsed_share, worst_dataset, n_flagged_share, n_flagged_moves "
        "FROM model_unparsed").fetchall()}
    assert per_model["m1"] == [pytest.approx((0.4 + 1 / 3) / 2), 0.4, "d1", 2, 2]
    assert per_model["m2"] == [0.0, 0.0, "d1", 0, 0]
    assert per_model["m3"][3:] == [0, 1]


@pytest.mark.slow
def test_report_shows_the_share_and_warns(db, tmp_path, capsys):
    db.close()
    path = str(tmp_path / "results.duckdb")
    assert main(["report", path]) == 0
    out = capsys.readouterr().out
    assert "Unparsed" in out and "37.5%" in out  # m1: 3 of its 8 answered items unread (2/5 and 1/3)
    assert "warning: m1 on d1: 40.0% of answers unread (2/5, over 5%); its score moves +26.7 points" in out
    assert "warning: m3 on d1: its score moves +1.7 points when unread answers are left out" in out
    assert "m2 on" not in out
    assert main(["report", path, "--model", "m1"]) == 0
    out = capsys.readouterr().out
    assert "40.0% unread" in out and "warning: m1 on d2" in out and "m3 on" not in out

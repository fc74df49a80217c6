"""Scenarios played several times (play kinds): the score averages each scenario's plays, and the
bootstrap resamples scenarios, then plays within each (store/stats/draws.py: resample_plays)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from store.hierarchy.bootstrap import build_replicates, compute_intervals, drop_replicates
from store.stats.draws import resample_counts, resample_plays
from tests.store.test_views_support import flat_suite, load_toml, make_db, metric, one


@pytest.fixture
def con(tmp_path):
    c = make_db(tmp_path)
    yield c
    c.close()


def plays(con, model: str, dataset: str, scenarios: dict[str, list[float | None]]) -> None:
    """One results row per play (sample); None: a failed play (an error row, never scored)."""
    rows = [(model, dataset, item, s, "ok" if v is not None else "error", v)
            for item, scores in scenarios.items() for s, v in enumerate(scores)]
    con.executemany("INSERT INTO results (model, dataset, item_id, sample, status, attempts, prediction, score) "
                    "VALUES (?, ?, ?, ?, ?, 1, '1', ?)", rows)


def bounds(con, model: str = "m", dataset: str = "d") -> tuple[float, float]:
    compute_intervals(con, replicates=1000, seed=0, force=True)
    return one(con, "SELECT ci_low, ci_high FROM intervals WHERE model = ? AND level = 'dataset' AND node = ?",
               model, dataset)


def test_a_scenario_counts_once_whatever_its_plays(con, tmp_path):
    """Scenario a: plays 0.2 and 0.8 (mean 0.5); b: 0.9 and a failed play (mean 0.9). Scenario mean
    (0.5 + 0.9) / 2 = 0.7, where a mean over the rows would say (0.2 + 0.8 + 0.9) / 3 = 0.633."""
    load_toml(con, tmp_path, flat_suite({"a": (1, ["d"])}))
    metric(con, "d", "final_emotion", kind="play_mean")
    plays(con, "m", "d", {"a": [0.2, 0.8], "b": [0.9, None]})
    assert math.isclose(one(con, "SELECT score FROM dataset_scores WHERE model = 'm'"), 70.0)
    build_replicates(con, replicates=5, seed=0)
    try:  # the bootstrap's identity replicate gives the same number by its own path
        point = one(con, "SELECT score FROM boot_dataset_scores WHERE replicate = -1")
    finally:
        drop_replicates(con)
    assert math.isclose(point, 70.0)


def test_plays_that_disagree_widen_the_interval_hand_computed(con, tmp_path):
    """One scenario. Played once (0.2): nothing to resample, the interval is [20, 20]. Played twice
    (0.2, 0.8): a replicate draws the scenario, then two plays of it: 20 with probability 1/4, 50 with
    1/2, 80 with 1/4, so the 2.5 % and 97.5 % quantiles are 20 and 80."""
    load_toml(con, tmp_path, flat_suite({"a": (1, ["d", "e"])}))
    for d in ("d", "e"):
        metric(con, d, "final_emotion", kind="play_mean")
    plays(con, "m", "d", {"s": [0.2]})
    plays(con, "m", "e", {"s": [0.2, 0.8]})
    assert bounds(con, dataset="d") == pytest.approx((20.0, 20.0))
    assert bounds(con, dataset="e") == pytest.approx((20.0, 80.0))
    build_replicates(con, replicates=1000, seed=0)
    try:
        shares = dict(con.execute("SELECT round(score), count(*) / 1000 FROM boot_dataset_scores "
                                  "WHERE dataset = 'e' AND replicate >= 0 GROUP BY ALL").fetchall())
    finally:
        drop_replicates(con)
    assert set(shares) == {20.0, 50.0, 80.0}
    assert shares[50.0] == pytest.approx(0.5, abs=0.05) and shares[20.0] == pytest.approx(0.25, abs=0.05)


def test_the_simulators_noise_is_inside_the_interval(con, tmp_path):
    """20 scenarios, each played twice with 0.3 and 0.7, against the same scenarios played once at 0.5.
    Every scenario's mean is 0.5: resampling scenarios alone gives a zero width. Resampling plays too,
    a scenario's replicate mean has variance 0.04 / 2 (two draws from {0.3, 0.7}), the dataset's
    0.02 / 20 = 0.001: a 95 % interval about 2 x 1.96 x 100 x sqrt(0.001) = 12.4 points wide."""
    load_toml(con, tmp_path, flat_suite({"a": (1, ["once", "twice"])}))
    for d in ("once", "twice"):
        metric(con, d, "final_emotion", kind="play_mean")
    plays(con, "m", "once", {f"s{i:02d}": [0.5] for i in range(20)})
    plays(con, "m", "twice", {f"s{i:02d}": [0.3, 0.7] for i in range(20)})
    lo, hi = bounds(con, dataset="once")
    assert hi - lo == pytest.approx(0.0, abs=1e-6)
    lo, hi = bounds(con, dataset="twice")
    assert hi - lo == pytest.approx(2 * 1.959964 * 100 * math.sqrt(0.001), rel=0.2)
    assert lo < 50 < hi


def test_one_play_per_scenario_is_the_one_stage_bootstrap(tmp_path):
    """A play kind over single plays draws exactly what the item bootstrap of kind 'mean' draws."""
    scores = [0.1 * (i % 7) for i in range(30)]
    got = []
    for kind in ("play_mean", "mean"):
        (tmp_path / kind).mkdir()
        c = make_db(tmp_path / kind)
        load_toml(c, tmp_path / kind, flat_suite({"a": (1, ["d"])}))
        metric(c, "d", "final_emotion", kind=kind)
        plays(c, "m", "d", {f"s{i:02d}": [v] for i, v in enumerate(scores)})
        got.append(bounds(c))
        c.close()
    assert got[0] == pytest.approx(got[1]) and got[0][0] < got[0][1]


def test_play_ratio_averages_numerator_and_denominator_per_scenario(con, tmp_path):
    """Recall: scenario a's plays recall 1 of 1 and 0 of 1 (0.5 / 1), b's 2 of 2 (2 / 2):
    (0.5 + 2) / (1 + 2) = 0.8333."""
    load_toml(con, tmp_path, flat_suite({"a": (1, ["d"])}))
    metric(con, "d", "recall", kind="play_ratio", a="hit", b="asked")
    rows = [("a", 0, 1, 1), ("a", 1, 0, 1), ("b", 0, 2, 2)]
    con.executemany("INSERT INTO results (model, dataset, item_id, sample, status, attempts, prediction, score, "
                    "measures) VALUES ('m', 'd', ?, ?, 'ok', 1, '1', 0, json_object('hit', ?, 'asked', ?))", rows)
    assert math.isclose(one(con, "SELECT score FROM dataset_scores WHERE model = 'm'"), 100 * 2.5 / 3)
    build_replicates(con, replicates=3, seed=0)
    try:
        assert math.isclose(one(con, "SELECT score FROM boot_dataset_scores WHERE replicate = -1"), 100 * 2.5 / 3)
    finally:
        drop_replicates(con)


def test_paired_comparison_keeps_the_plays_both_answered(con, tmp_path):
    """The comparison's sample (engine/report/compare.py): the plays both models answered."""
    load_toml(con, tmp_path, flat_suite({"a": (1, ["d"])}))
    metric(con, "d", "final_emotion", kind="play_mean")
    plays(con, "m", "d", {"a": [0.2, 0.8], "b": [0.4, 0.6]})
    plays(con, "n", "d", {"a": [0.5, None], "b": [0.4, 0.6]})
    build_replicates(con, replicates=10, seed=0, models=("m", "n"))
    try:
        units = con.execute("SELECT item_id, sample FROM boot_items ORDER BY ALL").fetchall()
        got = dict(con.execute("SELECT name, score FROM boot_dataset_scores JOIN boot_models USING (model) "
                               "WHERE replicate = -1").fetchall())
    finally:
        drop_replicates(con)
    assert units == [("a", 0), ("b", 0), ("b", 1)]
    assert got == pytest.approx({"m": 100 * (0.2 + 0.5) / 2, "n": 100 * (0.5 + 0.5) / 2})


def test_resample_plays_draws_each_drawn_scenarios_plays():
    counts = resample_counts(3, "d", "md5", 4, 200)
    of = np.array([0, 0, 0, 1, 2, 2, 3, 3])
    c = resample_plays(3, "d", "md5", counts, of)
    assert c.shape == (200, 8)
    k = np.bincount(of)
    per_item = np.stack([c[:, of == i].sum(axis=1) for i in range(4)], axis=1)
    assert (per_item == counts * k).all()  # each draw of a scenario draws as many plays as it has
    assert (c[:, 3] == counts[:, 1]).all()  # one play: as the one-stage bootstrap
    assert (c == resample_plays(3, "d", "md5", counts, of)).all()
    assert not (c == resample_plays(4, "d", "md5", counts, of)).all()


def test_veto_and_rank_ranges_carry_the_plays_noise(con, tmp_path):
    """Gate g (tau 40): model m's one scenario played at 20 and 80 falls under 40 when both draws are the
    20 play, a quarter of the replicates: p_veto 0.25. Model n's scenario at 50 in both plays is never
    vetoed. On d, m (20 / 80) against n (50): m ranks first in a replicate scoring it 80 (more than n's
    50 on d, same gate), else second: its rank range is 1-2 where one play would pin it."""
    load_toml(con, tmp_path, flat_suite({"a": (1, ["d"]), "safety": (None, ["g"])}, gate="safety", tau=40))
    for ds in ("d", "g"):
        metric(con, ds, "final_emotion", kind="play_mean")
    plays(con, "m", "g", {"s": [0.2, 0.8]})
    plays(con, "n", "g", {"s": [0.5, 0.5]})
    plays(con, "m", "d", {"s": [0.2, 0.8]})
    plays(con, "n", "d", {"s": [0.5, 0.5]})
    compute_intervals(con, replicates=1000, seed=0, force=True)
    got = {r[0]: r[1:] for r in con.execute("SELECT model, p_veto, rank_low, rank_high FROM leaderboard").fetchall()}
    assert got["m"][0] == pytest.approx(0.25, abs=0.04) and got["n"][0] == 0.0
    assert (got["m"][1], got["m"][2]) == (1, 2) and (got["n"][1], got["n"][2]) == (1, 2)


def test_judge_verdicts_count_once_per_scenario(con, tmp_path):
    """A judge metric of a play dataset: scenario a's plays judged 2 and 4 (mean 3), b's 5 and one reply the
    judge could not read (unparsed: no verdict): (3 + 5) / 2 = 4, not the verdicts' (2 + 4 + 5) / 3."""
    load_toml(con, tmp_path, flat_suite({"a": (1, ["d"])}, methods={"d": '[{ metric = "judge_support", '
                                                                         'normalization = "numeric", min = 1, max = 5 }]'}))
    metric(con, "d", "final_emotion", kind="play_mean")
    plays(con, "m", "d", {"a": [0.5, 0.5], "b": [0.5, 0.5]})
    con.execute("INSERT INTO judge_metrics VALUES ('d', 'judge_support', 'mean', 'score', 'r1', 'j')")
    verdicts = [("a", 0, "ok", 2.0), ("a", 1, "ok", 4.0), ("b", 0, "ok", 5.0), ("b", 1, "unparsed", None)]
    con.executemany("INSERT INTO judgements (model, dataset, item_id, sample, judge, rubric, answer_md5, status, "
                    "score, attempts) VALUES ('m', 'd', ?, ?, 'j', 'r1', md5(''), ?, ?, 1)", verdicts)
    assert one(con, "SELECT value FROM metric_values WHERE metric = 'judge_support'") == pytest.approx(4.0)
    assert one(con, "SELECT score FROM dataset_scores") == pytest.approx(75.0)
    build_replicates(con, replicates=3, seed=0)
    try:
        assert one(con, "SELECT score FROM boot_dataset_scores WHERE replicate = -1") == pytest.approx(75.0)
    finally:
        drop_replicates(con)


def test_draws_in_blocks_of_replicates_are_the_draws_of_one_block(monkeypatch):
    # The blocks bound memory (store/stats/draws.py _BLOCK); the draws must not depend on them, or a
    # stored interval would move with the block size. Uneven blocks (7 and 3 replicates) and plays
    # of 1-3 per scenario, against one block holding everything.
    import store.stats.draws as draws

    of = np.array([0, 1, 1, 2, 2, 2, 3, 4, 4])
    monkeypatch.setattr(draws, "_BLOCK", 1 << 30)
    first = resample_counts(5, "d", "ids", 5, 37)
    whole = first, resample_plays(5, "d", "ids", first, of)
    for block in (35, 7 * 9, 1):  # 7 replicates of 5 items; 7 of 9 plays; a replicate per block
        monkeypatch.setattr(draws, "_BLOCK", block)
        counts = resample_counts(5, "d", "ids", 5, 37)
        assert np.array_equal(counts, whole[0])
        assert np.array_equal(resample_plays(5, "d", "ids", counts, of), whole[1])
    # each replicate draws 5 scenarios, and as many plays as its drawn scenarios have
    assert (whole[0].sum(axis=1) == 5).all() and (whole[1].sum(axis=1) == whole[0] @ np.bincount(of)).all()


def test_counts_as_float32_and_one_play_per_scenario_are_the_same_draws():
    # The bootstrap takes the counts as float32 from the start, and a dataset whose scenarios have one
    # play each as its item counts (store/hierarchy/bootstrap.py): the same numbers as the int64 draws.
    counts = resample_counts(9, "d", "md5", 300, 101)
    as_float = resample_counts(9, "d", "md5", 300, 101, np.float32)
    assert as_float.dtype == np.float32 and np.array_equal(as_float, counts)
    one_each = resample_plays(9, "d", "md5", as_float, np.arange(300), np.float32)
    assert one_each.dtype == np.float32 and np.array_equal(one_each, counts)
    of = np.repeat(np.arange(300), 2)  # two plays each: the second stage draws, in the dtype asked for
    two = resample_plays(9, "d", "md5", as_float, of, np.float32)
    assert two.dtype == np.float32 and np.array_equal(two, resample_plays(9, "d", "md5", counts, of))

"""An episode whose every turn is stored but whose results row is not (a kill between its last turn and its row)
is finished by the next run from its kept turns alone: no call, and the row an uninterrupted run stored, down to
the companion's model version and the tokens its transcript's calls used."""

from __future__ import annotations

import shutil

import duckdb

from simulator.server import SimServerProcess
from tests.integration.helpers import query, run_cli
from tests.integration.test_episodes import SEEKER, models, sweep_args

COLUMNS = ("item_id, status, response, prediction, score, measures, model_version, prompt_hash, scorer_version, "
           "finish_reason, identity, input_tokens, output_tokens")


def test_an_episode_with_every_turn_kept_is_finished_without_a_call(tmp_path):
    whole, cut = tmp_path / "whole.duckdb", tmp_path / "cut.duckdb"
    with SimServerProcess(mode="echo", profiles={"seeker-sim": {"mode": "fixed:" + SEEKER}}, seed=1) as sim:
        m = models(tmp_path / "models.toml", sim.base_url)
        assert run_cli(*sweep_args(m, whole, 4, 2)).returncode == 0
        shutil.copy(whole, cut)
        with duckdb.connect(str(cut)) as con:
            con.execute("DELETE FROM results WHERE item_id IN (SELECT min(item_id) FROM results)")
        sim.reset()
        r = run_cli(*sweep_args(m, cut, 4, 2))
        assert r.returncode == 0, r.stderr
        assert sim.stats()["total"] == 0
    sql = f"SELECT {COLUMNS} FROM results ORDER BY item_id"
    assert query(cut, sql) == query(whole, sql)
    assert query(cut, "SELECT count(*) FROM results WHERE model_version IS NULL") == [(0,)]
    assert query(cut, "SELECT count(*) FROM results WHERE input_tokens > 0 AND output_tokens > 0") == [(4,)]

"""`samples = k` on an interactive dataset (a suite's [datasets] table): each scenario played k times
against the simulated server, each play its own results and turns rows, resumed play by play, scored
once per scenario."""

from __future__ import annotations

import json
from pathlib import Path

from engine.lanes.episode import episode_seed
from simulator.server import SimServerProcess
from tests.integration.helpers import query, run_cli
from tests.integration.test_episodes import SEEKER, SUITE, models


def _args(m: Path, db: Path, samples: int, limit: int = 4, turns: int = 2) -> list[str]:
    suite = m.parent / f"suite-{samples}.toml"
    suite.write_text(SUITE.replace('synthetic_episodes = { methods', f"synthetic_episodes = {{ samples = {samples}, methods"))
    return ["sweep", str(m), "--db", str(db), "--suite", str(suite), "--limit", str(limit), "--turns", str(turns),
            "--quiet"]


def test_each_scenario_is_played_k_times_and_resumed_per_play(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="echo", profiles={"seeker-sim": {"mode": "fixed:" + SEEKER}}, seed=1) as sim:
        m = models(tmp_path / "models.toml", sim.base_url)
        r = run_cli(*_args(m, db, 1))
        assert r.returncode == 0, r.stderr
        once = sim.stats()["by_model"]["m1"]
        sim.reset()
        r = run_cli(*_args(m, db, 3))  # plays 1 and 2 are new; play 0 is stored and never asked again
        assert r.returncode == 0, r.stderr
        assert sim.stats()["by_model"]["m1"] == 2 * once
        sim.reset()
        r = run_cli(*_args(m, db, 3))
        assert r.returncode == 0 and sim.stats()["total"] == 0, r.stderr
    plays = query(db, "SELECT item_id, list(sample ORDER BY sample) FROM results WHERE status = 'ok' GROUP BY 1")
    assert len(plays) == 4 and all(s == [0, 1, 2] for _, s in plays)
    # the turns of each play are its own rows (the key has the sample), the same dialogue here
    per_play = query(db, "SELECT item_id, sample, count(*) FROM turns GROUP BY ALL ORDER BY ALL")
    assert len(per_play) == 12
    assert all(n == per_play[3 * (k // 3)][2] for k, (_, _, n) in enumerate(per_play))
    ep = query(db, "SELECT count(*), count(DISTINCT item_id) FROM episodes")
    assert ep == [(12, 4)]
    assert query(db, "SELECT episodes, scenarios FROM episode_summary") == [(12, 4)]
    assert query(db, "SELECT round(score, 6) FROM dataset_scores") == [(60.0,)]
    transcripts = query(db, "SELECT DISTINCT response FROM results WHERE item_id = (SELECT min(item_id) FROM results)")
    assert len(transcripts) == 1 and json.loads(transcripts[0][0])["end"] == "cap"


def test_plays_have_their_own_seeds():
    seeds = {episode_seed("synthetic_episodes", "e00001", p) for p in range(5)}
    assert len(seeds) == 5
    assert episode_seed("synthetic_episodes", "e00001", 2) == episode_seed("synthetic_episodes", "e00001", 2)
    assert episode_seed("synthetic_episodes", "e00002", 0) not in seeds


def test_samples_on_a_single_turn_dataset_is_refused(tmp_path):
    suite = tmp_path / "s.toml"
    suite.write_text(SUITE.replace("synthetic_episodes", "synthetic").replace(
        'synthetic = { methods = [{ metric = "final_emotion", normalization = "ratio" }] }',
        'synthetic = { samples = 2 }'))
    m = tmp_path / "models.toml"
    m.write_text('[[models]]\nname = "m1"\nprovider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m1"\n')
    r = run_cli("sweep", str(m), "--db", str(tmp_path / "r.duckdb"), "--suite", str(suite), "--limit", "2")
    assert r.returncode != 0 and "samples applies to interactive datasets only" in r.stderr, r.stderr

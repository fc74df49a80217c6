"""Interactive datasets end to end against the simulated server: the companion (echo mode) and the
[user_simulator] (a scripted JSON seeker) over HTTP, turns stored, episodes scored, resumed without a
call, a kill -9 mid-dialogue continued after the last stored turn with the transcripts of an
uninterrupted run, unreadable simulator replies stored as simulator errors (never scored)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from simulator.server import SimServerProcess
from tests.integration.helpers import ROOT, query, run_cli

SEEKER = json.dumps({"reply": "I still feel low.", "emotion": 60, "reason": "heard", "end": False})
HAPPY = json.dumps({"reply": "Thank you, I feel much better.", "emotion": 100, "reason": "relieved", "end": False})


def models(path: Path, url: str, *, concurrency: int = 4, seeker_model: str = "seeker-sim") -> Path:
    path.write_text(
        f'[[models]]\nname = "m1"\nprovider = "openai"\nbase_url = "{url}"\nmodel = "m1"\n'
        f"max_concurrency = {concurrency}\nmax_retries = 0\n\n"
        f'[user_simulator]\nprovider = "openai"\nbase_url = "{url}"\nmodel = "{seeker_model}"\n'
        f"max_concurrency = {concurrency}\nmax_retries = 0\n")
    return path


# A suite placing the synthetic episodes in a hierarchy, beside nothing: dataset score -> total.
SUITE = """[suite]
name = "episodes-test"
version = "1"
[scoring]
[[ability]]
id = "companionship"
weight = 1
[[ability.sub_ability]]
id = "dialogue"
[[ability.sub_ability.task]]
id = "support"
level = "M"
datasets = ["synthetic_episodes"]
[datasets]
synthetic_episodes = { methods = [{ metric = "final_emotion", normalization = "ratio" }] }
"""


def sweep_args(m: Path, db: Path, limit: int, turns: int) -> list[str]:
    suite = m.parent / "suite.toml"
    suite.write_text(SUITE)
    return ["sweep", str(m), "--db", str(db), "--suite", str(suite), "--limit", str(limit),
            "--turns", str(turns), "--quiet"]


def test_episodes_stored_scored_and_resumed_without_a_call(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="echo", profiles={"seeker-sim": {"mode": "fixed:" + SEEKER}}, seed=1) as sim:
        m = models(tmp_path / "models.toml", sim.base_url)
        r = run_cli(*sweep_args(m, db, 6, 3))
        assert r.returncode == 0, r.stderr
        calls = sim.stats()["by_model"]
        sim.reset()
        r = run_cli(*sweep_args(m, db, 6, 3))
        assert r.returncode == 0 and "(0 rows written this run)" in r.stderr, r.stderr
        assert sim.stats()["total"] == 0  # finished episodes are never replayed
    rows = query(db, "SELECT item_id, status, score, response FROM results ORDER BY 1")
    assert len(rows) == 6 and all(s == "ok" and score == 0.6 for _, s, score, _ in rows)
    sessions = {i: json.loads(resp)["turns"][-1]["session"] + 1 for i, _, _, resp in rows}
    # Each session: the seeker opens (the simulator, unless the scenario has its own words and nothing is
    # injected), then 3 exchanges of one companion call and one simulator call; nothing stops earlier.
    companion = sum(3 * n for n in sessions.values())
    assert calls["m1"] == companion
    n_turns = query(db, "SELECT count(*) FILTER (WHERE role = 'companion'), count(*) FROM turns")[0]
    assert n_turns[0] == companion and n_turns[1] == 2 * companion + sum(sessions.values())
    opened_by_scenario = query(db, "SELECT count(*) FROM turns WHERE speaker = 'scenario'")[0][0]
    assert calls["seeker-sim"] == n_turns[1] - companion - opened_by_scenario
    ep = query(db, "SELECT count(*), min(exchanges), sum(simulator_errors), min(final_emotion) FROM episodes")
    assert ep == [(6, 3, 0, 60)]
    # turns -> episodes -> the dataset score (0-100) -> the hierarchy, up to the leaderboard's total.
    assert query(db, "SELECT round(score, 6) FROM dataset_scores WHERE dataset = 'synthetic_episodes'") == [(60.0,)]
    assert query(db, "SELECT model, round(total, 6) FROM leaderboard") == [("m1", 60.0)]


def test_stop_rule_ends_an_episode_on_success(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="echo", profiles={"seeker-sim": {"mode": "fixed:" + HAPPY}}, seed=1) as sim:
        r = run_cli(*sweep_args(models(tmp_path / "models.toml", sim.base_url), db, 4, 5))
        assert r.returncode == 0, r.stderr
        assert sim.stats()["by_model"]["m1"] == 4  # one reply each: the seeker reached 100
    assert query(db, "SELECT DISTINCT score, measures->>'success' FROM results") == [(1.0, "1.0")]


def test_unreadable_simulator_replies_are_simulator_errors(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="echo", profiles={"seeker-sim": {"mode": "fixed:I am not JSON at all"}},
                          seed=1) as sim:
        r = run_cli(*sweep_args(models(tmp_path / "models.toml", sim.base_url), db, 4, 2))
        assert r.returncode == 0, r.stderr
        asked = sim.stats()["by_model"]["seeker-sim"]
    rows = query(db, "SELECT status, error_class, score FROM results")
    assert rows == [("error", "simulator", None)] * 4  # never scored against the companion
    unread = query(db, "SELECT count(*), sum(attempts) FROM turns WHERE status = 'unreadable'")
    assert unread == [(4, asked)] and asked == 4 * 3  # each asked once and retried twice
    assert query(db, "SELECT count(*) FROM dataset_scores WHERE dataset = 'synthetic_episodes' "
                     "AND score IS NOT NULL") == [(0,)]


def _transcripts(db: Path) -> dict[str, str]:
    return dict(query(db, "SELECT item_id, response FROM results WHERE status = 'ok'"))


def test_kill_mid_dialogue_continues_after_the_last_stored_turn(tmp_path):
    limit, turns, width = 30, 4, 2 + 2
    profiles = {"seeker-sim": {"mode": "fixed:" + SEEKER}}
    with SimServerProcess(mode="echo", profiles=profiles, seed=1, latency_ms=20, request_log=True) as sim:
        m = models(tmp_path / "models.toml", sim.base_url, concurrency=2)
        whole = tmp_path / "whole.duckdb"
        assert run_cli(*sweep_args(m, whole, limit, turns), timeout=300).returncode == 0
        uninterrupted = sim.stats()["total"]
        once = Counter(sim.stats()["requests"])
        sim.reset()
        db = tmp_path / "killed.duckdb"
        for stop_at in (uninterrupted // 3, 2 * uninterrupted // 3):
            proc = subprocess.Popen([sys.executable, "-m", "engine", *sweep_args(m, db, limit, turns)], cwd=ROOT,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            deadline = time.monotonic() + 120
            while sim.stats()["total"] < stop_at:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read().decode()[-2000:]
                time.sleep(0.01)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            assert not _transcripts(db) or len(_transcripts(db)) < limit
        r = run_cli(*sweep_args(m, db, limit, turns), timeout=300)
        assert r.returncode == 0, r.stderr
        asked = sim.stats()["total"]
        log = Counter(sim.stats()["requests"])
    # Asked again: at most the calls in flight at each kill (one per episode in flight: the lane's width),
    # since an episode keeps its turn (the run's journal) before its next call.
    assert uninterrupted <= asked <= uninterrupted + 2 * width, (asked, uninterrupted)
    # The server's request log (per model, conversation id and prompt: one turn of one episode, or of the
    # episodes whose dialogues are word for word the same): every call of the uninterrupted run asked, none
    # else, and each call asked again at most once per kill (in flight then: at most one per episode).
    assert sum(once.values()) == uninterrupted and sum(log.values()) == asked  # every request logged
    assert set(log) == set(once) and all(log[k] >= n for k, n in once.items())
    assert all(log[k] - n <= 2 * once[k] for k, n in once.items())
    assert sum(log[k] - n for k, n in once.items()) <= 2 * width
    assert _transcripts(db) == _transcripts(whole)
    same = "SELECT item_id, session, turn, role, content, emotion FROM turns WHERE status = 'ok' ORDER BY ALL"
    assert query(db, same) == query(whole, same)

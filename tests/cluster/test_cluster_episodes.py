"""Episodes on a two-node Ray cluster (tests/cluster/conftest.py): `sweep --cluster` runs an interactive dataset in
its (model, dataset) units, one model's hosts on the head, the other's pinned to the worker node, and stores the
same results and the same turns, message for message, as the single-process sweep of the same command; episodes
cut short (their last turns and results row gone, as after a kill) go on after their kept turns on the cluster,
asking only the missing calls, to the same transcripts.

The companion is the simulated server's echo, the seeker its scripted JSON seeker (emotion from a crc32 of the
companion's words), so a transcript is a function of the dialogue: any turn asked differently shows. Last, the
worker node is SIGKILLed while m_worker's episodes are mid-dialogue there: the unit is lost, run again on the node
that replaces it, going on after the turns that landed, to the same transcripts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from simulator.server import SimServerProcess
from tests.cluster.conftest import ROOT
from tests.integration.test_episodes import SUITE

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[cluster]')")

LIMIT, TURNS = 8, 3
WORKER_LATENCY_MS = 150  # m_worker's episodes still run when the loss test kills its node
RESULTS = ("model, dataset, item_id, sample, status, error_class, attempts, response, prediction, score, measures, "
           "input_tokens, output_tokens, model_version, prompt_hash, scorer_version, finish_reason, blocked, identity")
TURNS_COLUMNS = ("model, dataset, item_id, sample, session, turn, role, status, content, emotion, reason, ended, "
                 "error_class, attempts, input_tokens, output_tokens, speaker, model_version, prompt_hash, identity")


def _models(path: Path, url: str) -> Path:
    common = f'provider = "openai"\nbase_url = "{url}"\nmax_retries = 0\n'
    path.write_text(
        f'[[models]]\nname = "m_head"\nmodel = "m_head"\nmax_concurrency = 4\n{common}\n'
        f'[[models]]\nname = "m_worker"\nmodel = "m_worker"\nmax_concurrency = 2\n'
        f'ray_resources = {{ worker = 1 }}\n{common}\n'
        f'[user_simulator]\nmodel = "seeker-sim"\nmax_concurrency = 4\nrpm = 60000\n{common}')
    return path


def _args(models: Path, db: Path, *extra: str) -> list[str]:
    suite = models.parent / "suite.toml"
    suite.write_text(SUITE)
    return [sys.executable, "-m", "engine", "sweep", str(models), "--db", str(db), "--suite", str(suite),
            "--limit", str(LIMIT), "--turns", str(TURNS), "--quiet", *extra]


def _sweep(models: Path, db: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(_args(models, db, *extra), cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=os.environ.copy())


def _rows(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _same(db: Path, baseline: Path, results: str = RESULTS) -> None:
    for cols, table, key in ((results, "results", "model, dataset, item_id, sample"),
                             (TURNS_COLUMNS, "turns", "model, dataset, item_id, sample, session, turn, role")):
        got, want = _rows(db, f"SELECT {cols} FROM {table} ORDER BY {key}"), \
            _rows(baseline, f"SELECT {cols} FROM {table} ORDER BY {key}")
        assert len(got) == len(want) > 0 and got == want, table


@pytest.fixture(scope="module")
def sim():
    profiles = {"seeker-sim": {"mode": "seeker"}, "m_worker": {"latency_ms": WORKER_LATENCY_MS}}
    with SimServerProcess(mode="echo", profiles=profiles, seed=1) as s:
        yield s


@pytest.fixture(scope="module")
def baseline(sim, tmp_path_factory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("one")
    models = _models(tmp / "models.toml", sim.base_url)
    r = _sweep(models, tmp / "one.duckdb")
    assert r.returncode == 0, r.stderr[-3000:]
    return models, tmp / "one.duckdb"


def test_episodes_on_the_cluster_store_the_single_process_transcripts(sim, baseline, ray_cluster, tmp_path):
    models, one = baseline
    db = tmp_path / "c.duckdb"
    sim.reset()
    r = _sweep(models, db, "--cluster", ray_cluster.address)
    assert r.returncode == 0, r.stderr[-3000:]
    asked = sim.stats()["by_model"]
    _same(db, one)
    assert _rows(db, "SELECT count(*), count(DISTINCT model) FROM results WHERE status = 'ok'") == [(2 * LIMIT, 2)]
    # Each model's units ran where its hosts were placed: m_worker's on the worker node, not the head.
    nodes = dict(_rows(db, "SELECT model, count(DISTINCT node_id) FROM cluster_units GROUP BY model"))
    assert nodes == {"m_head": 1, "m_worker": 1}
    head, worker = (_rows(db, f"SELECT any_value(node_id) FROM cluster_units WHERE model = '{m}'")[0][0]
                    for m in ("m_head", "m_worker"))
    assert head != worker
    # One call per stored turn (the scenario's own opening words are no call), nothing asked twice.
    calls = _rows(db, "SELECT count(*) FILTER (WHERE role = 'companion'), "
                      "count(*) FILTER (WHERE role = 'seeker' AND speaker <> 'scenario') FROM turns")[0]
    assert asked["m_head"] + asked["m_worker"] == calls[0] and asked["seeker-sim"] == calls[1]
    assert not any((db.parent / (db.name + ".landing")).glob("*.parquet"))  # every landed file ingested
    sim.reset()
    r = _sweep(models, db, "--cluster", ray_cluster.address)
    assert r.returncode == 0 and sim.stats()["total"] == 0, r.stderr[-3000:]  # finished episodes: never replayed


def test_episodes_cut_short_go_on_after_their_kept_turns_on_the_cluster(sim, baseline, ray_cluster, tmp_path):
    models, one = baseline
    db = tmp_path / "cut.duckdb"
    shutil.copy(one, db)
    # As after a kill mid-dialogue: three episodes of each model lose their results row and every turn after
    # their first exchange (the opening and exchange 1 kept).
    con = duckdb.connect(str(db))
    try:
        cut = con.execute("SELECT model, item_id FROM (SELECT model, item_id, row_number() OVER "
                          "(PARTITION BY model ORDER BY item_id) AS n FROM results) WHERE n <= 3").fetchall()
        lost = 0
        for model, item in cut:
            con.execute("DELETE FROM results WHERE model = ? AND item_id = ?", [model, item])
            gone = con.execute("DELETE FROM turns WHERE model = ? AND item_id = ? AND (session > 0 OR turn > 1) "
                               "AND speaker <> 'scenario' RETURNING 1", [model, item]).fetchall()
            lost += len(gone)
    finally:
        con.close()
    assert len(cut) == 6 and lost > 0
    sim.reset()
    r = _sweep(models, db, "--cluster", ray_cluster.address)
    assert r.returncode == 0, r.stderr[-3000:]
    assert sim.stats()["total"] == lost  # only the missing calls, none of the kept ones
    # The same transcripts and scores; an episode's results row counts the tokens of the calls its last run
    # made (engine/lanes/episode.py, on one machine too), so those two columns are left out here.
    _same(db, one, RESULTS.replace("input_tokens, output_tokens, ", ""))


def test_an_unreachable_simulator_leaves_the_episodes_unasked_and_not_the_models(sim, ray_cluster, tmp_path):
    """The [user_simulator] on a port nobody listens on: its breaker gives up, the episode units left are not handed
    out, and both models' single-turn units run; one line names the simulator, exit 3 (run again)."""
    models = tmp_path / "models.toml"
    text = _models(models, sim.base_url).read_text()
    head, seeker = text.split("[user_simulator]")
    models.write_text(head + "[user_simulator]" + seeker.replace(sim.base_url, "http://127.0.0.1:9/v1")
                      + "unreachable_after_s = 2\n")
    db = tmp_path / "gone.duckdb"
    r = _sweep(models, db, "--cluster", ray_cluster.address, "--datasets", "synthetic_episodes,synthetic")
    assert r.returncode == 3, r.stderr[-3000:]
    assert "unreachable: user_simulator (the [user_simulator]) could not be reached" in r.stderr, r.stderr[-3000:]
    assert "m_head" not in r.stderr.split("not finished:")[-1], r.stderr[-3000:]  # the models are not given up
    single = dict(_rows(db, "SELECT model, count(*) FROM results WHERE dataset = 'synthetic' AND status = 'ok' "
                            "GROUP BY 1"))
    assert single == {"m_head": LIMIT, "m_worker": LIMIT}
    assert _rows(db, "SELECT count(*) FROM results WHERE dataset = 'synthetic_episodes' AND status = 'ok'") == [(0,)]


def test_losing_the_worker_node_mid_dialogue_keeps_the_transcripts(sim, baseline, ray_cluster, tmp_path):
    models, one = baseline
    companion = _rows(one, "SELECT count(*) FROM turns WHERE model = 'm_worker' AND role = 'companion'")[0][0]
    db = tmp_path / "loss.duckdb"
    sim.reset()
    proc = subprocess.Popen(_args(models, db, "--cluster", ray_cluster.address), cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 120
        while sim.stats()["by_model"].get("m_worker", 0) < 0.4 * companion:
            assert proc.poll() is None and time.monotonic() < end, "the sweep ended before the kill"
            time.sleep(0.05)
        lost_node = ray_cluster.worker.node_id
        ray_cluster.kill_worker(back_after_s=2.0)
        _, err = proc.communicate(timeout=180)  # a hang fails here
    finally:
        proc.kill()
    assert proc.returncode == 0, err[-3000:]
    units = _rows(db, "SELECT attempt, node_id, status FROM cluster_units WHERE model = 'm_worker'")
    assert any(s == "lost" and node == lost_node for _a, node, s in units), units
    assert any(s == "done" and node == ray_cluster.worker.node_id for _a, node, s in units), units
    # The same transcripts, turn rows and scores (a resumed episode's row counts its last attempt's tokens).
    _same(db, one, RESULTS.replace("input_tokens, output_tokens, ", ""))

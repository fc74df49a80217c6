"""The same sweep on a two-node Ray cluster on loopback (tests/cluster/conftest.py): the live view per node
and Ctrl-C on one run, whose rerun equals the single-process sweep; still equal after losing the worker
node (and restarting the rate keeper) and after `kill -9` of the driver; one account's rate shared across
both nodes; a unit given up and a model no node can place, never a hang. One cluster for the module, and
scenarios that can share a run share it: every Ray run costs seconds of worker starts.

Models: `m_head` (an API model, on the head by default), `m_worker` (pinned to the worker node by a Ray
custom resource) on the simulator, and `m_vllm` (provider "vllm", one logical GPU: the worker node) whose
server is the stand-in `vllm` executable (tests/cluster/fake_vllm.py) that its host actor starts.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import duckdb
import pytest

from simulator.server import SimServerProcess
from tests.cluster import faults
from tests.cluster.faults import committed_after_kill, crash_rate_keeper as _crash_rate_keeper, rate_models
from tests.cluster.faults import fingerprints as _fingerprints
from tests.cluster.conftest import ROOT, WORKER
from tests.cluster.fake_vllm import write_executable
from tests.conftest import DATA_DIR
from tests.integration.report_db import free_port

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[cluster]')")

# Three small datasets of the suite, 20 items each: enough for units to run on both nodes at once (bench/cluster.py
# runs the 6 x 50).
DATASETS = ("copa", "wsc", "rte")
LIMIT = 20
# m_worker's latency (max_concurrency 4): its units still run when the loss test kills its node at 40% of its
# requests (the case: 250 ms).
WORKER_LATENCY_MS = 250
# Every column but run ids and timings.
COLUMNS = ("model, dataset, item_id, sample, status, error_class, error, attempts, response, prediction, gold, score, "
           "measures, input_tokens, output_tokens, model_version, prompt_hash, suite_version, scorer_version, "
           "finish_reason, blocked, cost_usd, identity, extracted_by")


def _models(path: Path, sim_url: str) -> Path:
    path.write_text(f"""
[accounts.acct]
rpm = 60000

[[models]]
name = "m_head"
provider = "openai"
base_url = "{sim_url}"
model = "m_head"
account = "acct"
max_concurrency = 8

[[models]]
name = "m_worker"
provider = "openai"
base_url = "{sim_url}"
model = "m_worker"
account = "acct"
max_concurrency = 4
ray_resources = {{ worker = 1 }}

[[models]]
name = "m_vllm"
provider = "vllm"
model = "stand-in/vllm-model"
max_concurrency = 4
gpus = 1
serve_args = ["--latency-ms", "{WORKER_LATENCY_MS}"]
""")
    return path


def _sweep_args(models: Path, db: Path, *extra: str, datasets: tuple[str, ...] = DATASETS,
                limit: int = LIMIT) -> list[str]:
    return ["sweep", str(models), str(db), "--datasets", ",".join(datasets), "--limit", str(limit),
            "--data-dir", str(DATA_DIR), "--quiet", *extra]


def _driver(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "engine", *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})


def _rows(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _assert_equal(db: Path, baseline: Path) -> None:
    order = "ORDER BY model, dataset, item_id, sample"
    got, want = _rows(db, f"SELECT {COLUMNS} FROM results {order}"), _rows(baseline, f"SELECT {COLUMNS} FROM results {order}")
    assert len(got) == len(want) == 3 * len(DATASETS) * LIMIT
    assert [r for r in got if r not in set(want)] == []  # 0 differing rows
    assert _rows(db, "SELECT count(*) - count(DISTINCT (model, dataset, item_id, sample)) FROM results") == [(0,)]
    board = "SELECT model, total, vetoed FROM leaderboard ORDER BY model"
    assert _rows(db, board) == _rows(baseline, board)


@pytest.fixture(scope="module")
def sim():
    with SimServerProcess(profiles={"m_worker": {"latency_ms": WORKER_LATENCY_MS}}) as s:
        yield s


@pytest.fixture(scope="module")
def baseline(sim, request, tmp_path_factory) -> tuple[Path, Path]:
    """The single-process sweep (no --cluster) of the same models file: the reference rows. It runs while the
    module's cluster starts: neither needs the other."""
    if not all((DATA_DIR / d).is_dir() for d in DATASETS):
        pytest.skip(f"real data for {', '.join(DATASETS)} not found under {DATA_DIR}")
    tmp = tmp_path_factory.mktemp("baseline")
    models = _models(tmp / "models.toml", sim.base_url)
    write_executable(tmp)  # the stand-in `vllm`: the cluster puts its own on PATH only once it is up
    proc = _driver(_sweep_args(models, tmp / "one.duckdb"), {"PATH": f"{tmp}{os.pathsep}{os.environ['PATH']}"})
    try:
        request.getfixturevalue("ray_cluster")
        _, err = proc.communicate(timeout=150)
    finally:
        proc.kill()
    assert proc.returncode == 0, err[-3000:]
    return models, tmp / "one.duckdb"


@pytest.fixture(scope="module")
def interrupted(sim, baseline, ray_cluster, tmp_path_factory) -> dict:
    """A cluster sweep with --serve, interrupted by SIGINT (Ctrl-C) while m_worker's units run on the worker
    node; what its live view said meanwhile (/api/live, polled) and how it ended."""
    models, _ = baseline
    db = tmp_path_factory.mktemp("ctrl-c") / "int.duckdb"
    port = free_port()
    sim.reset()
    proc = _driver(_sweep_args(models, db, "--cluster", ray_cluster.address, "--serve", str(port)))
    seen: list[dict] = []

    def worker_running() -> bool:
        with contextlib.suppress(OSError, ValueError):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/live", timeout=5) as r:
                seen.append(json.loads(r.read()))
        return bool(seen) and any(u["model"] == "m_worker" and u["status"] == "running"
                                  for u in seen[-1].get("units", [])) and (
            sim.stats()["by_model"].get("m_worker", 0) >= 0.2 * len(DATASETS) * LIMIT)

    try:
        _wait(worker_running, proc)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    asked = sim.stats()["total"]
    time.sleep(1.0)
    return dict(rc=proc.returncode, err=err, live=seen, db=db, args=_sweep_args(models, db, "--cluster",
                ray_cluster.address), asked_after=sim.stats()["total"] - asked)


def test_the_live_view_shows_what_runs_on_each_node(interrupted, ray_cluster):
    live = interrupted["live"]
    units = [u for snap in live for u in snap["units"]]
    assert {u["node"] for u in units if u["model"] in ("m_worker", "m_vllm")} == {ray_cluster.worker.node_id}
    head = {u["node"] for u in units if u["model"] == "m_head"}
    assert head and ray_cluster.worker.node_id not in head
    last = live[-1]
    assert {"node", "model", "dataset", "attempt", "status"} == set(last["units"][0])
    assert sorted(m["model"] for m in last["models"]) == ["m_head", "m_vllm", "m_worker"]
    assert {"leaderboard", "coverage"} <= set(last["report"])  # the ordinary live page's data, as on one machine


def test_ctrl_c_stops_the_cluster_work_leaving_a_consistent_database(interrupted):
    db = interrupted["db"]
    assert interrupted["rc"] == 130, interrupted["err"][-3000:]
    assert interrupted["asked_after"] == 0  # no host of the run asks anything once the driver has exited
    assert _rows(db, "SELECT outcome FROM runs") == [("interrupted",)]
    statuses = dict(_rows(db, "SELECT status, count(*) FROM cluster_units GROUP BY 1"))
    assert "running" not in statuses and statuses.get("interrupted", 0) > 0, statuses
    assert not list(db.with_name(db.name + ".landing").glob("*.parquet"))  # what the units held: ingested
    (n, dup), = _rows(db, "SELECT count(*), count(*) - count(DISTINCT (model, dataset, item_id, sample)) FROM results")
    assert 0 < n < 3 * len(DATASETS) * LIMIT and dup == 0


def test_the_same_command_after_ctrl_c_equals_the_single_process_sweep(interrupted, baseline, ray_cluster,
                                                                         monkeypatch):
    """The equal figure, on the sweep Ctrl-C left (one Ray run less than a sweep of its own): its rerun asks
    the rest; rows and leaderboard as one process made them, each model where its placement says. What
    m_vllm's server has loaded (its identity) is asked by its host on the worker node, never by the driver
    (on a real cluster the driver's 127.0.0.1 is another machine)."""
    db = interrupted["db"]
    from engine.cli import main

    def from_the_driver(_cfg):
        raise AssertionError("the driver asked a served model's identity through its own loopback")

    monkeypatch.setattr("engine.sweep.prepare.served_models", from_the_driver)
    assert main(interrupted["args"]) == 0
    details = [json.loads(d) for (d,) in _rows(db, "SELECT detail FROM identities")]
    assert {d.get("served") for d in details if d["model"] == "stand-in/vllm-model"} == {"stand-in/vllm-model"}
    _assert_equal(db, baseline[1])
    placed = dict(_rows(db, "SELECT model, list(DISTINCT node_id) FROM cluster_units GROUP BY 1"))
    assert placed["m_worker"] == [ray_cluster.worker.node_id] == placed["m_vllm"]
    assert ray_cluster.worker.node_id not in placed["m_head"]
    assert _rows(db, "SELECT outcome FROM runs ORDER BY started_at") == [("interrupted",), ("complete",)]
    assert not list(db.with_name(db.name + ".landing").iterdir())  # every landed file ingested and removed


def test_losing_the_worker_node_and_the_rate_keeper_loses_nothing(sim, ray_cluster, baseline, tmp_path):
    """The worker node SIGKILLed while m_worker's units run there (Ray's default failure detection: it may
    take Ray 15 s and more to declare the node dead), an identical node joining 2 s later: the lost units
    are recorded `lost`, run again on the new node, and the rows equal one process's."""
    models, one = baseline
    db = tmp_path / "loss.duckdb"
    sim.reset()
    proc = _driver(_sweep_args(models, db, "--cluster", ray_cluster.address))
    try:
        _wait(lambda: sim.stats()["by_model"].get("m_worker", 0) >= 0.4 * len(DATASETS) * LIMIT, proc)
        lost_node = ray_cluster.worker.node_id
        ray_cluster.kill_worker(back_after_s=2.0)
        _crash_rate_keeper(ray_cluster)  # the lost units' next attempts book through its successor
        _, err = proc.communicate(timeout=120)  # a hang fails here
    finally:
        proc.kill()
    assert proc.returncode == 0, err[-3000:]
    _assert_equal(db, one)
    units = _rows(db, "SELECT model, dataset, attempt, node_id, status FROM cluster_units WHERE model = 'm_worker'")
    lost = {(d, a) for _m, d, a, node, s in units if s == "lost" and node == lost_node}
    assert lost, units
    again = {(d, a - 1) for _m, d, a, node, s in units if s == "done" and node == ray_cluster.worker.node_id}
    assert lost <= again, units  # each lost unit's next attempt ran on the replacement node


def test_a_frozen_host_process_and_a_killed_server_lose_nothing(sim, ray_cluster, baseline, tmp_path):
    """m_worker's host actor process frozen (SIGSTOP: alive, its node healthy, so Ray never fails the calls
    to it; only the driver's ping notices) and m_vllm's model server process SIGKILLed alone, while their
    units run: both units lost, run again by new hosts, rows equal. (A host process SIGKILLed alone:
    bench/cluster_faults.py's `host` schedules.)"""
    models, one = baseline
    db = tmp_path / "procs.duckdb"
    sim.reset()
    proc = _driver(_sweep_args(models, db, "--cluster", ray_cluster.address), {"ENGINE_CLUSTER_SILENT_S": "4"})
    try:
        _wait(lambda: sim.stats()["by_model"].get("m_worker", 0) >= 0.3 * len(DATASETS) * LIMIT, proc)
        assert faults.kill(faults.host_pids(ray_cluster, serving=False), signal.SIGSTOP) == 1  # m_worker's host
        assert faults.kill(faults.server_pids(ray_cluster)) == 1  # m_vllm's server
        _, err = proc.communicate(timeout=90)
    finally:
        proc.kill()
    assert proc.returncode == 0, err[-3000:]
    _assert_equal(db, one)
    lost = dict(_rows(db, "SELECT model, count(*) FROM cluster_units WHERE status = 'lost' GROUP BY 1"))
    assert lost.get("m_worker", 0) >= 1 and lost.get("m_vllm", 0) >= 1, lost


def test_driver_killed_then_rerun_asks_nothing_landed_again(sim, ray_cluster, baseline, tmp_path):
    models, one = baseline
    db = tmp_path / "kill.duckdb"
    sim.reset()
    args = _sweep_args(models, db, "--cluster", ray_cluster.address)
    proc = _driver(args)
    try:
        _wait(lambda: sim.stats()["total"] >= 0.5 * 2 * len(DATASETS) * LIMIT, proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    committed, _landed = committed_after_kill(sim, db)
    assert committed
    sim.reset()
    from engine.cli import main

    assert main(args) == 0  # the same command (in this process: a Python start less)
    asked = set(sim.stats()["by_prompt"])
    prints = _fingerprints(DATASETS, LIMIT)
    again = sorted(k for k in committed if prints.get(k) in asked)
    assert not again, (len(again), len(committed), again[:5])  # 0 landed rows asked again
    _assert_equal(db, one)


def test_one_account_rate_is_global_across_two_nodes(ray_cluster, tmp_path):
    # R = 20 requests/s shared by two models on two nodes for 4 s; the server refuses more than 2R + 1 in any
    # 2 s window, so a per-node rate (2R) would meet 429s twice over.
    rate, n, window = 20.0, 80, 2
    profiles = {m: {"account": "acct", "rpm": int(window * rate) + 1} for m in ("ra", "rb")}
    with SimServerProcess(rpm_window_s=window, profiles=profiles, mode="gold") as s:
        models = rate_models(tmp_path / "models.toml", s.base_url, rate)
        db = tmp_path / "rate.duckdb"
        from engine.cli import main

        assert main(["sweep", str(models), str(db), "--datasets", "synthetic", "--limit", str(n // 2), "--quiet",
                     "--cluster", ray_cluster.address]) == 0
        stats = s.stats()
    assert stats["by_status"].get("429", 0) == 0  # the server's own window never refused one
    (ok, span), = _rows(db, "SELECT count(*) FILTER (WHERE status = 'ok'), "
                            "epoch(max(finished_at)) - epoch(min(finished_at)) FROM results")
    assert ok == n
    assert (n - 1) / span >= 0.97 * rate


@pytest.fixture(scope="module")
def faulty_run(ray_cluster, tmp_path_factory) -> tuple[int, str, float, Path]:
    """One sweep of two models that cannot run (shared: each Ray run costs seconds): `dies`, whose server
    exits after 3 requests every time it starts, and `huge`, asking for more GPUs than the cluster has, with
    a placement time of 10 s (3 s was too short for `dies` itself on a loaded 2-core machine: both were
    given up). Returns the exit status, stderr, seconds taken and the database."""
    tmp = tmp_path_factory.mktemp("faulty")
    models = tmp / "models.toml"
    models.write_text('[[models]]\nname = "dies"\nprovider = "vllm"\nmodel = "stand-in/dies"\nmax_concurrency = 2\n'
                      'gpus = 1\nserve_args = ["--die-after", "3"]\n\n'
                      '[[models]]\nname = "huge"\nprovider = "vllm"\nmodel = "stand-in/huge"\ngpus = 4\n')
    db = tmp / "faulty.duckdb"
    t0 = time.monotonic()
    # A process of its own, under a timeout: a hang fails the test instead of stopping the suite.
    r = subprocess.run([sys.executable, "-m", "engine", "sweep", str(models), str(db), "--datasets", "synthetic",
                        "--limit", "20", "--quiet", "--cluster", ray_cluster.address], cwd=ROOT, capture_output=True,
                       text=True, timeout=120, env={**os.environ, "ENGINE_CLUSTER_PLACEMENT_S": "10"})
    return r.returncode, r.stderr, time.monotonic() - t0, db


def test_a_unit_whose_server_keeps_dying_is_given_up_as_errors(faulty_run):
    _rc, _err, _s, db = faulty_run
    (ok, errors, given_up), = _rows(db, "SELECT count(*) FILTER (WHERE status = 'ok'), count(*) FILTER (WHERE "
                                        "status = 'error' AND error LIKE 'cluster: unit dies/synthetic lost 3 times%'), "
                                        "count(*) FILTER (WHERE error_class = 'transient') FROM results "
                                        "WHERE model = 'dies'")
    assert ok + errors == 20 and errors > 0 and given_up == errors
    assert _rows(db, "SELECT attempt, status FROM cluster_units WHERE model = 'dies' ORDER BY attempt") == [
        (1, "lost"), (2, "lost"), (3, "given_up")]


def test_a_model_no_node_can_place_exits_with_one_line_and_no_hang(faulty_run):
    rc, err, seconds, db = faulty_run
    assert rc == 3, err  # EXIT_UNREACHABLE: run it again once a node can hold it
    why = [line for line in err.splitlines() if "place" in line]
    assert why == ["unreachable: huge: no node could place its host within 10 s (needs gpus = 4); its remaining "
                   "items are not asked: run the same command again"], err
    assert seconds < 60  # the dying model's three starts, not a wait for a node that never comes
    assert _rows(db, "SELECT count(*) FROM results WHERE model = 'huge'") == [(0,)]
    assert _rows(db, "SELECT count(*) FROM cluster_units WHERE model = 'huge'") == [(0,)]


def _wait(cond, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert proc.poll() is None, proc.stderr.read()[-3000:] if proc.stderr else ""
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_one_command_gives_a_judged_and_read_result(ray_cluster, tmp_path):
    """[judge] and [extractor] with --cluster: the answers are made on the cluster, then the driver runs this
    machine's side lanes over the stored answers (the same as without --cluster): every summary judged once,
    every choice answer the rules cannot read read once by the extractor model."""
    if not all((DATA_DIR / d).is_dir() for d in ("lcsts", "copa")):
        pytest.skip(f"real data for lcsts and copa not found under {DATA_DIR}")
    answer = "Summary: 新线路下月开通，市民出行更方便。"  # no option letter: COPA's rules cannot read it
    profiles = {"judge-sim": {"mode": "judge"}, "ex-sim": {"mode": "fixed:B"}}
    with SimServerProcess(mode=f"fixed:{answer}", profiles=profiles) as s:
        models = tmp_path / "models.toml"
        models.write_text(f'[[models]]\nname = "m1"\nprovider = "openai"\nbase_url = "{s.base_url}"\nmodel = "m1"\n'
                          f'max_tokens = 64\n\n[judge]\nname = "sim-judge"\nprovider = "openai"\n'
                          f'base_url = "{s.base_url}"\nmodel = "judge-sim"\n\n[extractor]\nname = "ex"\n'
                          f'provider = "openai"\nbase_url = "{s.base_url}"\nmodel = "ex-sim"\n')
        db = tmp_path / "judged.duckdb"
        from engine.cli import main

        assert main(["sweep", str(models), str(db), "--datasets", "lcsts,copa", "--limit", "6", "--data-dir",
                     str(DATA_DIR), "--quiet", "--cluster", ray_cluster.address]) == 0
        assert s.stats()["by_model"] == {"m1": 12, "judge-sim": 6, "ex-sim": 6}  # each answer judged / read once
    assert _rows(db, "SELECT count(*), count(*) FILTER (WHERE status = 'ok') FROM results") == [(12, 12)]
    assert _rows(db, "SELECT judge, status, count(*) FROM judgements GROUP BY ALL") == [("sim-judge", "ok", 6)]
    assert _rows(db, "SELECT prediction, extracted_by, count(*) FROM results WHERE dataset = 'copa' GROUP BY ALL"
                 ) == [('"B"', "model", 6)]  # the extractor's readings applied to the stored answers
    assert _rows(db, "SELECT status FROM cluster_units ORDER BY dataset") == [("done",), ("done",)]
    (score,), = _rows(db, "SELECT score FROM method_scores WHERE dataset = 'lcsts' AND method = 'judge_score'")
    assert score is not None  # the judge method scores, as on one machine


def test_a_node_that_never_comes_back_gives_its_models_up_with_one_line(sim, ray_cluster, baseline, tmp_path):
    """The worker node lost for good mid-unit: the models only it can hold are given up once their placement
    time is over, one line each, and the sweep exits 3; the head's model is done; nothing hangs."""
    models, _ = baseline
    db = tmp_path / "gone.duckdb"
    sim.reset()
    # A short silence: the lost hosts are known before Ray declares the node dead (15 s and more).
    proc = _driver(_sweep_args(models, db, "--cluster", ray_cluster.address),
                   {"ENGINE_CLUSTER_PLACEMENT_S": "10", "ENGINE_CLUSTER_SILENT_S": "4"})
    try:
        _wait(lambda: sim.stats()["by_model"].get("m_worker", 0) >= 0.3 * len(DATASETS) * LIMIT, proc)
        t0 = time.monotonic()
        ray_cluster.cluster.remove_node(ray_cluster.worker, allow_graceful=False)
        _, err = proc.communicate(timeout=90)
        took = time.monotonic() - t0
    finally:
        proc.kill()
        ray_cluster.worker = ray_cluster.cluster.add_node(**WORKER)
    assert proc.returncode == 3, err[-3000:]
    why = sorted(line for line in err.splitlines() if line.startswith("unreachable:"))
    tail = "; its remaining items are not asked: run the same command again"
    assert why == [f"unreachable: m_vllm: no node could place its host within 10 s (needs gpus = 1){tail}",
                   f"unreachable: m_worker: no node could place its host within 10 s (needs ray_resources = "
                   f"{{ worker = 1 }}){tail}"], err
    assert took < 10 + 30  # the placement time after the loss, and the sweep's end
    n = len(DATASETS) * LIMIT
    counts = dict(_rows(db, "SELECT model, count(*) FILTER (WHERE status = 'ok') FROM results GROUP BY 1"))
    assert counts["m_head"] == n and 0 < counts["m_worker"] < n, counts
    assert _rows(db, "SELECT count(*) - count(DISTINCT (model, dataset, item_id, sample)) FROM results") == [(0,)]


def test_a_budget_holds_across_both_nodes(ray_cluster, tmp_path):
    """--budget with --cluster: two priced models on two nodes share one budget (its keeper on the head): the
    spend stops at the limit (a budget per node would spend it twice), and the run is recorded `budget`."""
    with SimServerProcess(profiles={"rb": {"latency_ms": 30}, "ra": {"latency_ms": 30}}, mode="gold") as s:
        models = rate_models(tmp_path / "models.toml", s.base_url, 6000.0)
        models.write_text(models.read_text().replace("max_tokens = 8", "max_tokens = 8\nprice = { input_per_mtok = "
                                                                       "1000, output_per_mtok = 1000 }"))
        from engine.cli import main

        args = ["sweep", str(models), "--datasets", "synthetic", "--limit", "40", "--quiet"]
        assert main([*args[:2], str(tmp_path / "all.duckdb"), *args[2:]]) == 0  # the whole spend, on one machine
        (whole,), = _rows(tmp_path / "all.duckdb", "SELECT sum(cost_usd) FROM results")
        budget = round(0.4 * whole, 4)
        db = tmp_path / "budget.duckdb"
        assert main([*args[:2], str(db), *args[2:], "--cluster", ray_cluster.address, "--budget", str(budget)]) == 0
    (spent, n), = _rows(db, "SELECT sum(cost_usd), count(*) FROM results")
    assert 0.5 * budget < spent <= budget, (spent, budget, whole)
    assert n < 80
    assert dict(_rows(db, "SELECT model, count(*) FROM results GROUP BY 1")).keys() == {"ra", "rb"}  # both nodes spent
    assert _rows(db, "SELECT outcome FROM runs") == [("budget",)]

"""Faults at any moment of a cluster sweep (issue 31), on the two-node loopback cluster with Ray's default
failure detection (tests/cluster/conftest.py), the tests' models (tests/cluster/test_cluster.py: m_head on
the head, m_worker pinned to the worker node, 250 ms and max_concurrency 4, m_vllm on the worker's
logical GPU through the stand-in `vllm`), 3 datasets x 20 items:

    ENGINE_SHARED_DIR=../shared .venv/bin/python -m bench.cluster_faults               # every schedule
    ENGINE_SHARED_DIR=../shared .venv/bin/python -m bench.cluster_faults --only node --seeds 3

- node: the worker node SIGKILLed (raylet and every process on it) at a seeded moment of the run, from the
  driver's start (placement, the servers starting) to its last units (mid-unit, a landing file being
  written, landed but not yet ingested); an identical node joins 2 s later.
- host: m_worker's host actor process alone, SIGKILLed at a seeded share of its requests.
- frozen: m_worker's host actor process SIGSTOPped (alive, its node healthy: Ray never fails the calls to
  it; the driver's ping, ENGINE_CLUSTER_SILENT_S = 10, takes it for lost).
- server: m_vllm's model server process alone (the stand-in vLLM; a `local` llama.cpp server is stopped and
  replaced by the same host code), SIGKILLed at a seeded moment.
- driver: the driver SIGKILLed at a seeded share of the requests, then the same command (asked again: items
  stored or landed at the kill, bound 0; what was answered but not landed is asked again, as on one machine).
- gone: the worker node lost for good mid-unit (ENGINE_CLUSTER_PLACEMENT_S = 20): exit 3, one line per
  model only it could hold, the head's model done.

Each schedule prints: exit status, seconds after the fault until the sweep ended and the bound it must keep
(BOUND_S after the fault plus one undisturbed run), differing rows against the single-process sweep (every
column but run ids and timings), duplicate keys, landed files ingested twice, requests asked again for items
one prompt identifies (bound: the lost host's calls in flight and those answered but not landed yet,
ASKED_AGAIN_BOUND), and files left in the landing folder. The cluster's teardown fails if a process it
started is left.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
sys.path.insert(0, str(ROOT))

from simulator.server import SimServerProcess  # noqa: E402
from tests.cluster import faults  # noqa: E402
from tests.cluster import test_cluster as t  # noqa: E402
from tests.cluster.conftest import WORKER, local_cluster  # noqa: E402

BOUND_S = 60.0  # after the fault, on top of an undisturbed run's time
N = len(t.DATASETS) * t.LIMIT  # requests per model
# m_worker's calls in flight (max_concurrency 4) and those answered in the writer's last flush interval
# (0.5 s at 250 ms: 2 per slot), for each host lost once.
ASKED_AGAIN_BOUND = 4 * 3
KINDS = ("node", "host", "frozen", "server", "driver", "gone")
SILENT_S = 10.0  # the driver's ENGINE_CLUSTER_SILENT_S in the `frozen` schedules


class Run:
    def __init__(self, cl, sim, models: Path, one: Path, tmp: Path, clean_s: float):
        self.cl, self.sim, self.models, self.one, self.tmp, self.clean_s = cl, sim, models, one, tmp, clean_s
        self.unique = set(t._fingerprints(t.DATASETS, t.LIMIT).values())

    def args(self, db: Path) -> list[str]:
        return t._sweep_args(self.models, db, "--cluster", self.cl.address)

    def report(self, name: str, db: Path, rc: int, after_s: float, *, want_rc: int = 0, lost_hosts: int = 1,
               again: int | None = None) -> bool:
        rows, board = _differing(db, self.one) if want_rc == 0 else (0, 0)
        (n, dup), = t._rows(db, "SELECT count(*), count(*) - count(DISTINCT (model, dataset, item_id, sample)) "
                               "FROM results")
        (files, twice), = t._rows(db, "SELECT count(*), count(*) - count(DISTINCT name) FROM landed_files")
        if again is None:
            again = faults.asked_twice(self.sim.stats()["by_prompt"], self.unique)
        left = [p.name for p in db.with_name(db.name + ".landing").iterdir()]
        bound = BOUND_S + self.clean_s
        ok = (rc == want_rc and after_s <= bound and rows == 0 and board == 0 and dup == 0 and twice == 0
              and again <= ASKED_AGAIN_BOUND * lost_hosts and not left)
        print(f"{name:<22} {'PASS' if ok else 'FAIL'}  exit {rc} (want {want_rc}), ended {after_s:5.1f} s after the "
              f"fault (bound {bound:.0f} s), {rows} differing rows, {board} differing leaderboard rows, {dup} "
              f"duplicate keys, {n} rows, {files} files ingested ({twice} twice), {again} requests asked again "
              f"(bound {ASKED_AGAIN_BOUND * lost_hosts}), {len(left)} files left in the landing folder", flush=True)
        return ok


def _differing(db: Path, baseline: Path) -> tuple[int, int]:
    order = "ORDER BY model, dataset, item_id, sample"
    got = t._rows(db, f"SELECT {t.COLUMNS} FROM results {order}")
    want = set(t._rows(baseline, f"SELECT {t.COLUMNS} FROM results {order}"))
    board = "SELECT model, total, vetoed FROM leaderboard ORDER BY model"
    a, b = t._rows(db, board), t._rows(baseline, board)
    return (sum(r not in want for r in got) + abs(len(got) - len(want)),
            sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b)))


def _finish(proc: subprocess.Popen, timeout: float) -> tuple[int, str]:
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        return -9, "HUNG: killed after the bound\n" + err
    return proc.returncode, err


def node(run: Run, seed: int) -> bool:
    rng = random.Random(seed)
    at = rng.uniform(0.0, run.clean_s)  # seconds after the driver started
    db = run.tmp / f"node{seed}.duckdb"
    run.sim.reset()
    proc = t._driver(run.args(db))
    time.sleep(at)
    served = run.sim.stats()["by_model"].get("m_worker", 0)
    t0 = time.monotonic()
    run.cl.kill_worker(back_after_s=2.0)
    rc, err = _finish(proc, BOUND_S + run.clean_s)
    ok = run.report(f"node at {at:4.1f} s ({served}/{N})", db, rc, time.monotonic() - t0)
    if rc != 0:
        print(err[-1500:])
    return ok


def _at_share(run: Run, proc: subprocess.Popen, model: str | None, share: float) -> None:
    def served() -> int:
        stats = run.sim.stats()
        return stats["by_model"].get(model, 0) if model else stats["total"]
    t._wait(lambda: served() >= share * N, proc)


def host(run: Run, seed: int) -> bool:
    share = random.Random(seed).uniform(0.05, 0.9)
    db = run.tmp / f"host{seed}.duckdb"
    run.sim.reset()
    proc = t._driver(run.args(db))
    _at_share(run, proc, "m_worker", share)
    t0 = time.monotonic()
    killed = faults.kill(faults.host_pids(run.cl, serving=False))
    rc, err = _finish(proc, BOUND_S + run.clean_s)
    ok = run.report(f"host at {share:.0%} ({killed} killed)", db, rc, time.monotonic() - t0)
    if rc != 0:
        print(err[-1500:])
    return ok


def frozen(run: Run, seed: int) -> bool:
    share = random.Random(seed).uniform(0.05, 0.9)
    db = run.tmp / f"frozen{seed}.duckdb"
    run.sim.reset()
    proc = t._driver(run.args(db), {"ENGINE_CLUSTER_SILENT_S": f"{SILENT_S:g}"})
    _at_share(run, proc, "m_worker", share)
    t0 = time.monotonic()
    stopped = faults.kill(faults.host_pids(run.cl, serving=False), signal.SIGSTOP)
    rc, err = _finish(proc, BOUND_S + run.clean_s)
    ok = run.report(f"frozen at {share:.0%} ({stopped})", db, rc, time.monotonic() - t0)
    if rc != 0:
        print(err[-1500:])
    return ok


def server(run: Run, seed: int) -> bool:
    at = random.Random(seed).uniform(0.5, run.clean_s * 0.8)
    db = run.tmp / f"server{seed}.duckdb"
    run.sim.reset()
    proc = t._driver(run.args(db))
    deadline = time.monotonic() + at
    started = time.monotonic() + BOUND_S
    while not faults.server_pids(run.cl) and time.monotonic() < started:  # its server started, then the moment
        time.sleep(0.05)
    time.sleep(max(0.0, deadline - time.monotonic()))
    t0 = time.monotonic()
    killed = faults.kill(faults.server_pids(run.cl))
    rc, err = _finish(proc, BOUND_S + run.clean_s)
    ok = run.report(f"server at {at:4.1f} s ({killed} killed)", db, rc, time.monotonic() - t0, lost_hosts=0)
    if rc != 0:
        print(err[-1500:])
    return ok


def driver(run: Run, seed: int) -> bool:
    share = random.Random(seed).uniform(0.1, 0.9)
    db = run.tmp / f"driver{seed}.duckdb"
    run.sim.reset()
    proc = t._driver(run.args(db))
    _at_share(run, proc, None, 2 * share)  # of both simulated models' requests
    proc.kill()
    proc.wait()
    t0 = time.monotonic()
    committed, _landed = t.committed_after_kill(run.sim, db)  # once the dead driver's hosts are gone
    run.sim.reset()
    rerun = t._driver(run.args(db))
    rc, err = _finish(rerun, BOUND_S + run.clean_s)
    prints = t._fingerprints(t.DATASETS, t.LIMIT)
    asked = set(run.sim.stats()["by_prompt"])
    again = sum(1 for k in committed if prints.get(k) in asked)  # stored or landed at the kill, asked again
    ok = run.report(f"driver at {share:.0%}", db, rc, time.monotonic() - t0, lost_hosts=0, again=again)
    if rc != 0:
        print(err[-1500:])
    return ok


def gone(run: Run, seed: int) -> bool:
    share = random.Random(seed).uniform(0.1, 0.8)
    db = run.tmp / f"gone{seed}.duckdb"
    run.sim.reset()
    proc = t._driver(run.args(db), {"ENGINE_CLUSTER_PLACEMENT_S": "20"})
    try:
        _at_share(run, proc, "m_worker", share)
        t0 = time.monotonic()
        run.cl.cluster.remove_node(run.cl.worker, allow_graceful=False)
        rc, err = _finish(proc, BOUND_S + run.clean_s)
        after = time.monotonic() - t0
    finally:
        run.cl.worker = run.cl.cluster.add_node(**WORKER)
    lines = sorted(line for line in err.splitlines() if line.startswith("unreachable:"))
    head_done = t._rows(db, "SELECT count(*) FROM results WHERE model = 'm_head' AND status = 'ok'") == [(N,)]
    ok = rc == 3 and len(lines) == 2 and head_done and after <= BOUND_S + run.clean_s
    print(f"{'gone at ' + format(share, '.0%'):<22} {'PASS' if ok else 'FAIL'}  exit {rc} (want 3), ended {after:5.1f} s "
          f"after the loss (bound {BOUND_S + run.clean_s:.0f} s), m_head all done: {head_done}; lines:", flush=True)
    for line in lines:
        print(f"    {line}")
    return ok


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.cluster_faults")
    p.add_argument("--only", choices=KINDS)
    p.add_argument("--seeds", type=int, default=10, help="seeded moments of the node loss (others: a third)")
    args = p.parse_args()
    kinds = [args.only] if args.only else list(KINDS)
    results: list[bool] = []
    profiles = {"m_worker": {"latency_ms": t.WORKER_LATENCY_MS}}
    with TemporaryDirectory() as d, SimServerProcess(profiles=profiles) as sim, local_cluster() as cl:
        tmp = Path(d)
        models = t._models(tmp / "models.toml", sim.base_url)
        one = tmp / "one.duckdb"
        from engine.cli import main as engine

        # The single-process sweep (the stand-in vllm is on PATH while the cluster is up).
        assert engine(t._sweep_args(models, one)) == 0
        t0 = time.monotonic()
        assert engine(t._sweep_args(models, tmp / "clean.duckdb", "--cluster", cl.address)) == 0
        clean_s = time.monotonic() - t0
        print(f"undisturbed cluster sweep: {clean_s:.1f} s (3 models x {N} items); bound per schedule: "
              f"{BOUND_S:g} s after the fault + {clean_s:.0f} s", flush=True)
        run = Run(cl, sim, models, one, tmp, clean_s)
        for kind in kinds:
            n = args.seeds if kind == "node" else max(1, args.seeds // 3)
            for seed in range(n):
                results.append(globals()[kind](run, seed))
    print(f"{sum(results)}/{len(results)} schedules passed")
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()

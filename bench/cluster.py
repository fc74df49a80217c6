"""The cluster figures (issue 22): a two-node Ray cluster on loopback (ray.cluster_utils.Cluster), the
simulator as provider, the stand-in `vllm` (tests/cluster/fake_vllm.py) as the GPU model's server.

    ENGINE_SHARED_DIR=../shared .venv/bin/python -m bench.cluster              # every scenario, ~5 min on 2 cores
    ENGINE_SHARED_DIR=../shared .venv/bin/python -m bench.cluster --only rate  # equal|loss|driver|rate|limiter

- equal: 3 models x 6 datasets x 50 items, one model pinned to the worker node, one vLLM model on its
  logical GPU; differing `results` rows (every column but run ids and timings) and leaderboard rows.
- loss: the same, the worker node killed once 40% of its requests were served (a replacement joins):
  rows lost, duplicate keys, differing rows.
- driver: the same, the driver killed with SIGKILL half-way, then the same command: differing rows, and
  landed rows asked again.
- rate: one account limited to R = 20 requests/s shared by 2 models on 2 nodes for 30 s: 429s from the
  server's own 10 s window (10R + 1), the most arrivals in any 10 s window, the mean rate; and the wall
  time of the same sweep in one process (no --cluster), for the cost ratio.
- limiter: p50 / p99 of a rate keeper booking, from a host on the worker node.
"""

from __future__ import annotations

import argparse
import os
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
from tests.cluster import test_cluster as t  # noqa: E402  (the tests' models file, queries and fingerprints)
from tests.cluster.conftest import local_cluster  # noqa: E402

RATE = 20.0
DATASETS = ("copa", "wsc", "sst2", "rte", "wic", "eq60")  # the workload: 6 datasets x 50 items
LIMIT = 50
WORKLOAD = dict(datasets=DATASETS, limit=LIMIT)


def differing(db: Path, baseline: Path) -> tuple[int, int]:
    order = "ORDER BY model, dataset, item_id, sample"
    got = t._rows(db, f"SELECT {t.COLUMNS} FROM results {order}")
    want = set(t._rows(baseline, f"SELECT {t.COLUMNS} FROM results {order}"))
    board = "SELECT model, total, vetoed FROM leaderboard ORDER BY model"
    a, b = t._rows(db, board), t._rows(baseline, board)
    return sum(r not in want for r in got) + abs(len(got) - len(want)), sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b))


def keys(db: Path) -> tuple[int, int]:
    (n, dup), = t._rows(db, "SELECT count(*), count(*) - count(DISTINCT (model, dataset, item_id, sample)) FROM results")
    return n, dup


def scenario_equal(cl, sim, tmp: Path) -> tuple[Path, Path]:
    from engine.cli import main

    models = t._models(tmp / "models.toml", sim.base_url)
    one = tmp / "one.duckdb"
    t0 = time.perf_counter()
    assert main(t._sweep_args(models, one, **WORKLOAD)) == 0
    t1 = time.perf_counter()
    two = tmp / "two.duckdb"
    assert main(t._sweep_args(models, two, "--cluster", cl.address, **WORKLOAD)) == 0
    t2 = time.perf_counter()
    rows, board = differing(two, one)
    print(f"equal: {rows} differing results rows, {board} differing leaderboard rows "
          f"(one process {t1 - t0:.1f} s, two nodes {t2 - t1:.1f} s, {keys(two)[0]} rows)")
    return models, one


def scenario_loss(cl, sim, tmp: Path, models: Path, one: Path) -> None:
    db = tmp / "loss.duckdb"
    sim.reset()
    proc = t._driver(t._sweep_args(models, db, "--cluster", cl.address, **WORKLOAD))
    t._wait(lambda: sim.stats()["by_model"].get("m_worker", 0) >= 0.4 * len(DATASETS) * LIMIT, proc)
    cl.kill_worker()
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    n, dup = keys(db)
    rows, board = differing(db, one)
    lost = t._rows(db, "SELECT count(*) FROM cluster_units WHERE status = 'lost'")[0][0]
    print(f"node loss: {3 * len(DATASETS) * LIMIT - n} rows lost, {dup} duplicate keys, {rows} differing rows, "
          f"{board} differing leaderboard rows ({lost} unit attempt(s) lost and re-queued)")


def scenario_driver(cl, sim, tmp: Path, models: Path, one: Path) -> None:
    db = tmp / "kill.duckdb"
    sim.reset()
    args = t._sweep_args(models, db, "--cluster", cl.address, **WORKLOAD)
    proc = t._driver(args)
    t._wait(lambda: sim.stats()["total"] >= 0.5 * 2 * len(DATASETS) * LIMIT, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    committed, landed = t.committed_after_kill(sim, db)
    sim.reset()
    r = subprocess.run([sys.executable, "-m", "engine", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    prints = t._fingerprints(DATASETS, LIMIT)
    again = len({prints[k] for k in committed if k in prints} & set(sim.stats()["by_prompt"]))
    rows, board = differing(db, one)
    print(f"driver loss: {rows} differing rows, {board} differing leaderboard rows, {again} landed rows asked again "
          f"({len(committed)} stored or landed at the kill, {landed} of them in landed files)")




def scenario_rate(cl, tmp: Path, seconds: float = 30.0) -> None:
    n = int(RATE * seconds)
    profiles = {m: {"account": "acct", "rpm": int(10 * RATE) + 1, "latency_ms": 50} for m in ("ra", "rb")}
    walls = {}
    for mode in ("one", "two"):
        with SimServerProcess(rpm_window_s=10, profiles=profiles, mode="gold") as s:
            models = t.rate_models(tmp / f"rate-{mode}.toml", s.base_url, RATE)
            db = tmp / f"rate-{mode}.duckdb"
            cmd = [sys.executable, "-m", "engine", "sweep", str(models), str(db), "--datasets", "synthetic",
                   "--limit", str(n // 2), "--quiet", *(["--cluster", cl.address] if mode == "two" else [])]
            t0 = time.perf_counter()
            r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
            walls[mode] = time.perf_counter() - t0
            assert r.returncode == 0, r.stderr[-2000:]
            throttled = s.stats()["by_status"].get("429", 0)
        if mode == "two":
            (span,), = t._rows(db, "SELECT epoch(max(finished_at)) - epoch(min(finished_at)) FROM results")
            # Windows [t, t + 10 s) from each row, over the rows' finish times (arrival + the simulated 50 ms):
            # a client-side proxy; the server's own 10 s window (limit 10R + 1) counts its 429s above.
            (most,), = t._rows(db, "SELECT max(k) FROM (SELECT count(*) OVER (ORDER BY finished_at RANGE BETWEEN "
                                   "CURRENT ROW AND INTERVAL 9999999 MICROSECONDS FOLLOWING) AS k FROM results)")
            print(f"global rate: R = {RATE:g}/s over {span:.1f} s on 2 nodes: {throttled} x 429, at most {most} "
                  f"arrivals in a 10 s window (bound {10 * RATE + 1:g}), mean {(n - 1) / span:.2f}/s = "
                  f"{100 * (n - 1) / span / RATE:.1f} % of the limit")
    print(f"cost: wall time (whole command) one process {walls['one']:.1f} s, two nodes {walls['two']:.1f} s "
          f"= {walls['two'] / walls['one']:.2f}x")


def scenario_limiter(cl) -> None:
    import ray

    from engine.cluster.rate_keeper import LOOKAHEAD_S, RateKeeper

    ray.init(address=cl.address, log_to_driver=False)
    try:
        keeper = ray.remote(num_cpus=0, max_concurrency=1)(RateKeeper).remote(6e6, None)

        @ray.remote(num_cpus=0, resources={"worker": 0.01})
        def probe(keeper, n: int) -> list[float]:
            out = []
            for _ in range(n):
                t0 = time.perf_counter()
                ray.get(keeper.book.remote(10, LOOKAHEAD_S))
                out.append(time.perf_counter() - t0)
            return out

        times = sorted(ray.get(probe.remote(keeper, 1000)))
        print(f"limiter call (worker node -> keeper on the head), 1000 calls: p50 {1000 * times[500]:.2f} ms, "
              f"p99 {1000 * times[990]:.2f} ms (lookahead {1000 * LOOKAHEAD_S:.0f} ms)")
    finally:
        ray.shutdown()


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.cluster")
    p.add_argument("--only", choices=["equal", "loss", "driver", "rate", "limiter"])
    args = p.parse_args()
    want = {args.only} if args.only else {"equal", "loss", "driver", "rate", "limiter"}
    with TemporaryDirectory() as d, SimServerProcess(profiles={"m_worker": {"latency_ms": 40}}) as sim:
        tmp = Path(d)
        with local_cluster() as cl:
            if want & {"equal", "loss", "driver"}:
                models, one = scenario_equal(cl, sim, tmp)
                if "loss" in want:
                    scenario_loss(cl, sim, tmp, models, one)
                if "driver" in want:
                    scenario_driver(cl, sim, tmp, models, one)
            if "rate" in want:
                scenario_rate(cl, tmp)
            if "limiter" in want:
                scenario_limiter(cl)


if __name__ == "__main__":
    main()

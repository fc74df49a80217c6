"""Faults on the loopback cluster (tests/cluster/conftest.py), shared by tests/cluster/test_cluster.py and
the benchmarks (bench/cluster.py, bench/cluster_faults.py): which process to kill, what a killed driver
left committed, what a sweep asked twice; and the global-rate models file.

A host actor's process is found by the title Ray gives it (`ray::ModelHost...`) among the cluster's
processes; a served model's host is the one with a child (its server), so an API model's host is one
without. The stand-in `vllm` server is found by its command line.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from benchmark import registry
from engine.sweep.plan import load_dataset
from simulator.core import fingerprint
from tests.cluster.conftest import LocalCluster
from tests.conftest import DATA_DIR

SEED = 20250826  # the sweep's default seed: the items it samples


def _rows(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def children(pid: int) -> list[int]:
    """Children of every thread of ``pid`` (a host starts its server from its event loop's thread)."""
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            out += [int(p) for p in (task / "children").read_text().split()]
    return out


def parent(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return -1
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))


def host_pids(cluster: LocalCluster, *, serving: bool) -> list[int]:
    """The host actors' processes on the worker node (their parent is its raylet): those running a model
    server (``serving``) or those that do not."""
    raylet = cluster.worker.all_processes["raylet"][0].process.pid
    hosts = [pid for pid, cmd in cluster.processes.items() if cmd.startswith("ray::ModelHost") and parent(pid) == raylet]
    return [pid for pid in hosts if bool(children(pid)) == serving]


def server_pids(cluster: LocalCluster) -> list[int]:
    """The stand-in vLLM servers the hosts started."""
    return [pid for pid, cmd in cluster.processes.items() if "fake_vllm" in cmd or " serve " in cmd]


def kill(pids: Iterable[int], sig: int = signal.SIGKILL) -> int:
    """``sig`` to each of ``pids``; how many got it."""
    n = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, sig)
            n += 1
    return n


def asked_twice(by_prompt: dict[str, int], unique: Iterable[str]) -> int:
    """Requests beyond the first for prompts only one item has (the simulator counts them per prompt)."""
    return sum(max(0, by_prompt.get(fp, 0) - 1) for fp in set(unique))


def committed_after_kill(sim, db: Path) -> tuple[set[tuple[str, str, str]], int]:
    """Once the killed driver's hosts are gone (Ray ends its job's actors; until then they may land a few
    more files): the (model, dataset, item) answered ok in the database or in landed files, and how many
    rows the landed files hold."""
    before = -1
    while before != sim.stats()["total"]:  # a live host asks an item every few tens of ms
        before = sim.stats()["total"]
        time.sleep(0.5)
    committed = set(_rows(db, "SELECT model, dataset, item_id FROM results WHERE status = 'ok'"))
    landed = 0
    for f in (db.parent / f"{db.name}.landing").glob("*.parquet"):
        rows = pq.read_table(f, columns=["model", "dataset", "item_id", "status"]).to_pylist()
        landed += len(rows)
        committed |= {(r["model"], r["dataset"], r["item_id"]) for r in rows if r["status"] == "ok"}
    return committed, landed


def rate_models(path: Path, url: str, rate: float) -> Path:
    """Two models sharing one account limited to ``rate`` requests/s, `rb` pinned to the worker node."""
    path.write_text(f"""
[accounts.acct]
rpm = {rate * 60:g}
""" + "".join(f"""
[[models]]
name = "{m}"
provider = "openai"
base_url = "{url}"
model = "{m}"
account = "acct"
max_concurrency = 8
max_tokens = 8
{pin}
""" for m, pin in (("ra", ""), ("rb", "ray_resources = { worker = 1 }"))))
    return path


def crash_rate_keeper(cluster: LocalCluster) -> None:
    """SIGKILL to the rate keeper actor's process (a crash; found by the title Ray gives it, among this
    cluster's processes: only this run's account has a keeper); Ray restarts the actor and the hosts'
    bookings are retried."""
    keepers = [pid for pid, cmd in cluster.processes.items() if cmd.startswith("ray::RateKeeper")]
    assert len(keepers) == 1, keepers
    os.kill(keepers[0], signal.SIGKILL)


def fingerprints(datasets: tuple[str, ...], limit: int) -> dict[tuple[str, str, str], str]:
    """(model, dataset, item) -> the simulator's fingerprint of its prompt, for prompts only one item has (WSC
    holds items with the very same prompt: asking one of them says nothing about the other)."""
    out = {}
    for d in datasets:
        ds = registry.get(d)
        assert ds is not None
        planned = load_dataset(ds, DATA_DIR, limit, SEED)
        for model in ("m_head", "m_worker"):
            for it in planned.items:
                out[(model, d, it.id)] = fingerprint(model, [{"role": m.role, "content": m.content} for m in it.messages])
    shared = {v for v, n in Counter(out.values()).items() if n > 1}
    return {k: v for k, v in out.items() if v not in shared}

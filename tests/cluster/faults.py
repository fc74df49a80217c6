"""Faults on the loopback cluster (tests/cluster/conftest.py), shared by tests/cluster/test_faults.py and
bench/cluster_faults.py: which process to kill, and what a sweep asked twice.

A host actor's process is found by the title Ray gives it (`ray::ModelHost...`) among the cluster's
processes; a served model's host is the one with a child (its server), so an API model's host is one
without. The stand-in `vllm` server is found by its command line.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterable
from pathlib import Path

from tests.cluster.conftest import LocalCluster


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


def kill(pids: Iterable[int]) -> int:
    n = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
            n += 1
    return n


def asked_twice(by_prompt: dict[str, int], unique: Iterable[str]) -> int:
    """Requests beyond the first for prompts only one item has (the simulator counts them per prompt)."""
    return sum(max(0, by_prompt.get(fp, 0) - 1) for fp in set(unique))

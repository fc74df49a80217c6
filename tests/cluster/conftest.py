"""A two-node Ray cluster on loopback for the module that needs one (tests/cluster/test_cluster.py).

Found with Ray 2.60: on Linux Ray replaces 127.0.0.1 with the machine's address when a driver connects
unless RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 (read when Ray is imported, so set here, first); a killed
cluster leaves an address file that a bare `ray.init()` would join, so every test passes an address and
the cluster lives under its own temporary folder (RAY_TMPDIR); RAY_AUTH_MODE=disabled keeps Ray from
writing an auth token under the home folder. The cluster's processes inherit PATH with the stand-in
`vllm` (tests/cluster/fake_vllm.py) and PYTHONPATH with this checkout.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.fake_vllm import write_executable
from tests.conftest import alone

ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
# Logical CPUs and GPU: nothing checks they are real. Two CPUs a node let its raylet start two worker
# processes at once (it starts at most min(cores, CPUs) at a time): a sweep's hosts come up in parallel.
# No log monitor (its worker logs would go to drivers that run --quiet) and, on the head, no autoscaler
# monitor (nothing scales here): two Python processes a node less, each polling all along.
LEAN = dict(include_log_monitor=False)
# `worker = 4`: room for more than one host pinned there, as on the cluster where a lost node hung a sweep.
WORKER = dict(num_cpus=2, num_gpus=1, resources={"worker": 4}, **LEAN)
# Ray's own failure detection (a lost node is declared dead after 5 missed checks 3 s apart, 15 s or more), as
# on a user's cluster: a sweep must not depend on Ray noticing a loss quickly.


@dataclass
class LocalCluster:
    cluster: Any
    worker: Any
    address: str
    bin: Path

    @property
    def processes(self) -> dict[int, str]:
        """pid -> command line of every process the cluster started (they inherit its RAY_TMPDIR)."""
        return processes_with(f"RAY_TMPDIR={self.bin.parent}")

    def kill_worker(self, back_after_s: float = 2.0) -> None:
        """The worker node dies (its raylet and every process on it: SIGKILL); an identical one joins
        ``back_after_s`` later, as an autoscaler or KubeRay would bring one."""
        self.cluster.remove_node(self.worker, allow_graceful=False)
        time.sleep(back_after_s)
        self.worker = self.cluster.add_node(**WORKER)


@pytest.fixture(scope="module", autouse=True)
def _cluster_alone() -> Iterator[None]:
    """The cluster's tests watch deadlines and rates: no other worker's test runs beside them."""
    with alone():
        yield


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[LocalCluster]:
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[cluster]')")
    with local_cluster() as cluster:
        yield cluster


@contextlib.contextmanager
def local_cluster() -> Iterator[LocalCluster]:
    """A head and a worker node (one logical GPU, the custom resource `worker`) on loopback; stopped after."""
    from ray.cluster_utils import Cluster

    # Short: Ray's unix sockets live under it, and a socket path has at most 107 characters.
    tmp = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))
    (tmp / "ray").mkdir()
    (tmp / "bin").mkdir()
    write_executable(tmp / "bin")
    saved = {k: os.environ.get(k) for k in ("RAY_TMPDIR", "PATH", "PYTHONPATH")}
    os.environ["RAY_TMPDIR"] = str(tmp)
    os.environ["PATH"] = f"{tmp / 'bin'}{os.pathsep}{os.environ['PATH']}"
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), saved["PYTHONPATH"]]))
    cluster = Cluster(initialize_head=True, head_node_args=dict(num_cpus=2, include_dashboard=False, no_monitor=True,
                                                                temp_dir=str(tmp / "ray"),
                                                                **LEAN))
    try:
        worker = cluster.add_node(**WORKER)
        cluster.wait_for_nodes()
        yield LocalCluster(cluster, worker, cluster.address, tmp / "bin")
    finally:
        import ray

        ray.shutdown()
        cluster.shutdown()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        left = _left_behind(f"RAY_TMPDIR={tmp}")
        shutil.rmtree(tmp, ignore_errors=True)
        assert not left, f"processes left behind by the cluster: {left}"


def _left_behind(mark: str, wait_s: float = 10.0) -> list[str]:
    """Processes still running, ``wait_s`` after the cluster stopped, whose environment holds ``mark`` (every
    process the cluster started inherits it: Ray's own, the hosts, model servers, drivers); killed, and
    named."""
    end = time.monotonic() + wait_s
    while True:
        found = processes_with(mark)
        if not found or time.monotonic() > end:
            break
        time.sleep(0.2)
    for pid in found:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return [f"{pid}: {cmd[:120]}" for pid, cmd in found.items()]


def processes_with(mark: str) -> dict[int, str]:
    """pid -> command line of the processes (but this one) whose environment holds ``mark`` (NAME=value)."""
    found = {}
    for env in Path("/proc").glob("[0-9]*/environ"):
        pid = int(env.parent.name)
        with contextlib.suppress(OSError):  # not ours to read, or ended meanwhile
            if pid != os.getpid() and mark.encode() in env.read_bytes().split(b"\0"):
                found[pid] = (env.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    return found

"""The hosts of every model replica, as the driver keeps them: started where the model's placement says,
ready once their server is, replaced when lost, and a model given up when none of its hosts can be placed
within PLACEMENT_S (no node has its GPUs or resources) or start MAX_ATTEMPTS times.

Never a wait without a bound: a host Ray has not placed within REPLACE_S is killed and asked for again (Ray
may have sent it to a node that died and not yet noticed: with its default health checks a node is declared
dead 15 s or more after it is lost, and a creation sent there can stay pending), and a ready host that
answers no ping for SILENT_S is taken for lost with its units (engine/cluster/driver.py)."""

from __future__ import annotations

import contextlib
import os
import time
from collections import Counter
from typing import Any

import msgspec

from benchmark.errors import UserError
from engine.cluster.units import MAX_ATTEMPTS, UNITS_PER_HOST, HostFacts
from engine.config.models import ModelConfig, ModelsFile
from engine.run.progress import log
from engine.run.signals import signalled
from engine.version import ENGINE_VERSION

POLL_S = 0.5
# Seconds a host may take to be placed and ready (a vLLM server loads its weights meanwhile).
PLACEMENT_S = float(os.environ.get("ENGINE_CLUSTER_PLACEMENT_S", "600"))
# Seconds a host may stay unplaced before it is asked for afresh (its model's PLACEMENT_S runs on); each
# further ask waits once more as long (a worker process may take long to start on a busy node).
REPLACE_S = float(os.environ.get("ENGINE_CLUSTER_REPLACE_S", "30"))


class Starting(msgspec.Struct, kw_only=True):
    """A host asked for: `placed` once Ray has put it on a node (its `where` answered)."""

    name: str
    actor: Any
    where: Any  # the ref of its `where` call
    deadline: float  # its model is given up after it (PLACEMENT_S from the first ask)
    asked: float  # when this actor was asked for
    tries: int = 1  # asks so far
    placed: bool = False


class Host(msgspec.Struct, kw_only=True):
    actor: Any
    facts: HostFacts
    busy: int = 0  # units it runs now
    dead: bool = False
    ping: Any = None  # the ref of its ping in flight
    pinged: float = 0.0  # when that ping was sent


class HostPool:
    """Every model's hosts: `ready` ones take units; `gone` models are left unasked (and why)."""

    def __init__(self, ray: Any, cfg: ModelsFile, node_id: str, body: type):
        """``body``: the host actor's class (engine/cluster/host.py:ModelHost)."""
        self.ray, self.cfg, self.node_id, self.body = ray, cfg, node_id, body
        self.keepers: dict[str, Any] = {}
        self.shares: dict[str, int] = {}
        self.budget: tuple[Any, float] | None = None  # the budget keeper and limit, with --budget
        self.models = {m.name: m for m in cfg.models}
        self.ready: dict[str, list[Host]] = {m.name: [] for m in cfg.models}
        self.starting: dict[Any, Starting] = {}  # start ref -> the host asked for
        self.start_failures: Counter[str] = Counter()
        self.gone: dict[str, str] = {}  # model -> why its remaining units are left unasked

    def start_all(self, keepers: dict[str, Any], shares: dict[str, int],
                  budget: tuple[Any, float] | None = None) -> None:
        """A host per replica of every model, booking through ``keepers``, ``shares`` of accounts' caps,
        reserving its calls' cost with ``budget``'s keeper."""
        self.keepers, self.shares, self.budget = keepers, shares, budget
        for m in self.cfg.models:
            for _ in range(m.replicas):
                self.start(m.name)

    def start(self, name: str, deadline: float | None = None, tries: int = 1) -> None:
        m = self.models[name]
        remote = self.ray.remote(self.body).options(**self.placement(m))
        actor = remote.remote(m, self.cfg, self.keepers, self.shares, self.budget)
        now = time.monotonic()
        where = actor.where.remote()
        self.starting[actor.start.remote()] = Starting(name=name, actor=actor, where=where, asked=now,
                                                       tries=tries,
                                                       deadline=now + PLACEMENT_S if deadline is None else deadline)

    def placement(self, m: ModelConfig) -> dict[str, Any]:
        """Ray options of a host: GPUs and custom resources pin it; else the head node or, `spread`, any node."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        options: dict[str, Any] = dict(num_cpus=0, max_restarts=0, max_concurrency=UNITS_PER_HOST + 4)
        if m.gpus:
            options["num_gpus"] = m.gpus
        if m.ray_resources:
            options["resources"] = dict(m.ray_resources)
        if not m.gpus and not m.ray_resources:
            options["scheduling_strategy"] = ("SPREAD" if m.placement == "spread"
                                              else NodeAffinitySchedulingStrategy(self.node_id, soft=False))
        return options

    def wait_first(self) -> None:
        """Until every model has a ready host, or its placement time is over (the model is given up)."""
        while any(not self.ready[n] and n not in self.gone for n in self.models):
            if signalled():
                raise KeyboardInterrupt
            refs = list(self.starting)
            if not refs:
                break
            for ref in self.ray.wait(refs, num_returns=1, timeout=POLL_S)[0]:
                self.started(ref)
            self.check_deadlines()

    def started(self, ref: Any) -> None:
        """A host's facts arrived (it is ready), or its start failed (it is started again, up to MAX_ATTEMPTS)."""
        pending = self.starting.pop(ref)
        name, actor = pending.name, pending.actor
        try:
            facts: HostFacts = self.ray.get(ref)
        except Exception as e:  # noqa: BLE001 - a server that would not start, a node lost meanwhile
            self._kill(actor)
            self.start_failures[name] += 1
            if self.start_failures[name] >= MAX_ATTEMPTS:
                self.give_up(name, f"its host could not start {MAX_ATTEMPTS} times ({first_line(e)})")
            elif name not in self.gone:
                self.start(name)
            return
        if facts.engine_version != ENGINE_VERSION:
            self._kill(actor)
            raise UserError(f"node {facts.node_id[:8]} runs engine {facts.engine_version}, the driver "
                            f"{ENGINE_VERSION}: install the same version on every node")
        self.ready[name].append(Host(actor=actor, facts=facts))

    def check_deadlines(self) -> None:
        """Models whose placement time is over are given up; hosts still unplaced after REPLACE_S asked afresh."""
        now = time.monotonic()
        for ref, pending in list(self.starting.items()):
            name = pending.name
            if not pending.placed and self.ray.wait([pending.where], timeout=0)[0]:
                pending.placed = True  # placed: its server may take its time (until the deadline)
            if now > pending.deadline:
                del self.starting[ref]
                self._kill(pending.actor)
                if not self.ready[name] and name not in self.gone:
                    m = self.models[name]
                    asks = [*([f"gpus = {m.gpus}"] if m.gpus else []),
                            *([f"ray_resources = {_toml(m.ray_resources)}"] if m.ray_resources else [])]
                    needs = ", ".join(asks) or "a node"
                    self.give_up(name, f"no node could place its host within {PLACEMENT_S:g} s (needs {needs})")
            elif not pending.placed and now - pending.asked > REPLACE_S * pending.tries:
                del self.starting[ref]  # Ray may hold it for a node that is gone: asked for again
                self._kill(pending.actor)
                self.start(name, pending.deadline, pending.tries + 1)

    def replace(self, host: Host, name: str) -> None:
        """A host lost (its node, its server): killed, and a new one started unless the model is given up."""
        if host.dead:
            return
        host.dead = True
        self.ready[name].remove(host)
        self._kill(host.actor)
        if name not in self.gone:
            self.start(name)

    def heartbeat(self, every_s: float, silent_s: float) -> list[tuple[Host, str, str]]:
        """Ping every ready host every ``every_s``; (host, model, why) of those whose ping failed or went
        unanswered for ``silent_s`` (the driver takes them for lost, with their units)."""
        now = time.monotonic()
        lost = []
        for name, hosts in self.ready.items():
            for host in hosts:
                if host.ping is None:
                    if now - host.pinged >= every_s:
                        host.ping, host.pinged = host.actor.ping.remote(), now
                elif self.ray.wait([host.ping], timeout=0)[0]:
                    try:
                        self.ray.get(host.ping)
                        host.ping = None
                    except Exception as e:  # noqa: BLE001 - the actor or its node is gone
                        lost.append((host, name, first_line(e)))
                elif now - host.pinged > silent_s:
                    lost.append((host, name, f"no answer to a ping for {silent_s:g} s"))
        return lost

    def give_up(self, name: str, why: str) -> None:
        self.gone[name] = why
        log(f"unreachable: {name}: {why}; its remaining items are not asked: run the same command again")

    def busy_nodes(self) -> Counter[str]:
        """Units running per node (short ids)."""
        out: Counter[str] = Counter()
        for hosts in self.ready.values():
            for h in hosts:
                out[h.facts.node_id[:8]] += h.busy
        return +out

    def stop_all(self) -> None:
        hosts = [h for hs in self.ready.values() for h in hs]
        with contextlib.suppress(Exception):  # every server stops at once; a lost host is only killed
            self.ray.wait([h.actor.stop.remote() for h in hosts], num_returns=len(hosts), timeout=30)
        for host in hosts:
            self._kill(host.actor)
        for pending in self.starting.values():
            self._kill(pending.actor)

    def _kill(self, actor: Any) -> None:
        with contextlib.suppress(Exception):  # already dead, or its node gone
            self.ray.kill(actor, no_restart=True)


def head_node(ray: Any) -> str:
    """The head node's id (Ray marks it with a resource), else the driver's: API hosts and rate keepers go there.

    Not simply the driver's node: a driver joining a cluster on one machine may be attached to any of its
    raylets, and `ray job submit` runs it on the head anyway."""
    for node in ray.nodes():
        if node.get("Alive") and "node:__internal_head__" in node.get("Resources", {}):
            return str(node["NodeID"])
    return str(ray.get_runtime_context().get_node_id())


def _toml(table: dict[str, float]) -> str:
    """{'worker': 1.0} as models.toml spells it: { worker = 1 }."""
    return "{ " + ", ".join(f"{k} = {v:g}" for k, v in table.items()) + " }"


def first_line(e: BaseException) -> str:
    """An exception as one line (a Ray error's last line names the cause)."""
    text = str(e).strip().splitlines()
    return text[-1][:300] if text else type(e).__name__

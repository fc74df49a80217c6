"""The host actor of one model replica: the model's server on its node (when the engine serves it), its
limits and breaker, and the units it is handed, run by the existing lane code.

A host of a served model (`provider = "local"`, llama.cpp; `"vllm"`, `vllm serve`) holds `gpus` GPUs of
its node (Ray's `num_gpus`) and starts the server as its child, bound to loopback there
(engine/run/local_server.py:served); it fills the window and slots from what the server reports, as
on one machine. An API model's host only calls out. A unit is `engine/lanes/model_lane.py:ModelLane`
over `engine/lanes/work.py:pending_work` of one dataset, its rows put to a Writer whose insert lands
Parquet files (engine/cluster/units.py:Landing). A host runs a few units at once: they share its
model's concurrency gate, so the model's `max_concurrency` holds per host.

If the server dies, the unit stops with ServerDied: the driver replaces the host (a new actor, a new
server) and hands the unit out again, whose next attempt skips what landed.

A unit of an interactive dataset runs `engine/lanes/episode.py:EpisodeLane`, as on one machine: the
[user_simulator] from this host (its rates through the keepers, its concurrency gate the host's), each turn
landed (a second Writer, `turns+` files) before the episode's next call, the episode's results row after
its turns; an unfinished episode goes on after the kept turns the driver hands over with the unit.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import anyio

from engine.cluster.budget import RemoteBudget
from engine.cluster.limiter import host_limits
from engine.cluster.units import HostFacts, Landing, UnitOutcome, UnitTask
from engine.config.models import ModelConfig, ModelsFile
from engine.lanes.model_lane import ModelLane
from engine.lanes.work import pending_work
from engine.run.context import RunContext
from engine.run.endpoints import build_breakers, model_providers
from engine.run.generation import ProviderSet
from engine.run.progress import Progress
from engine.run.local_server import (LocalServer, probe_server, served, served_models, server_defaults,
                                     with_served_url)
from engine.sweep.identity import is_interactive
from engine.version import ENGINE_VERSION
from providers.breaker import Breaker
from providers.limits import Limits
from providers.registry import SERVED
from store.results.turns import KEY as TURN_KEY, TurnRow
from store.results.writer import Writer

# Seconds between looks at the server process while a unit runs.
WATCH_S = 0.5
FLUSH_S = 0.5  # a unit's rows are landed at least this often (the Writer's flush)


class ServerDied(RuntimeError):
    """The host's model server exited while a unit ran: the driver replaces the host."""


class ModelHost:
    """The actor's body (engine/cluster/driver.py makes it remote with the model's placement).

    Placed, then started: the constructor only notes its node, so `where` answers as soon as Ray has placed
    the actor (the driver tells a host still unplaced from one whose server is loading); `start` starts the
    model's server (minutes for vLLM) and says what it serves."""

    def __init__(self, m: ModelConfig, cfg: ModelsFile, keepers: dict[str, Any], pool_shares: dict[str, int],
                 budget: tuple[Any, float] | None = None):
        """``budget``: the run's budget keeper and limit (engine/cluster/budget.py), with --budget."""
        import ray

        self.node_id = ray.get_runtime_context().get_node_id()
        self._stack = contextlib.ExitStack()
        self._server: LocalServer | None = None
        self.m, self.cfg, self.keepers, self.pool_shares = m, cfg, keepers, pool_shares
        self._limits: Limits | None = None
        self._breaker: Breaker | None = None
        self._budget = RemoteBudget(*budget) if budget is not None else None
        self._sim: tuple[Limits, Breaker] | None = None  # the [user_simulator]'s, once an episode unit runs

    def where(self) -> str:
        """The node it was placed on."""
        return self.node_id

    def ping(self) -> float:
        """Answered between a unit's calls: the driver's sign that the host and its node still live."""
        return time.monotonic()

    def start(self) -> HostFacts:
        """The model's server started on this node (when the engine serves it); what the host serves.

        On the actor's event loop thread, not a worker thread: the server dies with the thread that started
        it (PR_SET_PDEATHSIG), and this one lives as long as the actor."""
        self._start_server()
        return HostFacts(node_id=self.node_id, model=self.m, engine_version=ENGINE_VERSION, served=self._served())

    def _start_server(self) -> None:
        m = self.m
        if m.provider in SERVED and self._server is None:
            self._server = self._stack.enter_context(served(m, quiet=True))
            url = self._server.base_url
            self.m = server_defaults(with_served_url(m, url), probe_server(url), quiet=True)

    def _served(self) -> str | None:
        """What the model's loopback server has loaded, asked here, on the node it runs on (the driver's
        127.0.0.1 is another machine): its identity (engine/sweep/identity.py)."""
        return served_models(ModelsFile(models=[self.m], accounts=self.cfg.accounts)).get(self.m.name)

    async def run_unit(self, task: UnitTask) -> UnitOutcome:
        m = self.m
        if self._limits is None:  # made on the actor's event loop, shared by its units
            self._limits = host_limits(m, self.cfg, self.keepers, self.pool_shares)
            self._breaker = build_breakers([m], quiet=True)[m.name]
        planned = task.planned
        done = set(task.done)
        work = pending_work([planned], lambda _id: task.n_done, lambda _id: done, {planned.id: task.prompt_budget})
        providers = model_providers(m, self._limits, [planned.dataset], self._breaker)
        landing = Landing(Path(task.landing), run_id=task.run_id, model=m.name, dataset=planned.id,
                          attempt=task.attempt)
        writer = Writer(cast(Any, None), insert=landing.land, flush_s=FLUSH_S)
        progress = Progress(quiet=True)
        progress.add(m.name, planned.size, task.n_done)
        sim: list[Breaker] = []  # the [user_simulator]'s breaker, for an episode unit
        if is_interactive(planned.dataset):
            run, writers, closers = self._episodes(task, providers, writer, progress, sim)
        else:
            lane = ModelLane(m.name, provider=providers, work=work, concurrency=m.concurrency, stamps=task.stamps)
            run, writers, closers = (lambda: lane.drive(writer, progress, self._budget)), [writer], []
        died = False

        async def watch(scope: anyio.CancelScope) -> None:
            nonlocal died
            while self._alive():
                await anyio.sleep(WATCH_S)
            died = True
            scope.cancel()

        async with anyio.create_task_group() as tg:
            for w in writers:
                tg.start_soon(w.run)
            tg.start_soon(watch, tg.cancel_scope)
            try:
                await run()
            finally:
                with anyio.CancelScope(shield=True):
                    for close in closers:
                        await close()
                    await providers.aclose()
                    for w in writers:  # in order: an episode's turns land before its results row
                        await w.close()
                        await w.finished.wait()
                tg.cancel_scope.cancel()
        if died:
            raise ServerDied(f"{m.name}: the model's server on node {self.node_id} exited")
        assert self._breaker is not None
        return UnitOutcome(node_id=self.node_id, rows=writer.rows_written, errors=progress.counters[m.name].errors,
                           unreachable=self._breaker.given_up, simulator_unreachable=any(b.given_up for b in sim))

    def _episodes(self, task: UnitTask, providers: ProviderSet, writer: Writer, progress: Progress,
                  sim_breaker: list[Breaker]) -> tuple[Callable[[], Awaitable[None]], list[Writer],
                                                          list[Callable[[], Awaitable[None]]]]:
        """An interactive dataset's unit: its episodes, each a dialogue with the [user_simulator] (the lane's
        run, the writers to run and flush in order, what to close)."""
        from engine.lanes.episode import EpisodeLane, EpisodeStats, Shared  # only an episode unit imports them
        from engine.lanes.simulator import Simulator

        m, planned, sim_cfg = self.m, task.planned, self.cfg.user_simulator
        assert sim_cfg is not None  # plan_sweep requires it with an interactive dataset
        if self._sim is None:
            self._sim = (host_limits(sim_cfg, self.cfg, self.keepers, self.pool_shares),
                         build_breakers([sim_cfg], quiet=True)[sim_cfg.name])
        limits, breaker = self._sim
        sim_breaker.append(breaker)
        sim = Simulator(sim_cfg, limits, breaker, max_tokens=task.seeker_tokens)
        turn_landing = Landing(Path(task.landing), run_id=task.run_id, model=m.name, dataset=planned.id,
                               attempt=task.attempt, turns=True)
        # A short flush window, as on one machine: each episode waits for its turn to land before its next call.
        turn_writer = Writer(cast(Any, None), insert=turn_landing.land, table="turns", key=TURN_KEY, flush_s=0.01)
        stored: dict[tuple[str, str, int], list[TurnRow]] = {}
        for t in task.turns:
            stored.setdefault((planned.id, t.item_id, t.sample), []).append(t)
        done = set(task.done)
        work = pending_work([planned], lambda _id: task.n_done, lambda _id: done)
        shared = Shared(simulator=sim, turns=turn_writer, stats=EpisodeStats(), sim_identity=task.sim_identity)
        lane = EpisodeLane(m, provider=providers, work=work, stamps=task.stamps, shared=shared, stored=stored,
                           width=m.concurrency + sim_cfg.concurrency)
        ctx = RunContext(cast(Any, None), progress=progress, budget=self._budget, quiet=True,
                         limits={m.name: self._limits or Limits(), sim_cfg.name: limits},
                         breakers={sim_cfg.name: breaker})
        ctx.answers = writer  # the lane's results rows land as the single-turn ones do
        return (lambda: lane.run(ctx)), [turn_writer, writer], [sim.aclose]

    def _alive(self) -> bool:
        return self._server is None or self._server.alive()

    def stop(self) -> None:
        """Stop the model's server (also done by the server's death signal when the actor is killed)."""
        self._stack.close()

    def server_pid(self) -> int | None:
        """The model server's process (the fault benchmark kills it alone)."""
        return self._server.proc.pid if self._server is not None and self._server.proc is not None else None

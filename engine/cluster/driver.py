"""`sweep --cluster ADDRESS`: the driver. It plans as the single-machine sweep plans, hands (model, dataset)
units to the models' host actors, and is the only DuckDB writer.

Order of a run: the database and plan as on one machine (engine/sweep/sweep.py:run_sweep); the files a
killed driver left landed are ingested first (store/cluster.py, each once); Ray is joined; one rate keeper
per account or model with limits (engine/cluster/limiter.py) and the hosts of every model replica are
started (engine/cluster/host.py; a served model's server starts on its node, and what it reports fills
the model as on one machine); then stamps and identities are checked before any call
(engine/sweep/sweep.py:stamp_run), the units are queued, and the loop runs:

- hand a host of the unit's model its next unit while it runs fewer than UNITS_PER_HOST (the hosts pull,
  so replicas balance themselves); what is stored is read again at each hand-out, so a unit's next
  attempt skips what its earlier attempt landed;
- ingest the landed files every POLL_S (rows, and the file's name, in one transaction);
- a unit whose host died (its node lost, its server exited) is recorded `lost`, the host replaced and
  the unit queued again, up to MAX_ATTEMPTS; then its pending items are stored as errors (a rerun retries
  them): never a hang. A model whose hosts cannot be placed within PLACEMENT_S (no node has its GPUs or
  resources) or whose endpoint its breaker gave up is left unasked, and the sweep exits 3.

Ctrl-C cancels the units in flight (each lands what it holds), ingests, and leaves a consistent database.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
import uuid
from collections import Counter, deque
from datetime import datetime, timezone
from typing import Any

import duckdb
import msgspec

from benchmark.errors import UserError
from engine.cluster.connect import connected, import_ray
from engine.cluster.host import UNITS_PER_HOST, ModelHost
from engine.cluster.limiter import pool_shares, start_keepers
from engine.cluster.units import MAX_ATTEMPTS, HostFacts, UnitOutcome, UnitTask, landing_folder
from engine.config import ModelConfig, ModelsFile
from engine.lanes.model_lane import Stamps, build_row
from engine.lanes.work import PlannedDataset, pending_work
from engine.run.context import StoredRun
from engine.run.generation import prompt_budgets
from engine.run.progress import Progress, log
from engine.run.signals import signalled
from engine.sweep.plan import SweepOptions, SweepPlan
from engine.sweep.prepare import SweepResult, keep_intervals, run_sweep, stamp_run
from engine.version import ENGINE_VERSION
from providers.errors import ErrorClass, ProviderError
from store import cluster as units_table
from store import resume
from store.writer import insert_rows

POLL_S = 0.5
# Seconds a host may take to be placed and ready (a vLLM server loads its weights meanwhile).
PLACEMENT_S = float(os.environ.get("ENGINE_CLUSTER_PLACEMENT_S", "600"))
PROGRESS_EVERY_S = 10.0


def sweep_on_cluster(opts: SweepOptions, address: str) -> SweepResult:
    import_ray(address)  # without Ray: one line saying how to install it, before any planning
    if opts.budget_usd is not None:
        raise UserError("--budget is not available with --cluster yet: run it without --cluster")
    return run_sweep(opts, functools.partial(_on_cluster, address=address))


def _on_cluster(plan: SweepPlan, cfg: ModelsFile, con: duckdb.DuckDBPyConnection, *, address: str) -> SweepResult:
    opts = plan.opts
    batched = [m.name for m in cfg.models if m.batch]
    if batched:
        raise UserError(f"batch = true ({', '.join(batched)}) goes through the provider's batch API and needs no "
                        "cluster: run those models without --cluster")
    if cfg.judge is not None or cfg.extractor is not None:
        log("note: the [judge] and [extractor] lanes do not run on the cluster; the same `sweep` without "
            "--cluster afterwards asks no model again and judges / reads the stored answers")
    assert opts.db is not None
    landing = landing_folder(opts.db)
    landing.mkdir(exist_ok=True)
    units_table.ensure_tables(con)
    units_table.close_stale_units(con)
    recovered = units_table.ingest_landed(con, landing)  # what a killed driver left: ingested once
    if recovered:
        log(f"ingested {sum(recovered.values())} row(s) landed by an earlier run", quiet=opts.quiet)
    with connected(address, quiet=opts.quiet) as ray:
        return Driver(ray, plan, cfg, con).run()


class Host(msgspec.Struct, kw_only=True):
    actor: Any
    facts: HostFacts
    busy: int = 0
    dead: bool = False


class Unit(msgspec.Struct, kw_only=True):
    model: str
    planned: PlannedDataset
    attempt: int = 1


class Driver:
    def __init__(self, ray: Any, plan: SweepPlan, cfg: ModelsFile, con: duckdb.DuckDBPyConnection):
        self.ray, self.plan, self.cfg, self.con, self.opts = ray, plan, cfg, con, plan.opts
        assert self.opts.db is not None
        self.landing = landing_folder(self.opts.db)
        self.run_id = uuid.uuid4().hex[:12]
        self.node_id = head_node(ray)
        self.models = {m.name: m for m in cfg.models}
        self.hosts: dict[str, list[Host]] = {m.name: [] for m in cfg.models}
        self.starting: dict[Any, tuple[str, Any, float]] = {}  # facts ref -> (model, actor, deadline)
        self.start_failures: Counter[str] = Counter()
        self.queues: dict[str, deque[Unit]] = {m.name: deque() for m in cfg.models}
        self.inflight: dict[Any, tuple[Host, Unit]] = {}
        self.gone: dict[str, str] = {}  # model -> why its remaining units are left unasked
        self.stamps: dict[str, Stamps] = {}
        self.progress = Progress(quiet=True)
        self.units_total = self.units_done = 0
        self.keepers: dict[str, Any] = {}
        self.shares: dict[str, int] = {}

    # ------------------------------------------------------------------ the run

    def run(self) -> SweepResult:
        opts, plan = self.opts, self.plan
        try:
            self.keepers = start_keepers(self.ray, self.cfg, self.run_id, self.node_id,
                                         lambda m: m.concurrency * m.replicas * UNITS_PER_HOST)
            self.shares = pool_shares(self.cfg, lambda name: self.models[name].replicas)
            for m in self.cfg.models:
                for _ in range(m.replicas):
                    self._start_host(m.name)
            self._wait_first_hosts()
            served = msgspec.structs.replace(self.cfg, models=[self._served(m) for m in self.cfg.models])
            self.stamps = stamp_run(self.con, opts=opts, cfg=served, planned=plan.planned,
                                    suite_version=plan.suite.version, run_id=self.run_id)
            self._queue_units(served)
            record = StoredRun(self.con, self.run_id, command=str(opts.models_path), engine_version=ENGINE_VERSION,
                               suite=plan.suite.name, suite_version=plan.suite.version)
            record.start()
            t0 = time.perf_counter()
            interrupted = False
            try:
                self._loop()
            except KeyboardInterrupt:
                interrupted = True
                self._cancel_inflight()
            except BaseException:
                record.abort("failed")
                raise
            finally:
                self._ingest()
            record.end("interrupted" if interrupted else "unreachable" if self.gone else "complete")
            run_s = time.perf_counter() - t0
        finally:
            self._stop_everything()
        if not interrupted:  # as on one machine: a --fraction's models estimated, then the bounds
            keep_intervals(self.con, [m.name for m in self.cfg.models] if self.opts.fraction is not None else None)
        self._summary()
        errors = sum(c.errors for c in self.progress.counters.values())
        rows = sum(c.done - c.start_done for c in self.progress.counters.values())
        return SweepResult(rows_written=rows, interrupted=interrupted, errors=errors, run_s=run_s,
                           unreachable=sorted(self.gone))

    def _served(self, m: ModelConfig) -> ModelConfig:
        """The model as its first host serves it (a started server's URL and window), for stamps and budgets."""
        hosts = self.hosts[m.name]
        return hosts[0].facts.model if hosts else m

    def _queue_units(self, served: ModelsFile) -> None:
        planned = self.plan.planned
        counts = resume.done_counts(self.con, list(self.models), {p.id: p.ids for p in planned})
        for m in served.models:
            self.models[m.name] = m
            self.progress.add(m.name, sum(p.size for p in planned),
                              sum(min(counts.get((m.name, p.id), 0), p.size) for p in planned))
            if m.name in self.gone:
                continue
            for p in planned:
                if counts.get((m.name, p.id), 0) < p.size:
                    self.queues[m.name].append(Unit(model=m.name, planned=p))
        self.units_total = sum(len(q) for q in self.queues.values())

    def _loop(self) -> None:
        last = time.monotonic()
        while any(self.queues.values()) or self.inflight:
            if signalled():
                raise KeyboardInterrupt
            self._hand_out()
            refs = [*self.inflight, *self.starting]
            ready = self.ray.wait(refs, num_returns=1, timeout=POLL_S)[0] if refs else []
            if ready:  # and whatever else is ready by now
                ready = self.ray.wait(refs, num_returns=len(refs), timeout=0)[0]
            else:
                time.sleep(0 if refs else POLL_S)
            self._ingest()
            for ref in ready:
                if ref in self.starting:
                    self._host_ready(ref)
                else:
                    self._unit_ended(ref)
            self._check_placement()
            if time.monotonic() - last > PROGRESS_EVERY_S:
                last = time.monotonic()
                self._progress_line()

    # ------------------------------------------------------------------ hosts

    def _start_host(self, name: str) -> None:
        m = self.models[name]
        remote = self.ray.remote(ModelHost).options(**self._placement(m))
        actor = remote.remote(m, self.cfg, self.keepers, self.shares)
        self.starting[actor.facts.remote()] = (name, actor, time.monotonic() + PLACEMENT_S)

    def _placement(self, m: ModelConfig) -> dict[str, Any]:
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

    def _wait_first_hosts(self) -> None:
        """Until every model has a ready host, or its placement time is over (the model is left unasked)."""
        while any(not self.hosts[n] and n not in self.gone for n in self.models):
            if signalled():
                raise KeyboardInterrupt
            refs = list(self.starting)
            if not refs:
                break
            for ref in self.ray.wait(refs, num_returns=1, timeout=POLL_S)[0]:
                self._host_ready(ref)
            self._check_placement()

    def _host_ready(self, ref: Any) -> None:
        name, actor, _ = self.starting.pop(ref)
        try:
            facts: HostFacts = self.ray.get(ref)
        except Exception as e:  # noqa: BLE001 - a server that would not start, a node lost meanwhile
            self.ray.kill(actor)
            self.start_failures[name] += 1
            if self.start_failures[name] >= MAX_ATTEMPTS:
                self._give_up_model(name, f"its host could not start {MAX_ATTEMPTS} times ({_first_line(e)})")
            elif name not in self.gone:
                self._start_host(name)
            return
        if facts.engine_version != ENGINE_VERSION:
            self.ray.kill(actor)
            raise UserError(f"node {facts.node_id[:8]} runs engine {facts.engine_version}, the driver {ENGINE_VERSION}: "
                            "install the same version on every node")
        self.hosts[name].append(Host(actor=actor, facts=facts))

    def _check_placement(self) -> None:
        now = time.monotonic()
        for ref, (name, actor, deadline) in list(self.starting.items()):
            if now > deadline:
                del self.starting[ref]
                self.ray.kill(actor)
                if not self.hosts[name]:
                    m = self.models[name]
                    needs = f"gpus = {m.gpus}, ray_resources = {m.ray_resources}" if m.gpus or m.ray_resources else "a node"
                    self._give_up_model(name, f"no node could place its host within {PLACEMENT_S:g} s (needs {needs})")

    def _replace(self, host: Host, name: str) -> None:
        if host.dead:
            return
        host.dead = True
        self.hosts[name].remove(host)
        with contextlib.suppress(Exception):
            self.ray.kill(host.actor)
        if name not in self.gone:
            self._start_host(name)

    def _give_up_model(self, name: str, why: str) -> None:
        self.gone[name] = why
        self.queues[name].clear()
        log(f"unreachable: {name}: {why}; its remaining items are not asked: run the same command again")

    # ------------------------------------------------------------------ units

    def _hand_out(self) -> None:
        for name, queue in self.queues.items():
            for host in self.hosts[name]:
                while queue and host.busy < UNITS_PER_HOST:
                    unit = queue.popleft()
                    task = self._task(unit)
                    if task is None:
                        continue  # an earlier attempt landed all of it
                    units_table.unit_started(self.con, self.run_id, name, unit.planned.id, unit.attempt,
                                             host.facts.node_id)
                    self.inflight[host.actor.run_unit.remote(task)] = (host, unit)
                    host.busy += 1

    def _task(self, unit: Unit) -> UnitTask | None:
        """The unit as a host runs it, with what is stored now (earlier attempts' landed rows included)."""
        p, m = unit.planned, self.models[unit.model]
        n_done = resume.done_counts(self.con, [m.name], {p.id: p.ids}).get((m.name, p.id), 0)
        if n_done >= p.size:
            self.units_done += 1
            return None
        done = sorted(resume.done_keys(self.con, m.name, p.id)) if n_done else []
        return UnitTask(run_id=self.run_id, model=m.name, planned=p, n_done=n_done, done=done, attempt=unit.attempt,
                        stamps=self.stamps[m.name], landing=str(self.landing),
                        prompt_budget=prompt_budgets(m, [p.dataset])[p.id])

    def _unit_ended(self, ref: Any) -> None:
        host, unit = self.inflight.pop(ref)
        host.busy -= 1
        name, ds = unit.model, unit.planned.id
        try:
            out: UnitOutcome = self.ray.get(ref)
        except self.ray.exceptions.TaskCancelledError:
            units_table.unit_ended(self.con, self.run_id, name, ds, unit.attempt, "interrupted")
            return
        except Exception as e:  # noqa: BLE001 - its node or server lost, or a bug: the next attempt skips what landed
            self._unit_lost(host, unit, e)
            return
        self.units_done += 1
        units_table.unit_ended(self.con, self.run_id, name, ds, unit.attempt,
                               "unreachable" if out.unreachable else "done")
        if out.unreachable:
            self._give_up_model(name, "its endpoint could not be reached (see the breaker's lines above)")

    def _unit_lost(self, host: Host, unit: Unit, e: BaseException) -> None:
        name, ds = unit.model, unit.planned.id
        actor_gone = isinstance(e, self.ray.exceptions.RayActorError) or "ServerDied" in type(e).__name__ or (
            "ServerDied" in str(e))
        if actor_gone:
            self._replace(host, name)
        self._ingest()
        if unit.attempt >= MAX_ATTEMPTS:
            units_table.unit_ended(self.con, self.run_id, name, ds, unit.attempt, "given_up")
            self._store_as_errors(unit, f"cluster: unit {name}/{ds} lost {unit.attempt} times, last: {_first_line(e)}")
            self.units_done += 1
            return
        units_table.unit_ended(self.con, self.run_id, name, ds, unit.attempt, "lost")
        log(f"{name}/{ds}: attempt {unit.attempt} lost on node {host.facts.node_id[:8]} ({_first_line(e)}); "
            "queued again", quiet=self.opts.quiet)
        self.queues[name].appendleft(Unit(model=name, planned=unit.planned, attempt=unit.attempt + 1))

    def _store_as_errors(self, unit: Unit, why: str) -> None:
        """A unit given up: its pending items become error rows (excluded from scores, retried by a rerun)."""
        task = self._task(unit)
        if task is None:
            return
        done = set(task.done)
        now = datetime.now(timezone.utc)
        rows = [build_row(unit.model, w, task.stamps, now, ProviderError(ErrorClass.TRANSIENT, why))
                for w in pending_work([unit.planned], lambda _id: task.n_done, lambda _id: done)]
        if rows:
            insert_rows(self.con, rows)
            self.progress.counters[unit.model].done += len(rows)
            self.progress.counters[unit.model].errors += len(rows)
        log(f"given up: {why}; {len(rows)} item(s) stored as errors (a rerun asks them again)")

    def _ingest(self) -> None:
        for (model, status), n in units_table.ingest_landed(self.con, self.landing).items():
            c = self.progress.counters.get(model)
            if c is not None:
                c.done += n
                c.errors += n if status == "error" else 0
                c.t_last = time.monotonic()

    def _cancel_inflight(self) -> None:
        """Ctrl-C: every unit in flight is cancelled, lands what it holds, and is ingested."""
        for ref in self.inflight:
            with contextlib.suppress(Exception):
                self.ray.cancel(ref)
        with contextlib.suppress(Exception):
            self.ray.wait(list(self.inflight), num_returns=len(self.inflight), timeout=10)
        for _host, unit in self.inflight.values():
            units_table.unit_ended(self.con, self.run_id, unit.model, unit.planned.id, unit.attempt, "interrupted")
        self.inflight.clear()

    def _stop_everything(self) -> None:
        for hosts in self.hosts.values():
            for host in hosts:
                with contextlib.suppress(Exception):
                    self.ray.get(host.actor.stop.remote(), timeout=30)
                with contextlib.suppress(Exception):
                    self.ray.kill(host.actor)
        for _name, actor, _ in self.starting.values():
            with contextlib.suppress(Exception):
                self.ray.kill(actor)
        for keeper in self.keepers.values():
            with contextlib.suppress(Exception):
                self.ray.kill(keeper, no_restart=True)

    # ------------------------------------------------------------------ what it says

    def _progress_line(self) -> None:
        nodes = Counter(h.facts.node_id[:8] for hosts in self.hosts.values() for h in hosts if h.busy)
        where = ", ".join(f"{n}: {k} unit(s)" for n, k in sorted(nodes.items())) or "none"
        log(f"cluster: {self.units_done}/{self.units_total} units done; running on {where}", quiet=self.opts.quiet)

    def _summary(self) -> None:
        for line in self.progress.summary_lines():
            log(line, quiet=self.opts.quiet)
        per_node: dict[str, Counter[str]] = {}
        for node, model, _ds, _attempt, status in units_table.where_units_ran(self.con, self.run_id):
            per_node.setdefault(node[:8], Counter())[f"{model} {status}"] += 1
        for node, what in sorted(per_node.items()):
            log(f"node {node}: " + ", ".join(f"{k} x{n}" for k, n in sorted(what.items())), quiet=self.opts.quiet)


def head_node(ray: Any) -> str:
    """The head node's id (Ray marks it with a resource), else the driver's: API hosts and rate keepers go there.

    Not simply the driver's node: a driver joining a cluster on one machine may be attached to any of its
    raylets, and `ray job submit` runs it on the head anyway."""
    for node in ray.nodes():
        if node.get("Alive") and "node:__internal_head__" in node.get("Resources", {}):
            return str(node["NodeID"])
    return str(ray.get_runtime_context().get_node_id())


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[-1][:300] if text else type(e).__name__

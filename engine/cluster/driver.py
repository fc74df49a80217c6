"""`sweep --cluster ADDRESS`: the driver. It plans as the single-machine sweep plans, hands (model, dataset)
units to the models' host actors, and is the only DuckDB writer.

Order of a run: the database and plan as on one machine (engine/sweep/prepare.py:run_sweep); the files a
killed driver left landed are ingested first (store/side/cluster.py, each once); Ray is joined; one rate keeper
per account or model with limits (engine/cluster/limiter.py) and the hosts of every model replica are
started (engine/cluster/placement.py keeps them; engine/cluster/host.py is one: a served model's server
starts on its node, and what it reports fills the model as on one machine); then stamps and identities
are checked before any call (engine/sweep/prepare.py:stamp_run), the units are queued, and the loop runs:

- hand a host of the unit's model its next unit while it runs fewer than UNITS_PER_HOST (the hosts pull,
  so replicas balance themselves); what is stored is read again at each hand-out, so a unit's next
  attempt skips what its earlier attempt landed;
- ingest the landed files every POLL_S (rows, and the file's name, in one transaction);
- every ready host is pinged every PING_S; one silent for SILENT_S (its node lost, and Ray not yet saying
  so: with Ray's default health checks that takes 15 s and more, and a call to it may never return) is
  taken for lost with the units it runs;
- a unit whose host died (its node lost, its server exited) is recorded `lost`, the host replaced and
  the unit queued again, up to MAX_ATTEMPTS; then its pending items are stored as errors (a rerun retries
  them): never a hang. A model whose hosts cannot be placed within placement.PLACEMENT_S (no node has its
  GPUs or resources) or whose endpoint its breaker gave up is left unasked, and the sweep exits 3.

Ctrl-C cancels the units in flight (each lands what it holds), ingests, and leaves a consistent database.
Once the units are done, a [judge] or [extractor] runs on this machine over the stored answers
(engine/sweep/sweep.py:judge_stored). `--serve` shows the loop's progress and each unit's node
(engine/sweep/live.py).
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
import uuid
from collections import deque
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import duckdb
import msgspec

from benchmark.errors import UserError
from engine.cluster.budget import start_budget_keeper
from engine.cluster.connect import connected, import_ray
from engine.cluster.host import ModelHost
from engine.cluster.limiter import keepers_ready, pool_shares, start_keepers
from engine.cluster.placement import POLL_S, Host, HostPool, first_line, head_node
from engine.cluster.summary import say_summary
from engine.cluster.units import MAX_ATTEMPTS, UNITS_PER_HOST, UnitOutcome, UnitTask, landing_folder, with_episodes
from engine.config.models import ModelConfig, ModelsFile
from engine.lanes.model_lane import Stamps, build_row
from engine.lanes.work import PlannedDataset, pending_work
from engine.run.context import StoredRun
from engine.run.generation import prompt_budgets
from engine.run.progress import Progress, log
from engine.run.signals import signalled, signals_remembered
from engine.sweep.identity import is_interactive
from engine.sweep.live import live_view_thread
from engine.sweep.plan import SweepOptions, SweepPlan
from engine.sweep.prepare import SweepResult, end_run, run_sweep, stamp_run
from engine.version import ENGINE_VERSION
from providers.errors import ErrorClass, ProviderError
from store import memory
from store.side import cluster as units_table
from store.results import resume
from store.results.writer import insert_rows

PROGRESS_EVERY_S = 10.0
PING_S = 2.0  # a ready host is pinged this often
# Seconds a host may leave a ping unanswered before it is taken for lost (its units are handed out again).
SILENT_S = float(os.environ.get("ENGINE_CLUSTER_SILENT_S", "30"))


# engine/sweep/sweep.py:judge_stored, handed in by the command line (importing the whole sweep here would
# make the import chain from the entry files longer than the layer rule allows).
JudgeStored = Callable[[SweepPlan, ModelsFile, duckdb.DuckDBPyConnection], SweepResult]


def sweep_on_cluster(opts: SweepOptions, address: str, judge_stored: JudgeStored) -> SweepResult:
    """``judge_stored``: the side lanes ([judge], [extractor]) over the stored answers, on this machine."""
    import_ray(address)  # without Ray: one line saying how to install it, before any planning
    return run_sweep(opts, functools.partial(_on_cluster, address=address, judge_stored=judge_stored))


def _on_cluster(plan: SweepPlan, cfg: ModelsFile, con: duckdb.DuckDBPyConnection, *, address: str,
                judge_stored: JudgeStored) -> SweepResult:
    opts = plan.opts
    batched = [m.name for m in cfg.models if m.batch]
    if batched:
        raise UserError(f"batch = true ({', '.join(batched)}) goes through the provider's batch API and needs no "
                        "cluster: run those models without --cluster")
    assert opts.db is not None
    landing = landing_folder(opts.db)
    landing.mkdir(exist_ok=True)
    units_table.ensure_tables(con)
    units_table.close_stale_units(con)
    recovered = units_table.ingest_landed(con, landing)  # what a killed driver left: ingested once
    if recovered:
        log(f"ingested {sum(recovered.values())} row(s) landed by an earlier run", quiet=opts.quiet)
    with connected(address, quiet=opts.quiet) as ray, signals_remembered():
        driver = Driver(ray, plan, cfg, con)
        result = driver.run()
    if (cfg.judge is not None or cfg.extractor is not None) and not result.interrupted:
        # The side lanes need no GPU and book nothing on the cluster: they run here, over what is stored.
        side = judge_stored(plan, driver.served, con)
        result.rows_written += side.rows_written
        result.interrupted = side.interrupted
        result.unreachable = sorted({*result.unreachable, *side.unreachable})
    return result


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
        self.queues: dict[str, deque[Unit]] = {m.name: deque() for m in cfg.models}
        self.inflight: dict[Any, tuple[Host, Unit]] = {}
        self.stamps: dict[str, Stamps] = {}
        self.progress = Progress(quiet=True)
        self.units_total = self.units_done = 0
        self.keepers: dict[str, Any] = {}
        self.budget: Any = None  # the budget keeper actor, with --budget
        self.budget_state: tuple[float, bool] | None = None  # (spent, stopped) as it last said
        self.pool = HostPool(ray, cfg, self.node_id, ModelHost)
        self.served = cfg  # the models as their hosts serve them, once they are up
        self.sim_gone = ""  # the [user_simulator]'s name once it could not be reached: no episode unit is handed out

    # ------------------------------------------------------------------ the run

    def run(self) -> SweepResult:
        opts, plan = self.opts, self.plan
        try:
            # The [user_simulator]'s rates are kept like a model's: every host's episodes book them there.
            sim = self.cfg.user_simulator
            rated = (msgspec.structs.replace(self.cfg, models=[*self.cfg.models, sim])
                     if sim is not None and any(is_interactive(p.dataset) for p in plan.planned) else self.cfg)
            self.keepers = start_keepers(self.ray, rated, self.run_id, self.node_id,
                                         lambda m: m.concurrency * m.replicas * UNITS_PER_HOST)
            if opts.budget_usd is not None:
                self.budget = start_budget_keeper(self.ray, opts.budget_usd, self.node_id)
            self.pool.start_all(self.keepers, pool_shares(self.cfg, lambda name: self.models[name].replicas),
                                (self.budget, opts.budget_usd) if opts.budget_usd is not None else None)
            keepers_ready(self.ray, self.keepers)  # while the hosts start
            self.pool.wait_first()
            # A model none of whose hosts could be placed has no server to say who answers: it is left out.
            self.served = msgspec.structs.replace(self.cfg, models=[self._served(m) for m in self.cfg.models
                                                                    if m.name not in self.pool.gone])
            # Who answers, asked by each model's host on its node (127.0.0.1 here is the driver's machine).
            asked = {m.name: hs[0].facts.served for m in self.served.models if (hs := self.pool.ready[m.name])}
            self.stamps = stamp_run(self.con, opts=opts, cfg=self.served, planned=plan.planned,
                                    suite_version=plan.suite.version, run_id=self.run_id, served=asked)
            self._queue_units(self.served)
            record = StoredRun(self.con, self.run_id, command=str(opts.models_path), engine_version=ENGINE_VERSION,
                               suite=plan.suite.name, suite_version=plan.suite.version)
            record.start()
            t0 = time.perf_counter()
            interrupted = False
            try:
                with memory.bounded(self.con), live_view_thread(opts.serve_port, self.con, self.progress,
                                                                  cluster=True):
                    self._loop()
            except KeyboardInterrupt:
                interrupted = True
                self._cancel_inflight()
            except BaseException:
                record.abort("failed")
                raise
            finally:
                self._ingest()
            self._check_budget()
            stopped = self.budget_state is not None and self.budget_state[1]
            record.end("interrupted" if interrupted else "unreachable" if self.pool.gone else
                       "budget" if stopped else "complete")
            run_s = time.perf_counter() - t0
        finally:
            self._stop_everything()
        rows = sum(c.done - c.start_done for c in self.progress.counters.values())
        result = SweepResult(rows_written=rows, interrupted=interrupted, errors=0, run_s=run_s,
                             unreachable=sorted(self.pool.gone) + ([self.sim_gone] if self.sim_gone else []))
        if self.budget_state is not None:
            result.spent_usd, result.budget_reached = self.budget_state
        # The same end as on one machine. A changed model version stops a host's lane; the guards that
        # saw it are the hosts' copies, so the driver's stamps report none (the units end as they do).
        return end_run(self.con, result, opts=opts, names=[m.name for m in self.cfg.models], progress=self.progress,
                       stamps=self.stamps, say=self._summary)

    def _served(self, m: ModelConfig) -> ModelConfig:
        """The model as its first host serves it (a started server's URL and window), for stamps and budgets."""
        hosts = self.pool.ready[m.name]
        return hosts[0].facts.model if hosts else m

    def _queue_units(self, served: ModelsFile) -> None:
        planned = self.plan.planned
        counts = resume.done_counts(self.con, list(self.models), {p.id: p.ids for p in planned})
        for m in served.models:
            self.models[m.name] = m
            self.progress.add(m.name, sum(p.size for p in planned),
                              sum(min(counts.get((m.name, p.id), 0), p.size) for p in planned))
            if m.name in self.pool.gone:
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
            refs = [*self.inflight, *self.pool.starting]
            ready = self.ray.wait(refs, num_returns=1, timeout=POLL_S)[0] if refs else []
            if ready:  # and whatever else is ready by now
                ready = self.ray.wait(refs, num_returns=len(refs), timeout=0)[0]
            else:
                time.sleep(0 if refs else POLL_S)
            self._ingest()
            for ref in ready:
                if ref in self.pool.starting:
                    self.pool.started(ref)
                else:
                    self._unit_ended(ref)
            self.pool.check_deadlines()
            self._heartbeat()
            if time.monotonic() - last > PROGRESS_EVERY_S:
                last = time.monotonic()
                self._progress_line()

    # ------------------------------------------------------------------ units

    def _hand_out(self) -> None:
        for name, queue in self.queues.items():
            if name in self.pool.gone:
                queue.clear()  # left unasked: the next run asks them
            for host in self.pool.ready[name]:
                while queue and host.busy < UNITS_PER_HOST:
                    unit = queue.popleft()
                    skip = bool(self.sim_gone) and is_interactive(unit.planned.dataset)  # left unasked
                    self.units_done += skip
                    task = None if skip else self._task(unit)
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
        task = UnitTask(run_id=self.run_id, model=m.name, planned=p, n_done=n_done, done=done, attempt=unit.attempt,
                        stamps=self.stamps[m.name], landing=str(self.landing),
                        prompt_budget=prompt_budgets(m, [p.dataset])[p.id])
        if is_interactive(p.dataset):
            with_episodes(task, self.con, self.cfg, self.plan.planned)
        return task

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
                               "unreachable" if out.unreachable or out.simulator_unreachable else "done")
        self._check_budget()
        if out.simulator_unreachable and not self.sim_gone:  # its episodes stay unasked; the model's others run
            self.sim_gone = self.cfg.user_simulator.name if self.cfg.user_simulator else "user_simulator"
            log(f"unreachable: {self.sim_gone} (the [user_simulator]) could not be reached: the episode units left "
                "are not handed out (run the same command again once it answers)")
        if out.unreachable:
            self.pool.give_up(name, "its endpoint could not be reached (see the breaker's lines above)")

    def _check_budget(self) -> None:
        """With --budget: once the keeper says the cap is reached, no unit is handed out any more."""
        if self.budget is None:
            return
        with contextlib.suppress(Exception):  # a keeper not answering: the hosts' reservations fail anyway
            self.budget_state = tuple(self.ray.get(self.budget.state.remote(), timeout=10))
        if self.budget_state is not None and self.budget_state[1]:
            for queue in self.queues.values():
                self.units_done += len(queue)
                queue.clear()  # left unasked: a rerun with a larger --budget asks them

    def _heartbeat(self) -> None:
        for host, name, why in self.pool.heartbeat(PING_S, SILENT_S):
            self._host_lost(host, name, why)

    def _host_lost(self, host: Host, name: str, why: str) -> None:
        """The host and the units it runs are lost (their calls are abandoned: the actor is killed)."""
        mine = [ref for ref, (h, _unit) in self.inflight.items() if h is host]
        for ref in mine:
            _host, unit = self.inflight.pop(ref)
            host.busy -= 1
            with contextlib.suppress(Exception):
                self.ray.cancel(ref)
            self._unit_lost(host, unit, why, actor_gone=True)
        self.pool.replace(host, name)  # once: a no-op when a lost unit replaced it

    def _unit_lost(self, host: Host, unit: Unit, e: BaseException | str, *, actor_gone: bool = False) -> None:
        name, ds = unit.model, unit.planned.id
        why = e if isinstance(e, str) else first_line(e)
        actor_gone = actor_gone or isinstance(e, self.ray.exceptions.RayActorError) or (
            "ServerDied" in type(e).__name__ or "ServerDied" in str(e))
        if actor_gone:
            self.pool.replace(host, name)
        self._ingest()
        if unit.attempt >= MAX_ATTEMPTS:
            units_table.unit_ended(self.con, self.run_id, name, ds, unit.attempt, "given_up")
            self._store_as_errors(unit, f"cluster: unit {name}/{ds} lost {unit.attempt} times, last: {why}")
            self.units_done += 1
            return
        units_table.unit_ended(self.con, self.run_id, name, ds, unit.attempt, "lost")
        log(f"{name}/{ds}: attempt {unit.attempt} lost on node {host.facts.node_id[:8]} ({why}); "
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
        self._check_budget()
        self.pool.stop_all()
        for tmp in self.landing.glob("*.tmp"):  # a write its host did not finish (killed): never whole
            tmp.unlink(missing_ok=True)
        for keeper in [*self.keepers.values(), *([self.budget] if self.budget is not None else [])]:
            with contextlib.suppress(Exception):
                self.ray.kill(keeper, no_restart=True)

    # ------------------------------------------------------------------ what it says

    def _progress_line(self) -> None:
        nodes = self.pool.busy_nodes()
        where = ", ".join(f"{n}: {k} unit(s)" for n, k in sorted(nodes.items())) or "none"
        log(f"cluster: {self.units_done}/{self.units_total} units done; running on {where}", quiet=self.opts.quiet)

    def _summary(self) -> None:
        say_summary(self.con, self.run_id, self.progress, self.budget_state, self.opts)

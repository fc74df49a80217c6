"""A sweep: every model, every dataset, concurrently, into one DuckDB file; resumable."""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import msgspec

from engine.config.models import ModelConfig, ModelsFile
from engine.lanes.batch.model_lane import SweepBatchLane
from engine.lanes.extract_lane import ExtractorLane, ExtractorPlan, plan_extraction
from engine.lanes.judge import JudgeLane, JudgePlan, plan_judging
from engine.lanes.model_lane import ModelLane, Stamps
from engine.lanes.side_lane import SideLane
from engine.lanes.work import PlannedDataset, pending_work
from engine.report.summary import log_run_end
from engine.run.context import Budget, Lane, RunContext, StoredRun, execute
from engine.run.endpoints import (build_breakers, build_limits, import_adapters, model_providers, unreachable_models,
                                  warm_adapters)
from engine.run.generation import ProviderSet, prompt_budgets
from engine.run.local_server import serve_local_models
from engine.run.progress import Progress, log
from engine.sweep.identity import is_interactive, simulator_identity
from engine.sweep.plan import SweepOptions, SweepPlan
from engine.sweep.prepare import SweepResult, end_run, run_sweep, stamp_run
from engine.version import ENGINE_VERSION
from store import snapshot
from store.results import resume, turns
from store.side import extractions

if TYPE_CHECKING:
    from engine.lanes.episode import Shared
    from engine.sweep.until_stable import Round


def sweep(opts: SweepOptions) -> SweepResult:
    return run_sweep(opts, _on_this_machine, before_open=_warm_if_new)


def _warm_if_new(db: Path, cfg: ModelsFile) -> None:
    if not db.exists():  # a new file: everything is asked
        warm_adapters(cfg.models)


def _on_this_machine(plan: SweepPlan, cfg: ModelsFile, con: duckdb.DuckDBPyConnection) -> SweepResult:
    with serve_local_models(cfg, quiet=plan.opts.quiet) as cfg:
        if plan.opts.until_stable:
            from engine.sweep.until_stable import in_rounds  # its estimator's scipy: only when rounds are asked for
            return in_rounds(con, plan, cfg, _sweep_with_store)
        return _sweep_with_store(con, opts=plan.opts, cfg=cfg, suite_name=plan.suite.name,
                                 suite_version=plan.suite.version, planned=plan.planned)


def judge_stored(plan: SweepPlan, cfg: ModelsFile, con: duckdb.DuckDBPyConnection) -> SweepResult:
    """The [judge] and [extractor] lanes over the answers the same command stored from model calls made
    elsewhere (engine/cluster's hosts): this machine's sweep, whose model lanes ask nothing. ``cfg``: the
    models as they were stamped (served models with their servers' URLs)."""
    return _sweep_with_store(con, opts=plan.opts, cfg=cfg, suite_name=plan.suite.name,
                             suite_version=plan.suite.version, planned=plan.planned, answered_elsewhere=True)


def _sweep_with_store(con: duckdb.DuckDBPyConnection, *, opts: SweepOptions, cfg: ModelsFile, suite_name: str,
                      suite_version: str, planned: list[PlannedDataset], step: Round | None = None,
                      answered_elsewhere: bool = False) -> SweepResult:
    """One run; `step`: each model asks only its prefix of each dataset (a round of --until-stable);
    `answered_elsewhere`: the model lanes ask nothing (the cluster's hosts made the calls)."""
    names = [m.name for m in cfg.models]
    run_id = uuid.uuid4().hex[:12]
    # --fresh deleted the answers before they were made elsewhere: not again (the side lanes' own still go).
    stamp_opts = msgspec.structs.replace(opts, fresh=False) if answered_elsewhere else opts
    stamps = stamp_run(con, opts=stamp_opts, cfg=cfg, planned=planned, suite_version=suite_version, run_id=run_id)

    mine = {m: step.planned(m, planned) if step else planned for m in names}
    if answered_elsewhere:  # what is not stored stays unasked here: the model lanes have no work
        counts = {(m, p.id): p.size for m in names for p in planned}
    elif step is None:
        counts = resume.done_counts(con, names, {p.id: p.ids for p in planned})
    else:  # done counts of each model's own prefix: rows past it must not make it look done
        counts = {k: v for m in names for k, v in resume.done_counts(con, [m], {p.id: p.ids for p in mine[m]}).items()}
    partial = {(m, p.id): resume.done_keys(con, m, p.id)
               for m in names for p in mine[m] if 0 < counts.get((m, p.id), 0) < p.size}
    progress = Progress(quiet=opts.quiet)
    for m in names:
        progress.add(m, sum(p.size for p in mine[m]), sum(min(counts.get((m, p.id), 0), p.size) for p in mine[m]))
    if step is not None:
        progress.notes.update(step.notes)

    judging = plan_judging(cfg, planned, con, run_id=run_id, counts=counts, fresh=opts.fresh,
                           models_path=opts.models_path, quiet=opts.quiet)
    extracting = plan_extraction(cfg, planned, con, run_id=run_id, fresh=opts.fresh, quiet=opts.quiet)
    budget = Budget(opts.budget_usd) if opts.budget_usd is not None else None
    limits = build_limits(cfg)
    helpers = [*([judging.judge] if judging else []), *([extracting.extractor] if extracting else []),
               *([cfg.user_simulator] if cfg.user_simulator and any(is_interactive(p.dataset) for p in planned)
                 else [])]
    breakers = build_breakers([*cfg.models, *helpers], quiet=opts.quiet)
    assert opts.db is not None  # with_file_defaults set it
    snaps = snapshot.Snapshots(opts.db)
    body: Callable[[RunContext], Awaitable[SweepResult]] = _nothing_to_ask
    if not _idle(cfg, mine, counts, judging, extracting, opts, step):
        import_adapters(cfg.models)  # only when something is called (aiohttp with them)
        lanes = SweepLanes(opts=opts, cfg=cfg, planned=planned, stamps=stamps, counts=counts, partial=partial,
                           judging=judging, extracting=extracting, snaps=snaps, mine=mine, con=con)
        body = functools.partial(run_lanes, run=lanes)
    # The `runs` row is inserted just before the run loop, which ends it: a failure earlier leaves none.
    record = StoredRun(con, run_id, command=str(opts.models_path), engine_version=ENGINE_VERSION, suite=suite_name,
                       suite_version=suite_version)
    context = functools.partial(RunContext, con, run_id=run_id, progress=progress, limits=limits,
                                breakers=breakers, budget=budget, quiet=opts.quiet)
    t0 = time.perf_counter()
    result = execute(body, context, record=record)
    result.run_s = time.perf_counter() - t0
    gone = unreachable_models(breakers)
    result.unreachable = list(gone)
    if budget is not None:
        result.spent_usd, result.budget_reached = budget.spent, budget.stopped
    return end_run(con, result, opts=opts, names=names, progress=progress, stamps=stamps, snaps=snaps,
                   intervals=step is None,  # rounds: once, after the last (engine/sweep/until_stable.py)
                   say=lambda: log_run_end(progress, limits, gone, budget, helper=judging.label if judging else None,
                                           quiet=opts.quiet))


class SweepLanes(msgspec.Struct, kw_only=True):
    """What a sweep's lanes need beyond the RunContext: the plan, resume state and side-lane plans."""

    opts: SweepOptions
    cfg: ModelsFile
    planned: list[PlannedDataset]
    stamps: dict[str, Stamps]
    counts: dict[tuple[str, str], int]  # (model, dataset) -> rows stored
    partial: dict[tuple[str, str], set[tuple[str, int]]]  # (model, dataset) -> keys stored, if some are
    judging: JudgePlan | None
    extracting: ExtractorPlan | None
    snaps: snapshot.Snapshots
    mine: dict[str, list[PlannedDataset]]  # model -> what it asks this run (a round: its prefixes)
    con: duckdb.DuckDBPyConnection | None = None  # for the stored turns of unfinished episodes

    def done_count(self, model: str, dataset: str) -> int:
        return self.counts.get((model, dataset), 0)

    def done_keys(self, model: str, dataset: str) -> set[tuple[str, int]]:
        return self.partial.get((model, dataset), set())


async def run_lanes(ctx: RunContext, run: SweepLanes) -> SweepResult:
    """Every model's lanes and the side lanes on the run loop, until their work is done."""
    cfg, planned, con = run.cfg, run.planned, ctx.con
    datasets = [p.dataset for p in planned]
    providers = {m.name: model_providers(m, ctx.limits[m.name], datasets, ctx.breakers.get(m.name))
                 for m in cfg.models}
    # Judged datasets' answers also go to the judge lane (engine/lanes/judge.py), unread choice answers to
    # the extractor lane (engine/lanes/extract_lane.py): side lanes register themselves with the context.
    sides: list[SideLane] = []
    if run.judging:
        sides.append(JudgeLane(run.judging, ctx))
    if run.extracting:
        sides.append(ExtractorLane(run.extracting, ctx))

    def rows_now() -> int:
        run.snaps.rows = ctx.writer.rows_written + sum(side.writer.rows_written for side in sides)
        return run.snaps.rows

    episodic = [p for p in planned if is_interactive(p.dataset)]
    shared: Shared | None = None
    if episodic:  # interactive datasets: the simulator and the turns' writer (engine/lanes/episode.py)
        from engine.lanes.episode import start_episodes  # only a sweep with episodes imports the lane

        assert cfg.user_simulator is not None  # plan_sweep requires it
        shared = start_episodes(ctx, cfg.user_simulator, episodic, simulator_identity(cfg.user_simulator))

    if run.opts.serve_port is not None:
        from engine.report.serve import serve_live

        ctx.background(serve_live, run.opts.serve_port, con, ctx.progress, ctx.limits)
    # Readers see progress through <db>.snapshot (store/snapshot.py); DuckDB locks the file itself.
    for writer in ctx.writers:
        run.snaps.track(writer)
    ctx.background(snapshot.keep_fresh, con, run.snaps, rows_now, _warn)

    async def close_providers() -> None:
        for p in providers.values():
            await p.aclose()

    ctx.on_close(close_providers)
    async with ctx.running():
        await ctx.run_lanes(lane for m in cfg.models for lane in model_lanes(m, run, providers[m.name], shared))
    for side in sides:
        log(side.summary(), quiet=ctx.quiet)
    if shared is not None:
        log(shared.stats.line(), quiet=ctx.quiet)
    if run.extracting is not None:  # readings of answers stored after their reading's batch (two writers)
        extractions.apply_readings(con)
    side_rows = sum(side.writer.rows_written for side in sides) + (shared.turns.rows_written if shared else 0)
    return SweepResult(rows_written=ctx.writer.rows_written + side_rows, interrupted=ctx.interrupted, errors=0)


def model_lanes(m: ModelConfig, run: SweepLanes, provider: ProviderSet, shared: Shared | None) -> list[Lane]:
    """One evaluated model's lanes: its single-turn items (``model_lane``) and its episodes, if any
    (engine/lanes/episode.py: called one by one, never batched)."""
    if shared is None:
        return [model_lane(m, run, provider, run.mine[m.name])]
    mine = run.mine[m.name]
    single = [p for p in mine if not is_interactive(p.dataset)]
    episodic = [p for p in mine if is_interactive(p.dataset)]
    lanes = [model_lane(m, run, provider, single)] if single else []
    if episodic:
        from engine.lanes.episode import EpisodeLane, lane_width

        work = pending_work(episodic, functools.partial(run.done_count, m.name),
                            functools.partial(run.done_keys, m.name))
        stored = {(p.id, i, s): rows for p in episodic
                  for (i, s), rows in turns.stored_turns(run_con(run), m.name, p.id).items()}
        sharing = sum(1 for ps in run.mine.values() if any(is_interactive(p.dataset) for p in ps))
        width = lane_width(m.concurrency, shared.simulator.cfg.concurrency, sharing)  # both sides busy
        lanes.append(EpisodeLane(m, provider=provider, work=work, stamps=run.stamps[m.name], shared=shared,
                                 stored=stored, width=width))
    return lanes


def run_con(run: SweepLanes) -> duckdb.DuckDBPyConnection:
    assert run.con is not None
    return run.con


def model_lane(m: ModelConfig, run: SweepLanes, provider: ProviderSet, planned: list[PlannedDataset]) -> Lane:
    """One evaluated model's lane over its pending work: a batched model goes through its provider's batch
    API (engine/lanes/batch/model_lane.py), any other calls it."""
    work = pending_work(planned, functools.partial(run.done_count, m.name), functools.partial(run.done_keys, m.name),
                        prompt_budgets(m, [p.dataset for p in planned]))
    if m.batch:
        return SweepBatchLane(m, providers=provider, planned=planned, work=work, stamps=run.stamps[m.name])
    return ModelLane(m.name, provider=provider, work=work, concurrency=m.concurrency, stamps=run.stamps[m.name])


def _warn(msg: str) -> None:
    log(f"warning: {msg}")


def _idle(cfg: ModelsFile, mine: dict[str, list[PlannedDataset]], counts: dict[tuple[str, str], int],
          judging: JudgePlan | None, extracting: ExtractorPlan | None, opts: SweepOptions, step: Round | None) -> bool:
    """Whether the run has nothing to do: every planned item answered and no side lane, episode, batch,
    round or live page. Anything of those takes the lanes' path, which finds out for itself."""
    if judging or extracting or step is not None or opts.serve_port is not None:
        return False
    if any(m.batch for m in cfg.models) or any(is_interactive(p.dataset) for ps in mine.values() for p in ps):
        return False
    return all(counts.get((m, p.id), 0) >= p.size for m, ps in mine.items() for p in ps)


async def _nothing_to_ask(ctx: RunContext) -> SweepResult:
    return SweepResult(rows_written=0, interrupted=ctx.interrupted, errors=0)

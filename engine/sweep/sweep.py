"""A sweep: every model, every dataset, concurrently, into one DuckDB file; resumable."""

from __future__ import annotations

import contextlib
import functools
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import anyio
import duckdb
import msgspec

from benchmark.suite import load_suite
from engine.report.baselines import declared_baselines
from engine.lanes.batch.model_lane import SweepBatchLane
from engine.config import ModelConfig, ModelsFile, SweepDefaults, base_url, load_models
from engine.run.endpoints import build_breakers, unreachable_models
from engine.errors import UserError
from engine.lanes.extract_lane import ExtractorLane, ExtractorPlan, plan_extraction
from engine.run.generation import ProviderSet, prompt_budgets, request_stamp
from engine.sweep.identity import check_identities, public_url
from engine.lanes.judge import JudgeLane, JudgePlan, plan_judging
from engine.sweep.local_server import serve_local_models
from engine.lanes.work import PlannedDataset, lane, load_dataset, resolve_datasets, run_stamp
from engine.run.progress import Progress, log
from engine.run.context import Budget, Lane, RunContext, StoredRun, execute
from engine.lanes.model_lane import ModelLane, Stamps
from engine.lanes.side_lane import SideLane, Tee
from providers.breaker import Breaker
from providers.concurrency import AdaptiveLimit
from providers.limits import Limits, RateLimit
from providers.registry import make_provider
from store import extractions, resume, runs, snapshot
from store.bootstrap import compute_intervals
from store.db import connect, transaction, write_failure
from store.suite_tables import load_suite_tables

ENGINE_VERSION = "0.1.0"


class SweepOptions(msgspec.Struct, frozen=True, kw_only=True):
    """Flags of `sweep`. None = not given: the models file's [sweep] table, then the default, applies."""

    models_path: Path
    db: Path | None = None
    data_dir: Path | None = None
    suite: str | None = None
    datasets: list[str] | None = None
    limit: int | None = None
    pull: bool = False
    fresh: bool = False
    quiet: bool = False
    allow_mixed: bool = False
    budget_usd: float | None = None  # stop dispatching new items once this much is spent
    serve_port: int | None = None  # serve the live view (engine/report/serve.py) on this loopback port


class SweepResult(msgspec.Struct, kw_only=True):
    rows_written: int
    interrupted: bool
    errors: int
    skipped: list[tuple[str, str]] = []  # (model, why) for models not run (no API key)
    spent_usd: float | None = None  # this run's cost (priced models), when --budget is set
    budget_reached: bool = False
    run_s: float = 0.0  # wall time of the calling phase, after planning and loading
    db: Path | None = None  # the database written (flag, models file or default)
    suite: str | None = None  # name@version of the suite loaded into it
    unreachable: list[str] = []  # models given up because their endpoint could not be reached


class Plan(msgspec.Struct):
    opts: SweepOptions  # with the file's [sweep] defaults filled in
    cfg: ModelsFile
    suite: Any  # benchmark.suite.Suite
    planned: list[PlannedDataset]


def plan_sweep(opts: SweepOptions, *, check_env: bool = True) -> Plan:
    """Load the models file, the suite and each dataset's sample; nothing is called."""
    cfg = load_models(opts.models_path, check_env=check_env)
    if opts.datasets is not None and not opts.datasets:
        raise UserError("--datasets is empty: name at least one dataset id (leave the flag out for the whole suite)")
    if opts.datasets is None and cfg.sweep.datasets is not None and not cfg.sweep.datasets:
        raise UserError(f"{opts.models_path}: [sweep] datasets is empty: name at least one dataset id "
                        "(leave the key out for the whole suite)")
    opts = with_file_defaults(opts, cfg.sweep)
    assert opts.suite is not None and opts.data_dir is not None  # with_file_defaults fills them
    suite = load_suite(opts.suite)
    datasets, skipped = resolve_datasets(opts.datasets, suite.datasets)
    if skipped:
        log(f"note: {len(skipped)} dataset(s) of suite {suite.name} have no adapter yet and are skipped: "
            f"{', '.join(skipped)}", quiet=opts.quiet)
    if not datasets:
        raise UserError(f"suite {suite.name}: none of its datasets can be evaluated yet")
    if opts.limit is not None and opts.limit < 1:
        raise UserError("--limit must be >= 1")
    if opts.budget_usd is not None and opts.budget_usd <= 0:
        raise UserError("--budget must be > 0 (US dollars)")
    limit = opts.limit or suite.sample_size
    if opts.pull:
        pull_data([ds.id for ds in datasets], opts.data_dir, quiet=opts.quiet)
    # Data problems surface here, before any model is called.
    planned = [load_dataset(ds, opts.data_dir, limit, suite.seed) for ds in datasets]
    return Plan(opts, cfg, suite, planned)


def with_file_defaults(opts: SweepOptions, file: SweepDefaults) -> SweepOptions:
    """Command-line flag, else the models file's [sweep] value, else the built-in default."""
    def pick(flag: Any, value: Any, default: Any) -> Any:
        return flag if flag is not None else value if value is not None else default

    return msgspec.structs.replace(
        opts,
        db=Path(pick(opts.db, file.db, "results.duckdb")),
        data_dir=Path(pick(opts.data_dir, file.data_dir, "data")),
        suite=pick(opts.suite, file.suite, "moodbench"),
        datasets=pick(opts.datasets, file.datasets, None),
        limit=pick(opts.limit, file.limit, None),
        pull=opts.pull or file.pull,
    )


def pull_data(dataset_ids: list[str], data_dir: Path, *, quiet: bool) -> None:
    """`data pull` for these datasets; files already present and verified are not fetched again."""
    from engine.data.pull import DataOptions, pull

    if pull(DataOptions(datasets=",".join(dataset_ids), data_dir=data_dir, quiet=quiet)) != 0:
        raise UserError(f"could not fetch the data for {', '.join(dataset_ids)} into {data_dir} (see above)")


def sweep(opts: SweepOptions) -> SweepResult:
    plan = plan_sweep(opts)
    opts = plan.opts
    runnable, skipped = plan.cfg.runnable()
    for m, why in skipped:
        # Shown even with --quiet: a model silently missing from a leaderboard is worse.
        log(f"warning: skipping model {m.name!r}: {why}")
    if opts.budget_usd is not None:
        unpriced = [m.name for m in runnable if m.price is None]
        if unpriced:
            log(f"warning: --budget counts priced models only; no price for: {', '.join(unpriced)}")
    cfg = msgspec.structs.replace(plan.cfg, models=runnable)
    assert opts.db is not None  # with_file_defaults fills it
    con = connect(opts.db)
    try:
        runs.close_stale_runs(con)  # we hold the write lock: a `running` row is a killed sweep's
        load_suite_tables(con, plan.suite)
        with serve_local_models(cfg, quiet=opts.quiet) as cfg:
            result = _sweep_with_store(con, opts=opts, cfg=cfg, suite_name=plan.suite.name,
                                       suite_version=plan.suite.version, planned=plan.planned)
    except (duckdb.Error, OSError, BaseExceptionGroup) as e:
        failure = write_failure(e, opts.db)
        if failure is None:
            raise
        raise failure from None
    finally:
        with contextlib.suppress(duckdb.Error):
            con.close()
    result.skipped = [(m.name, why) for m, why in skipped]
    result.db, result.suite = opts.db, f"{plan.suite.name}@{plan.suite.version}"
    for name, why in result.skipped:
        log(f"skipped: {name} ({why})", quiet=opts.quiet)
    return result


def _sweep_with_store(con: duckdb.DuckDBPyConnection, *, opts: SweepOptions, cfg: ModelsFile, suite_name: str,
                      suite_version: str, planned: list[PlannedDataset]) -> SweepResult:
    names = [m.name for m in cfg.models]
    run_id = uuid.uuid4().hex[:12]
    if opts.fresh:
        n = resume.delete_rows(con, names, [p.id for p in planned])
        log(f"--fresh: deleted {n} stored rows of these models and datasets", quiet=opts.quiet)
    # Who answers: checked against the stored rows before anything is called (engine/sweep/identity.py).
    identities = check_identities(con, cfg, planned, allow_mixed=opts.allow_mixed, fresh=opts.fresh, quiet=opts.quiet)
    stamps = {m.name: Stamps(suite_version, {p.id: run_stamp(p.dataset, request_stamp(m, p.dataset)) for p in planned},
                             run_id=run_id, price=m.price, max_output=m.max_tokens, identity=identities[m.name])
              for m in cfg.models}
    expected = {(m, p.id): (stamps[m].prompt_hash[p.id], p.dataset.scorer_version) for m in names for p in planned}
    conflicts = resume.stamp_conflicts(con, expected)
    if conflicts and not opts.allow_mixed:
        more = f" (and {len(conflicts) - 3} more)" if len(conflicts) > 3 else ""
        raise UserError(
            f"{opts.db} holds rows made with a different prompt or scorer: {'; '.join(conflicts[:3])}{more}. "
            "Resuming would mix them: rerun with --fresh to redo them, or --allow-mixed to keep both"
        )
    _record_run_inputs(con, cfg, planned)

    counts = resume.done_counts(con, names, {p.id: p.ids for p in planned})
    partial = {(m, p.id): resume.done_keys(con, m, p.id)
               for m in names for p in planned if 0 < counts.get((m, p.id), 0) < p.size}
    progress = Progress(quiet=opts.quiet)
    total = sum(p.size for p in planned)
    for m in names:
        progress.add(m, total, sum(min(counts.get((m, p.id), 0), p.size) for p in planned))

    judging = plan_judging(cfg, planned, con, run_id=run_id, counts=counts, fresh=opts.fresh,
                           models_path=opts.models_path, quiet=opts.quiet)
    extracting = plan_extraction(cfg, planned, con, run_id=run_id, fresh=opts.fresh, quiet=opts.quiet)
    budget = Budget(opts.budget_usd) if opts.budget_usd is not None else None
    limits = build_limits(cfg)
    breakers = build_breakers([*cfg.models, *([judging.judge] if judging else [])], quiet=opts.quiet)
    assert opts.db is not None  # with_file_defaults set it
    snaps = snapshot.Snapshots(opts.db)
    lanes = SweepLanes(opts=opts, cfg=cfg, planned=planned, stamps=stamps, counts=counts, partial=partial,
                      judging=judging, extracting=extracting, snaps=snaps)
    # The `runs` row is inserted just before the run loop, which ends it: a failure earlier leaves none.
    record = StoredRun(con, run_id, command=str(opts.models_path), engine_version=ENGINE_VERSION, suite=suite_name,
                       suite_version=suite_version)
    context = functools.partial(RunContext, con, run_id=run_id, progress=progress, limits=limits,
                                breakers=breakers, budget=budget, quiet=opts.quiet)
    t0 = time.perf_counter()
    result = execute(lambda ctx: _run(ctx, lanes), context, record=record)
    result.run_s = time.perf_counter() - t0
    gone = unreachable_models(breakers)
    result.unreachable = list(gone)
    try:  # the bounds belong beside the scores, for readers who open the file read-only
        if not result.interrupted:
            compute_intervals(con)
    except duckdb.Error as e:
        log(f"warning: confidence intervals not computed ({str(e).splitlines()[0]}); "
            "`report` computes them when it is run")
    with contextlib.suppress(duckdb.Error, OSError):  # the final state, for readers of the snapshot
        snaps.final(con, snaps.rows)
    result.errors = sum(c.errors for c in progress.counters.values())
    for line in progress.summary_lines():
        log(line, quiet=opts.quiet)
    for line in _throttle_lines(limits):
        log(line, quiet=opts.quiet)
    for name, b in gone.items():
        c = progress.counters.get(name) or progress.counters.get(judging.label if judging else "")
        left = f"; {c.total - c.done} item(s) not asked" if c else ""
        # Said even with --quiet, like a budget stop: the sweep did not finish, and this is why.
        log(f"unreachable: {name}: {b.endpoint} could not be reached for {b.unreachable_after_s:g} s ({b.reason})"
            f"{left}: run the same command again once it answers")
    if budget is not None:
        result.spent_usd = budget.spent
        result.budget_reached = budget.stopped
        not_asked = sum(c.total - c.done for c in progress.counters.values())
        if budget.stopped:
            # Said even with --quiet: the sweep did not finish, and this is why.
            log(f"budget reached: ${budget.spent:.4f} spent of ${opts.budget_usd:g}; stopped dispatching, "
                f"{not_asked} item(s) not asked (run again with a larger --budget to continue)")
        else:
            log(f"budget: ${budget.spent:.4f} spent of ${opts.budget_usd:g}", quiet=opts.quiet)
    return result


def _throttle_lines(limits: dict[str, Limits]) -> list[str]:
    out = []
    for name, lim in limits.items():
        if lim.throttled:
            now = f"; concurrency now {lim.concurrency}" if lim.concurrency is not None else ""
            out.append(f"{name}: rate-limited {lim.throttled} time(s) (429){now}")
    return out


def _record_run_inputs(con: duckdb.DuckDBPyConnection, cfg: ModelsFile, planned: list[PlannedDataset]) -> None:
    now = datetime.now(timezone.utc)
    with transaction(con):  # one commit, not one per statement
        for m in cfg.models:
            runs.record_model(con, m.name, provider=m.provider, base_url=public_url(base_url(m)), model_id=m.model,
                              metadata=m.metadata, generation=m.request_stamp(), updated_at=now)
            # What was asked for, so coverage counts items never attempted (a killed run) as missing.
            for p in planned:
                runs.record_planned(con, m.name, p.id, p.size, now)
        record_metrics(con, [p.dataset for p in planned])


def record_metrics(con: duckdb.DuckDBPyConnection, datasets: list[Any]) -> None:
    """How the datasets' item rows aggregate (dataset_metrics), as their adapters declare it now; and their
    baselines (dataset_baselines)."""
    for ds in datasets:
        runs.record_metrics(con, ds.id, ds.metrics, ds.scorer_version)
        chance, majority = declared_baselines(ds)
        runs.record_baselines(con, ds.id, chance=chance, majority=majority)


def build_limits(cfg: ModelsFile) -> dict[str, Limits]:
    """Each model's limits: its own rates and AIMD gate, plus its account's shared rates and pool.

    Only models that name the same account share anything; every other model
    has limiters of its own, so a throttled model never slows the others.
    """
    rates = {name: RateLimit(a.rpm, a.tpm) for name, a in cfg.accounts.items()}
    pools = {name: AdaptiveLimit(a.max_concurrency) for name, a in cfg.accounts.items() if a.max_concurrency}
    out = {}
    for m in [*cfg.models, *(x for x in (cfg.judge, cfg.extractor) if x is not None)]:
        gates = [AdaptiveLimit(m.concurrency)] if m.adaptive else []
        if m.account in pools:
            gates.append(pools[m.account])
        # Own rates first, the account's last (see Limits.acquire).
        out[m.name] = Limits(RateLimit(m.rpm, m.tpm), rates.get(m.account) if m.account else None, gates=gates)
    return out


def _provider(m: ModelConfig, limits: Limits, planned: list[PlannedDataset],
              breaker: Breaker | None = None) -> ProviderSet:
    return ProviderSet(m, [p.dataset for p in planned], lambda gen: _one_provider(m, limits, gen, breaker))


def _one_provider(m: ModelConfig, limits: Limits, generation: dict, breaker: Breaker | None = None):
    return make_provider(m.provider, base_url=base_url(m), model=m.model, api_key=m.api_key(),
                         generation=generation, limits=limits, timeout_s=m.timeout_s,
                         max_retries=m.max_retries, max_connections=m.concurrency,
                         backoff_base_s=m.backoff_s, reasoning=m.reasoning,
                         answer_constraint=m.answer_constraint, breaker=breaker,
                         timeout_per_token_s=m.timeout_per_token_s or 0.0)


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

    def done_count(self, model: str, dataset: str) -> int:
        return self.counts.get((model, dataset), 0)

    def done_keys(self, model: str, dataset: str) -> set[tuple[str, int]]:
        return self.partial.get((model, dataset), set())


async def _run(ctx: RunContext, run: SweepLanes) -> SweepResult:
    cfg, planned, con, progress = run.cfg, run.planned, ctx.con, ctx.progress
    providers = {m.name: _provider(m, ctx.limits[m.name], planned, ctx.breakers.get(m.name)) for m in cfg.models}
    # Judged datasets' answers also go to the judge lane (engine/lanes/judge.py), unread choice answers to
    # the extractor lane (engine/lanes/extract_lane.py); side lanes end after the models.
    sides: list[SideLane] = []
    if run.judging:
        judge = run.judging.judge.name
        sides.append(JudgeLane(run.judging, con, ctx.limits[judge], progress, ctx.breakers.get(judge)))
    if run.extracting:
        sides.append(ExtractorLane(run.extracting, con, ctx.limits[run.extracting.extractor.name], progress))
    if sides:
        ctx.answers = Tee(ctx.writer, sides)
    for side in sides:
        ctx.add_writer(side.writer)

    def rows_now() -> int:
        run.snaps.rows = ctx.writer.rows_written + sum(side.writer.rows_written for side in sides)
        return run.snaps.rows

    if run.opts.serve_port is not None:
        from engine.report.serve import serve_live

        ctx.background(serve_live, run.opts.serve_port, con, progress, ctx.limits)
    # Readers see progress through <db>.snapshot (store/snapshot.py); DuckDB locks the file itself.
    ctx.background(snapshot.keep_fresh, con, run.snaps, rows_now, _warn)

    async def close_providers() -> None:
        for p in providers.values():
            await p.aclose()

    ctx.on_close(close_providers)
    ctx.on_close(ctx.flush)
    for side in sides:
        ctx.on_close(side.aclose)
    async with ctx.running(), anyio.create_task_group() as lanes:
        for side in sides:
            lanes.start_soon(side.run)
        async with anyio.create_task_group() as models:
            for m in cfg.models:
                work = lane(planned, functools.partial(run.done_count, m.name),
                            functools.partial(run.done_keys, m.name),
                            prompt_budgets(m, [p.dataset for p in planned]))
                model_lane: Lane = (  # a batched model goes through its provider's batch API (engine/lanes/batch/model_lane.py)
                    SweepBatchLane(m, providers=providers[m.name], planned=planned, work=work,
                                   stamps=run.stamps[m.name]) if m.batch
                    else ModelLane(m.name, provider=providers[m.name], work=work, concurrency=m.concurrency,
                                   stamps=run.stamps[m.name]))
                models.start_soon(model_lane.run, ctx)
        for side in sides:
            await side.answers_done()
    for side in sides:
        log(side.summary(), quiet=ctx.quiet)
    if run.extracting is not None:  # readings of answers stored after their reading's batch (two writers)
        extractions.apply_readings(con)
    side_rows = sum(side.writer.rows_written for side in sides)
    return SweepResult(rows_written=ctx.writer.rows_written + side_rows, interrupted=ctx.interrupted, errors=0)


def _warn(msg: str) -> None:
    log(f"warning: {msg}")

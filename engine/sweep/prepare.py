"""What a sweep does before its first call and after its last, on this machine or as engine/cluster's
driver: plan, open the database (`run_sweep`), check who answers and stamp the run (`stamp_run`); end the
run (`end_run`); and the result it returns."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import msgspec

from benchmark.errors import UserError
from engine.config.models import ModelsFile, base_url, public_url
from engine.lanes.model_lane import Stamps, VersionGuard
from engine.lanes.work import PlannedDataset
from engine.run.generation import request_stamp
from engine.run.context import close_stale_runs
from engine.run.progress import Progress, log
from engine.sweep.identity import check_identities
from engine.run.local_server import served_models
from engine.sweep.plan import SweepOptions, SweepPlan, plan_sweep, run_stamp
from store.results import identity as store_identity
from store.results import resume
from store.results import runs
from store.results import turns
from store.hierarchy.bootstrap import compute_intervals
from store.db import connect, transaction, write_failure
from store.hierarchy.suite_tables import load_suite_tables
from store.snapshot import Snapshots


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


SweepBody = Callable[[SweepPlan, ModelsFile, duckdb.DuckDBPyConnection], SweepResult]


def run_sweep(opts: SweepOptions, body: SweepBody,
              before_open: Callable[[Path, ModelsFile], None] | None = None) -> SweepResult:
    """Plan, skip the models without a key, open the database, and run ``body`` (this machine's sweep,
    or engine/cluster's driver) on the plan, the runnable models and the connection; a failing
    database becomes one StoreError line. ``before_open``: called with the file and the runnable
    models once they are known, before the file is opened."""
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
    if before_open is not None:
        before_open(opts.db, cfg)
    con = connect(opts.db)
    try:
        close_stale_runs(con)  # we hold the write lock: a `running` row is a killed run's
        load_suite_tables(con, plan.suite)
        result = body(plan, cfg, con)
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


def stamp_run(con: duckdb.DuckDBPyConnection, *, opts: SweepOptions, cfg: ModelsFile, planned: list[PlannedDataset],
              suite_version: str, run_id: str, served: dict[str, str | None] | None = None) -> dict[str, Stamps]:
    """Before any call: --fresh, who answers (identities), each model's stamps, the stamp check against
    stored rows, and what the run plans (models, planned items, datasets). Shared with engine/cluster.

    ``served``: what each loopback server has loaded, as asked where it runs (a cluster's host actors);
    by default asked from here."""
    names = [m.name for m in cfg.models]
    if opts.fresh:
        n = resume.delete_rows(con, names, [p.id for p in planned])
        n += turns.delete_turns(con, names, [p.id for p in planned])
        log(f"--fresh: deleted {n} stored rows of these models and datasets", quiet=opts.quiet)
    # Who answers: checked against the stored rows before anything is called (engine/sweep/identity.py).
    identities = check_identities(con, cfg, planned, allow_mixed=opts.allow_mixed, fresh=opts.fresh, quiet=opts.quiet,
                                  served=served_models(cfg) if served is None else served)
    versions = store_identity.model_versions(con, names)  # what the stored answers say they were made by
    stamps = {m.name: Stamps(suite_version, {p.id: run_stamp(p.dataset, request_stamp(m, p.dataset)) for p in planned},
                             run_id=run_id, price=m.price, max_output=m.max_tokens, identity=identities[m.name],
                             versions=VersionGuard(m.name, versions[m.name], allow_mixed=opts.allow_mixed))
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
    return stamps


def _record_run_inputs(con: duckdb.DuckDBPyConnection, cfg: ModelsFile, planned: list[PlannedDataset]) -> None:
    now = datetime.now(timezone.utc)
    with transaction(con):  # one commit, not one per statement
        runs.record_models(con, [runs.ModelRow(m.name, provider=m.provider, base_url=public_url(base_url(m)),
                                               model_id=m.model, metadata=m.metadata, generation=m.request_stamp())
                                 for m in cfg.models], now)
        # What was asked for, so coverage counts items never attempted (a killed run) as missing.
        runs.record_planned_many(con, [(m.name, p.id, p.size) for m in cfg.models for p in planned], now)
        runs.record_datasets(con, [p.dataset for p in planned])


def keep_intervals(con: duckdb.DuckDBPyConnection, estimated: list[str] | None = None) -> None:
    """The bounds belong beside the scores, for readers who open the file read-only; a failure is a warning.

    `estimated`: models that answered a share (--fraction) are estimated first, so the views and
    their bounds score them by their estimates (docs/estimates.md) without an `estimate` run."""
    try:
        if estimated:
            # Imported here: the estimator's numeric stack (scipy) would cost every plain sweep ~0.3 s of start-up.
            from store.estimates.scores import compute_estimates
            compute_estimates(con, estimated)
    except (UserError, duckdb.Error) as e:  # no scored row yet: the views score what was answered
        log(f"warning: estimates not computed ({str(e).splitlines()[0]}); `estimate DB` computes them")
    try:
        compute_intervals(con)
    except duckdb.Error as e:
        log(f"warning: confidence intervals not computed ({str(e).splitlines()[0]}); "
            "`report` computes them when it is run")


def end_run(con: duckdb.DuckDBPyConnection, result: SweepResult, *, opts: SweepOptions, names: list[str],
            progress: Progress, stamps: dict[str, Stamps], say: Callable[[], None], intervals: bool = True,
            snaps: Snapshots | None = None) -> SweepResult:
    """Once the calls are over, on this machine or as engine/cluster's driver: the bounds (a --fraction's
    models estimated first) unless interrupted or `intervals` is off, the snapshot's final state, the errors
    counted, `say` (how the run went, on stderr), then the line a changed model version ends the run with."""
    if intervals and not result.interrupted:
        keep_intervals(con, names if opts.fraction is not None else None)
    if snaps is not None:
        with contextlib.suppress(duckdb.Error, OSError):  # the final state, for readers of the snapshot
            snaps.final(con, result.rows_written)
    result.errors = sum(c.errors for c in progress.counters.values())
    say()
    changed = [s.versions.change for s in stamps.values() if s.versions is not None and s.versions.change]
    if changed and not result.interrupted:
        # As a changed stamp stops a sweep before its first call; what was answered before is stored.
        more = f" (also: {'; '.join(changed[1:])})" if len(changed) > 1 else ""
        raise UserError(f"{changed[0]}; its remaining items were not asked: rerun with --fresh to ask again, or "
                        f"give it a new name (--allow-mixed keeps both){more}")
    return result

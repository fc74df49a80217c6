"""`sweep --until-stable`: ask in rounds until each model's overall rank is settled.

A round extends each dataset's seeded prefix (benchmark/sampling.py's order, so a round asks what a
full sweep would ask first) by store/stats/stopping.py's allocation and runs as one ordinary sweep run
(engine/sweep/sweep.py). Then the model's dataset scores are estimated (store/estimates/scores.py) and its
overall's interval is placed among the ranked models already in the database; a model stops once
that rank range is at most one place wide, or when every item is asked. What is stored is where
a rerun starts: each model resumes from the prefix it has answered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import duckdb
import msgspec

from benchmark.errors import UserError
from benchmark.suites.suite import Suite
from benchmark.suites.weights import dataset_weights
from engine.config.models import ModelsFile
from engine.lanes.work import PlannedDataset
from engine.run.progress import log
from engine.sweep.plan import SweepPlan
from engine.sweep.prepare import SweepResult, keep_intervals
from store.results import resume
from store.estimates.scores import compute_estimates
from store.stats.estimator import Estimate
from store.stats.stopping import Standing, allocate, round_budget, settled, spread, standing

COMPLETE = "complete"  # the method of a dataset the model answered every item of: its score, exact


class Round(msgspec.Struct, frozen=True):
    """One round: how far into each dataset's sample each model asks, and the note beside its bar."""

    reach: dict[str, dict[str, int]]  # model -> dataset -> items of the prefix
    notes: dict[str, str]

    def planned(self, model: str, planned: list[PlannedDataset]) -> list[PlannedDataset]:
        k = self.reach[model]
        return [p if k.get(p.id, len(p.records)) >= len(p.records) else PlannedDataset(p.dataset, p.records[:k[p.id]])
                for p in planned]


def in_rounds(con: duckdb.DuckDBPyConnection, plan: SweepPlan, cfg: ModelsFile,
              run: Callable[..., SweepResult]) -> SweepResult:
    """Rounds of `run` (engine/sweep/sweep.py's one-run body) until every model is settled or done."""
    opts, suite = plan.opts, plan.suite
    sizes = {p.id: len(p.records) for p in plan.planned}
    weights = dataset_weights(suite, set(sizes))
    names = [m.name for m in cfg.models]
    total = sum(sizes.values())
    reach = {m: {d: 0 for d in sizes} if opts.fresh else stored_prefix(con, m, plan.planned) for m in names}
    result = SweepResult(rows_written=0, interrupted=False, errors=0)
    spent = 0.0
    rounds = 0
    finished: set[str] = set()  # settled or every item asked: not estimated again
    while True:
        others = other_totals(con, suite, set(sizes), names)
        asking: dict[str, dict[str, int]] = {}
        notes: dict[str, str] = {}
        for m in (m for m in names if m not in finished):
            where, est = model_standing(con, m, suite.name, suite.version, weights, others, sizes) \
                if any(reach[m].values()) else (None, {})
            asked = sum(reach[m].values())
            if where is not None and settled(where) or asked >= total:
                finished.add(m)
                if rounds or where is not None:
                    log(f"{m}: {describe(where, asked, total)}: {'settled' if asked < total else 'every item asked'}",
                        quiet=opts.quiet)
                continue
            asking[m] = allocate(reach[m], sizes, weights, {d: spread(est.get(d)) for d in sizes},
                                 round_budget(sizes))
            notes[m] = f"{rank_text(where)}; {total - sum(asking[m].values()):,} calls saved"
            if where is not None:
                log(f"{m}: {describe(where, asked, total)}", quiet=opts.quiet)
        if not asking:
            break
        rounds += 1
        each = ", ".join(f"{m} asks {sum(k.values()):,} of {total:,} items" for m, k in asking.items())
        log(f"round {rounds}: {each}", quiet=opts.quiet)
        step_opts = msgspec.structs.replace(opts, fresh=opts.fresh and rounds == 1,
                                            budget_usd=None if opts.budget_usd is None else opts.budget_usd - spent)
        step_cfg = msgspec.structs.replace(cfg, models=[m for m in cfg.models if m.name in asking])
        r = run(con, opts=step_opts, cfg=step_cfg, suite_name=suite.name, suite_version=suite.version,
                planned=plan.planned, step=Round(asking, notes))
        _add(result, r)
        spent += r.spent_usd or 0.0
        reach.update(asking)
        if r.interrupted or r.unreachable or r.budget_reached:
            break
    if not result.interrupted:
        keep_intervals(con)
    return result


def _add(total: SweepResult, r: SweepResult) -> None:
    total.rows_written += r.rows_written
    total.errors += r.errors
    total.interrupted, total.budget_reached, total.run_s = r.interrupted, r.budget_reached, total.run_s + r.run_s
    total.unreachable = sorted({*total.unreachable, *r.unreachable})
    if r.spent_usd is not None:
        total.spent_usd = (total.spent_usd or 0.0) + r.spent_usd


def stored_prefix(con: duckdb.DuckDBPyConnection, model: str, planned: list[PlannedDataset]) -> dict[str, int]:
    """Per dataset: how many leading items of the sample the model has an ok answer to (where a rerun goes on)."""
    out = {}
    for p in planned:
        done = {i for i, s in resume.done_keys(con, model, p.id) if s == 0}
        k = 0
        while k < len(p.records) and p.records[k][0] in done:
            k += 1
        out[p.id] = k
    return out


def other_totals(con: duckdb.DuckDBPyConnection, suite: Suite, planned: set[str], sweeping: list[str]) -> list[float]:
    """The overall of every ranked model of the suite not in this sweep, over the datasets this sweep plans.

    With the whole suite planned it is the leaderboard's raw_total (benchmark/suites/weights.py); with
    --datasets, the same weights over those datasets, as the new model's overall is."""
    rows = con.execute(
        "SELECT d.model, d.dataset, d.score FROM dataset_scores d JOIN leaderboard l USING (suite, version, model) "
        "WHERE d.suite = ? AND d.version = ? AND l.rank IS NOT NULL AND d.score IS NOT NULL",
        [suite.name, suite.version]).fetchall()
    scores: dict[str, dict[str, float]] = {}
    for m, d, score in rows:
        if m not in sweeping and d in planned:
            scores.setdefault(m, {})[d] = float(score)
    totals = []
    for per in scores.values():
        w = dataset_weights(suite, set(per))
        if any(w[d] > 0 for d in per):  # a model scored only on the gate's datasets has no overall here
            totals.append(sum(w[d] * x for d, x in per.items()))
    return totals


def model_standing(con: duckdb.DuckDBPyConnection, model: str, suite: str, version: str, weights: dict[str, float],
                   others: list[float], sizes: dict[str, int]) -> tuple[Standing | None, dict[str, Estimate]]:
    """The model's standing from its estimates, and its complete datasets' scores; None before any ok answer."""
    try:
        est = compute_estimates(con, [model]).estimates.get(model, {})
    except UserError:  # no scored row yet (every answer an error)
        return None, {}
    scores: dict[str, Any] = dict(con.execute(
        "SELECT dataset, score FROM dataset_scores WHERE suite = ? AND version = ? AND model = ? AND score IS NOT NULL",
        [suite, version, model]).fetchall())
    parts = {d: est[d] if d in est else Estimate(scores[d], scores[d], scores[d], sizes[d], sizes[d], COMPLETE)
             for d in weights if d in est or d in scores}
    return standing(parts, weights, others), est


def rank_text(s: Standing | None) -> str:
    if s is None or s.rank_low == 1 and s.rank_high == s.places:
        return "rank open" if s is None else f"rank 1-{s.places} of {s.places}"
    return f"rank {s.rank_low}-{s.rank_high} of {s.places}" if s.width else f"rank {s.rank_low} of {s.places}"


def describe(s: Standing | None, asked: int, total: int) -> str:
    known = s is not None and s.estimate == s.estimate  # NaN: a dataset not answered yet
    overall = f" (overall {s.estimate:.1f}, 95% {s.ci_low:.1f}-{s.ci_high:.1f})" if s and known else ""
    return (f"{rank_text(s)}{overall} after {asked:,} of {total:,} items, "
            f"{total - asked:,} calls saved ({(total - asked) / total:.0%})")

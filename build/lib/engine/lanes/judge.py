"""The judge lane: a side lane (engine/lanes/side_lane.py) asking the [judge] model about stored answers.

Its backlog: the answers stored by earlier runs that have no settled verdict
by this judge and rubric on that very answer. So a judged item is done when
both its answer and its verdict are stored, and a resume asks neither again.
A failed call is stored as an ``error`` judgement (retried on the next run),
never as a score. Verdict statuses: store/side/judgements.sql.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import duckdb
import msgspec
import orjson

from benchmark.context import prompt_budget
from benchmark.adapters.judges import Rubric, Verdict, rubric_for
from engine.lanes.batch.side_lane import SideBatch
from engine.config.models import ModelConfig, ModelsFile, base_url, public_url
from engine.run.generation import prompt_budgets
from engine.lanes.work import PlannedDataset, render
from engine.run.context import RunContext
from engine.run.progress import log
from engine.lanes.side_lane import Question, SideLane
from providers.base import ChatResult, Provider
from providers.errors import ProviderError
from providers.limits import Limits
from providers.registry import make_provider
from store.side import judgements as store
from store.side.batches import JUDGE
from store.results.writer import ResultRow


class JudgePlan(msgspec.Struct, kw_only=True):
    """What the lane needs, decided before anything is called."""

    judge: ModelConfig
    rubrics: dict[str, Any]  # dataset id -> Rubric
    planned: dict[str, PlannedDataset]
    budgets: dict[str, dict[str, int | None]]  # model -> dataset -> its prompt budget (to re-render the item it saw)
    run_id: str
    backlog: int  # stored answers waiting for a verdict
    expected: int  # answers this run may produce for judged datasets

    @property
    def label(self) -> str:
        return "judge" if self.judge.name == "judge" else f"judge {self.judge.name}"


def plan_judging(cfg: ModelsFile, planned: list[PlannedDataset], con: duckdb.DuckDBPyConnection, *,
                 run_id: str, counts: dict[tuple[str, str], int], fresh: bool, models_path: Any,
                 quiet: bool = False) -> JudgePlan | None:
    """Declare the judge metrics, say what is (not) judged, and plan the lane; None: no judging."""
    rubrics = {p.id: r for p in planned if (r := rubric_for(p.id)) is not None}
    if not rubrics:
        return None
    judge = cfg.judge
    why = f"no [judge] table in {models_path}" if judge is None else judge.missing_key()
    if why:
        # Said once, even with --quiet: a method silently missing from a score is worse.
        who = "" if judge is None else "the judge's "
        log(f"note: {who}{why}: the judge methods of {', '.join(rubrics)} are absent "
            "(their other metrics still score)")
        for ds, rubric in rubrics.items():
            store.declare_metrics(con, ds, rubric, None)
        return None
    assert judge is not None
    for m in cfg.models:
        if (base_url(m), m.model) == (base_url(judge), judge.model):
            log(f"warning: the judge ({judge.model} at {base_url(judge)}) is also evaluated as {m.name!r}: "
                "a judge tends to favour its own answers")
    store.record_judge(con, judge.name, judge.provider, public_url(base_url(judge)), judge.model, judge.generation(),
                       judge.context_tokens)
    for ds, rubric in rubrics.items():
        store.declare_metrics(con, ds, rubric, judge.name)
    names = [m.name for m in cfg.models]
    if fresh:
        n = store.delete_judgements(con, names, list(rubrics))
        log(f"--fresh: deleted {n} stored judgements of these models and datasets", quiet=quiet)
    by_id = {p.id: p for p in planned if p.id in rubrics}
    versions = {d: r.version for d, r in rubrics.items()}
    backlog = store.pending_count(con, judge.name, run_id, names, versions, {d: p.ids for d, p in by_id.items()})
    expected = sum(max(p.size - counts.get((m, d), 0), 0) for m in names for d, p in by_id.items())
    budgets = {m.name: prompt_budgets(m, [p.dataset for p in planned]) for m in cfg.models}
    stale = store.other_rubrics(con, judge.name, versions)
    if stale:
        log(f"judge {judge.name}: {stale} stored judgement(s) were made with another rubric version: "
            "those answers are judged again", quiet=quiet)
    if backlog:
        log(f"judge {judge.name}: {backlog} stored answer(s) to judge", quiet=quiet)
    return JudgePlan(judge=judge, rubrics=rubrics, planned=by_id, budgets=budgets, run_id=run_id,
                     backlog=backlog, expected=expected)


class JudgeLane(SideLane):
    """The judge's side lane (engine/lanes/side_lane.py): answers of judged datasets, judged once each."""

    def __init__(self, plan: JudgePlan, ctx: RunContext):
        self.plan = plan
        self.label = plan.label
        j = plan.judge
        super().__init__(ctx, concurrency=j.concurrency, total=plan.backlog + plan.expected,
                         insert=store.insert_judgements, table="judgements", key=store.KEY, price=j.price)
        limits, breaker = ctx.limits.get(j.name) or Limits(), ctx.breakers.get(j.name)
        self._providers: dict[int, Provider] = {}
        for rubric in plan.rubrics.values():
            out = j.max_tokens or rubric.max_tokens  # the rubric's allowance unless [judge] sets one
            if out not in self._providers:
                self._providers[out] = make_provider(
                    j.provider, base_url=base_url(j), model=j.model, api_key=j.api_key(),
                    generation={**j.generation(), "max_tokens": out}, limits=limits, timeout_s=j.timeout_s,
                    max_retries=j.max_retries, max_connections=j.concurrency, backoff_base_s=j.backoff_s,
                    reasoning=j.reasoning, breaker=breaker, timeout_per_token_s=j.timeout_per_token_s or 0.0)
        self._raws = {d: dict(p.records) for d, p in plan.planned.items()}
        if j.batch:  # through its provider's batch API (engine/lanes/batch/side_lane.py)
            self.batch = SideBatch(self, j, ctx.con, ctx.progress, lane=JUDGE, adapter=next(iter(self._providers.values())),
                                   run_id=plan.run_id, plans=lambda k: k.model in plan.budgets
                                   and k.item_id in self._raws.get(k.dataset, {}))

    def job(self, row: ResultRow) -> tuple | None:
        if row.status == "ok" and row.dataset in self.plan.rubrics:
            return (row.model, row.dataset, row.item_id, row.sample, row.response, row.prediction)
        return None

    def backlog_page(self, cur: duckdb.DuckDBPyConnection, after: tuple, page: int) -> list[tuple]:
        p = self.plan
        versions = {d: r.version for d, r in p.rubrics.items()}
        plan = {d: pl.ids for d, pl in p.planned.items()}
        rows = store.pending_page(cur, p.judge.name, p.run_id, list(p.budgets), versions, plan, after, page)
        return [(m, d, i, s, resp, orjson.loads(pred) if pred is not None else None)
                for m, d, i, s, resp, pred in rows]

    async def close_providers(self) -> None:
        for prov in self._providers.values():
            await prov.aclose()

    async def judge_one(self, model: str, dataset: str, item_id: str, sample: int, response: str | None,
                        prediction: Any) -> store.JudgementRow:
        return await self.handle((model, dataset, item_id, sample, response, prediction))

    def base(self, job: tuple) -> dict:
        model, dataset, item_id, sample, response, _ = job
        p = self.plan
        return dict(model=model, dataset=dataset, item_id=item_id, sample=sample, judge=p.judge.name,
                    rubric=p.rubrics[dataset].version, answer_md5=store.answer_md5(response), run_id=p.run_id,
                    started_at=datetime.now(timezone.utc))

    def prepare(self, job: tuple, base: dict) -> Question | store.JudgementRow:
        model, dataset, item_id, sample, response, prediction = job
        p = self.plan
        rubric: Rubric = p.rubrics[dataset]
        # The item as this model saw it (shortened to its context, if it was).
        item = render(p.planned[dataset].dataset, item_id, self._raws[dataset][item_id], sample,
                      p.budgets.get(model, {}).get(dataset))
        # A rubric may decline an answer outright (the transcript rubric: a blocked episode is an outcome of
        # its own, neither judged nor floored); stored unjudgeable with its reason.
        unjudged = getattr(rubric, "unjudged", None)
        why = unjudged(response) if unjudged is not None else None
        if why:
            return _row(base, "unjudgeable", Verdict("unjudgeable", reason=why))
        answer = rubric.answer(response, prediction)
        if not answer:
            return _row(base, "empty", rubric.floor(item))
        out = p.judge.max_tokens or rubric.max_tokens
        prompt = rubric.prompt(item, answer, prompt_budget(p.judge.context_tokens, out))
        if prompt is None:
            return _row(base, "unjudgeable", Verdict("unjudgeable", reason=(
                f"the judge prompt does not fit the judge's context_tokens ({p.judge.context_tokens})")))
        return Question(job, base, prompt.messages, self._providers[out], (rubric, item, prompt.truncated),
                        max_output=out)

    async def finish(self, q: Question, outcome: ChatResult | ProviderError) -> store.JudgementRow:
        rubric, item, truncated = q.context
        if isinstance(outcome, ProviderError):
            return _row(q.base, "error", Verdict("error", reason=str(outcome)[:1000]), error_class=outcome.klass.value,
                        attempts=outcome.attempts)
        res = outcome
        call: dict[str, Any] = dict(raw=res.text, attempts=res.attempts, latency_ms=res.latency_ms,
                                    input_tokens=res.input_tokens, output_tokens=res.output_tokens,
                                    judge_version=res.model_version, prompt_truncated=truncated)
        if res.blocked:
            return _row(q.base, "refused", Verdict("refused", reason=f"the judge declined ({res.blocked})"), **call)
        verdict = rubric.parse(item, res.text)
        return _row(q.base, verdict.status, verdict, **call)

    def broken(self, base: dict, detail: str) -> store.JudgementRow:
        return _row(base, "error", Verdict("error", reason=f"judging failed: {detail}"[:1000]), error_class="judge")

    def summary(self) -> str:
        s = self.statuses
        return (f"{self.plan.label}: {sum(s.values())} judged this run ({s['ok']} verdicts, {s['empty']} empty "
                f"answers, {s['unparsed']} unparsed, {s['refused']} refused, {s['unjudgeable']} unjudgeable, "
                f"{s['error']} errors)")


def _row(base: dict, status: str, v: Verdict, *, error_class: str | None = None, attempts: int = 0,
         raw: str | None = None, latency_ms: float | None = None, input_tokens: int | None = None,
         output_tokens: int | None = None, judge_version: str | None = None,
         prompt_truncated: bool | None = None) -> store.JudgementRow:
    return store.JudgementRow(
        **base, status=status, reason=v.reason, error_class=error_class, verdict=v.fields, score=v.score,
        raw=raw, prompt_truncated=prompt_truncated, attempts=attempts, latency_ms=latency_ms,
        input_tokens=input_tokens, output_tokens=output_tokens, judge_version=judge_version,
        finished_at=datetime.now(timezone.utc))

"""The extractor lane: a side lane (engine/lanes/side_lane.py) asking the [extractor] model about unread answers.

Asked only about choice answers the rules left unread: status ok, prediction
NULL, with text, not blocked, not cut off (finish reason `length`: the rules
read those as unanswered on purpose). Its backlog: such answers stored by
earlier runs without a settled reading by this extractor and prompt version
of that very answer. A reading the dataset's scorer accepts replaces the
row's prediction, score and measures (extracted_by 'model'); the reading
itself, with the extractor's raw reply, stays in `extractions`.
"""

from __future__ import annotations

from datetime import datetime, timezone
from itertools import islice

import duckdb
import msgspec

from benchmark.extract import prompt as extract_prompt
from benchmark.context import prompt_budget
from benchmark.dataset import Scored
from engine.lanes.batch.side_lane import SideBatch
from engine.config.models import ModelConfig, ModelsFile, Price, base_url
from engine.lanes.extract_model import (
    CUT_OFF,
    Extractor,
    Reading,
    read_and_score,
    reading,
    wants_model,
)
from engine.lanes.work import PlannedDataset, render
from engine.run.context import RunContext
from engine.run.scoring import score_bounded
from engine.run.progress import log
from engine.lanes.side_lane import Question, SideLane
from providers.base import ChatResult
from providers.errors import ProviderError
from providers.limits import Limits
from store.side import extractions as store
from store.side.batches import EXTRACTOR
from store.side.judgements import answer_md5
from store.results.writer import ResultRow

PROBE = 50  # records looked at to tell a choice dataset (its items have an answer space)


class ExtractorPlan(msgspec.Struct, kw_only=True):
    extractor: ModelConfig
    planned: dict[str, PlannedDataset]  # the choice datasets
    budgets: dict[str, int | None]  # model -> its prompt budget (to re-render the item it saw)
    run_id: str
    backlog: int


def is_choice(p: PlannedDataset) -> bool:
    return any(p.dataset.render(i, raw).answer is not None for i, raw in islice(p.records, PROBE))


def plan_extraction(cfg: ModelsFile, planned: list[PlannedDataset], con: duckdb.DuckDBPyConnection, *,
                    run_id: str, fresh: bool, quiet: bool = False) -> ExtractorPlan | None:
    ex = cfg.extractor
    if ex is None:
        return None
    why = ex.missing_key()
    if why:
        log(f"note: the extractor's {why}: unread choice answers stay unread")
        return None
    choice = {p.id: p for p in planned if is_choice(p)}
    if not choice:
        return None
    store.record_extractor(con, ex.name, ex.provider, base_url(ex), ex.model, ex.generation(),
                           extract_prompt.VERSION)
    names = [m.name for m in cfg.models]
    if fresh:
        n = store.delete_extractions(con, names, list(choice))
        log(f"--fresh: deleted {n} stored extractions of these models and datasets", quiet=quiet)
    backlog = store.pending_count(con, ex.name, extract_prompt.VERSION, run_id, names,
                                  {d: p.ids for d, p in choice.items()}, sorted(CUT_OFF))
    if backlog:
        log(f"extractor {ex.name}: {backlog} stored unread answer(s) to read", quiet=quiet)
    return ExtractorPlan(extractor=ex, planned=choice, run_id=run_id, backlog=backlog,
                         budgets={m.name: prompt_budget(m.context_tokens, m.max_tokens) for m in cfg.models})


class ExtractorLane(SideLane):
    def __init__(self, plan: ExtractorPlan, ctx: RunContext):
        self.plan = plan
        ex = plan.extractor
        self.label = "extractor" if ex.name == "extractor" else f"extractor {ex.name}"
        # The total grows as model lanes hand over unread answers (not known in advance).
        super().__init__(ctx, concurrency=ex.concurrency, total=plan.backlog, insert=store.insert_extractions,
                         table="extractions", key=store.KEY, price=ex.price)
        # The endpoint's breaker (engine/run/endpoints.py): a dead extractor is given up, its questions left for
        # the next run, instead of each costing its retries.
        self.extractor = Extractor(ex, ctx.limits.get(ex.name) or Limits(), ctx.breakers.get(ex.name))
        self._raws = {d: dict(p.records) for d, p in plan.planned.items()}
        self._plan_ids = {d: p.ids for d, p in plan.planned.items()}
        if ex.batch:  # through its provider's batch API (engine/lanes/batch/side_lane.py)
            self.batch = SideBatch(self, ex, ctx.con, ctx.progress, lane=EXTRACTOR, adapter=self.extractor.provider,
                                   run_id=plan.run_id, plans=lambda k: k.model in plan.budgets
                                   and k.item_id in self._raws.get(k.dataset, {}))

    def job(self, row: ResultRow) -> tuple | None:
        if (row.status == "ok" and row.prediction is None and row.dataset in self.plan.planned
                and wants_model(row.response, row.finish_reason, row.blocked)):
            self._progress.counters[self.label].total += 1
            return (row.model, row.dataset, row.item_id, row.sample, row.response, row.finish_reason)
        return None

    def backlog_page(self, cur: duckdb.DuckDBPyConnection, after: tuple, page: int) -> list[tuple]:
        p = self.plan
        return store.pending_page(cur, p.extractor.name, extract_prompt.VERSION, p.run_id, list(p.budgets),
                                  self._plan_ids, sorted(CUT_OFF), after, page)

    def base(self, job: tuple) -> dict:
        model, dataset, item_id, sample, response, _ = job
        p = self.plan
        return dict(model=model, dataset=dataset, item_id=item_id, sample=sample, extractor=p.extractor.name,
                    prompt_version=extract_prompt.VERSION, answer_md5=answer_md5(response), run_id=p.run_id,
                    started_at=datetime.now(timezone.utc))

    def prepare(self, job: tuple, base: dict) -> Question | store.ExtractionRow:
        model, dataset, item_id, sample, response, _ = job
        p = self.plan
        item = render(p.planned[dataset].dataset, item_id, self._raws[dataset][item_id], sample, p.budgets.get(model))
        options = extract_prompt.options_of(item)
        if options is None or item.answer is None:
            return _row(base, Reading(status="not_choice"), None)
        return Question(job, base, extract_prompt.prompt(options, response, item.answer.multi),
                        self.extractor.provider, (item, options), max_output=self.extractor.max_output)

    async def finish(self, q: Question, outcome: ChatResult | ProviderError) -> store.ExtractionRow:
        item, options = q.context
        _, dataset, _, _, response, finish = q.job
        ds = self.plan.planned[dataset].dataset
        read = reading(options, item.answer.multi, outcome)
        price = self.plan.extractor.price
        if price is not None and q.batched:  # a batch's reading costs the batch price
            price = price.batch()
        if read.status != "ok":
            return _row(q.base, read, price)
        # The answer is scored again (a long one off the event loop, capped: engine/run/scoring.py).
        scored, by = await score_bounded(lambda: read_and_score(ds, item, response, finish, read.codes),
                                         len(response or ""))
        if by != "model":  # the scorer does not take the codes as an answer
            return _row(q.base, msgspec.structs.replace(read, status="unparsed"), price)
        return _row(q.base, read, price, scored, ds.scorer_version)

    def broken(self, base: dict, detail: str) -> store.ExtractionRow:
        return _row(base, Reading(status="error", error_class="extractor", error=f"extraction failed: {detail}"[:1000]),
                    None)

    async def close_providers(self) -> None:
        await self.extractor.aclose()

    def summary(self) -> str:
        s = self.statuses
        return (f"{self.label}: {sum(s.values())} unread answers asked this run ({s['ok']} read, {s['none']} NONE, "
                f"{s['unparsed']} replies not a bare code, {s['refused']} refused, {s['error']} errors)")


def _row(base: dict, r: Reading, price: Price | None, scored: Scored | None = None,
         scorer_version: str | None = None) -> store.ExtractionRow:
    cost = price.cost(r.input_tokens, r.output_tokens) if price is not None else None
    return store.ExtractionRow(
        **base, status=r.status, codes=list(r.codes) if r.codes else None,
        prediction=scored.prediction if scored else None, score=scored.score if scored else None,
        measures=scored.measures if scored else None, scorer_version=scorer_version, raw=r.raw,
        error_class=r.error_class, error=r.error, attempts=r.attempts, latency_ms=r.latency_ms,
        input_tokens=r.input_tokens, output_tokens=r.output_tokens, cost_usd=cost,
        extractor_version=r.model_version, finished_at=datetime.now(timezone.utc))

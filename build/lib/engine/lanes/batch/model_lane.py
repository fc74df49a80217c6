"""A batched model's lane: its pending items through the provider's batch API, resumable across crashes.

The items are those the synchronous lane would ask (engine.lanes.work.lane), with the
same bodies (the dataset's adapter in the model's ProviderSet), less the items
carried by the model's batches still open in the store. Answers become rows
through the same code as synchronous answers (engine.lanes.model_lane.answer_row) and go
to the same writer (and its side lanes). Recording, submitting, re-attaching,
collecting and the retry rounds are engine/lanes/batch/core.py's, shared with the
batched judge and extractor (engine/lanes/batch/side_lane.py).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from datetime import datetime
from typing import Any, Protocol

import anyio
import duckdb

from benchmark.dataset import stable_hash
from engine.lanes.batch import core as batch_core
from engine.lanes.batch.core import BatchCore, Key, Open, Reopened
from engine.lanes.batch.requests import custom_id, item_key
from engine.config.models import ModelConfig
from engine.run.generation import ProviderSet
from engine.lanes.work import PlannedDataset, Work
from engine.run.progress import Progress
from engine.run.context import RunContext
from engine.lanes.model_lane import ModelLane, Stamps, answer_row, estimate_cost
from engine.run.context import Budget
from providers.base import ChatResult
from providers.batch.core import BatchAPI, BatchRequest
from providers.errors import ProviderError
from store.side import batches as store
from store.side.batches import ItemKey
from store.results.writer import ResultRow


class Answers(Protocol):
    """The results writer (store.results.writer.Writer, or engine.lanes.side_lane.Tee in front of it)."""

    async def put(self, row: ResultRow) -> None: ...

    async def synced(self) -> None: ...


class BatchLane:
    """One batched model for one run (a BatchClient of engine/lanes/batch/core.py). Its inputs are explicit, so
    any run context can build it."""

    def __init__(self, model: ModelConfig, api: BatchAPI, providers: ProviderSet, work: Iterable[Work],
                 answers: Answers, stamps: Stamps, progress: Progress, con: duckdb.DuckDBPyConnection, *,
                 budget: Budget | None = None, sleep: Callable[[float], Any] = anyio.sleep):
        self.model, self.api, self.providers, self.answers = model, api, providers, answers
        self.sync_stamps = stamps
        # Answers cost the batch price; the stamps are otherwise the same (identity, prompt hash).
        self.stamps = Stamps(stamps.suite_version, stamps.prompt_hash, run_id=stamps.run_id,
                             price=stamps.price.batch() if stamps.price is not None else None,
                             max_output=stamps.max_output, identity=stamps.identity, versions=stamps.versions)
        self.progress, self.con, self.budget = progress, con, budget
        self._work = work
        self.works: dict[ItemKey, Work] = {}
        self.sync_asked = 0
        self.core: BatchCore[Work] = BatchCore(self, api, con, progress, model, lane=store.MODEL, shown=model.name,
                                               run_id=stamps.run_id, budget=budget, sleep=sleep)

    @property
    def submitted(self) -> int:
        return self.core.submitted

    @property
    def reattached(self) -> int:
        return self.core.reattached

    async def run(self) -> None:
        self.works = {item_key(w): w for w in self._work}
        await self.core.run(self._plan)

    async def _plan(self, reopened: list[Reopened], carried: set[Hashable]) -> tuple[list[Work], list[Open[Work]]]:
        """Re-attach the open batches whose unanswered items this run plans; submit the rest of the plan."""
        attach, left = [], 0
        for b in reopened:
            answered = store.answered(self.con, self.model.name, b.label)  # by a collection a crash cut short
            todo = {c: k for c, k in b.items.items() if c not in answered}
            if any(k not in self.works for k in todo.values()):
                left += 1  # it carries items this run does not plan (another --datasets / --limit)
                continue
            attach.append(Open(b.label, b.batch_id, {c: self.works[k] for c, k in todo.items()}))  # type: ignore[index]
        self.core.attached(attach, left)
        return [w for k, w in self.works.items() if k not in carried], attach

    # ---------------------------------------------------------------- the BatchClient

    def key(self, job: Work) -> ItemKey:
        return item_key(job)

    def request(self, job: Work) -> BatchRequest:
        """The body exactly what a synchronous call of the same dataset would send."""
        body = self.providers.for_dataset(job.planned.id).request_body(job.item.messages, job.item.answer)  # type: ignore[attr-defined]
        return BatchRequest(custom_id(item_key(job)), body)

    def estimate(self, job: Work) -> float:
        return estimate_cost(job, self.stamps)

    async def store(self, job: Work, outcome: ChatResult | ProviderError, started: datetime) -> float:
        row = await answer_row(self.model.name, job, self.stamps, started, outcome)
        if not self.stamps.admits(row):
            return row.cost_usd or 0.0  # another model version: paid, not stored, asked again by a later run
        await self.answers.put(row)
        self.progress.advance(self.model.name, ok=row.status == "ok")
        return row.cost_usd or 0.0

    def stamp(self, keys: Iterable[Key]) -> str | None:
        """What the answers of a batch over these items are stored under: prompt stamps and identities
        (None when the batch carries a dataset this run does not plan: it cannot tell)."""
        datasets = {k.dataset for k in keys}
        if not datasets <= set(self.stamps.prompt_hash):
            return None
        return stable_hash(sorted((d, self.stamps.prompt_hash[d], self.stamps.identity.get(d) or "")
                                  for d in datasets), length=16)

    async def synced(self) -> None:
        await self.answers.synced()

    async def ask_sync(self, jobs: list[Work]) -> None:
        """batch_retry = "sync": the requests batches did not answer, asked by ordinary calls (full price)."""
        self.sync_asked += len(jobs)
        await ModelLane(self.model.name, provider=self.providers, work=iter(jobs), concurrency=self.model.concurrency,
                        stamps=self.sync_stamps).drive(self.answers, self.progress, self.budget)


def batch_lane_for(m: ModelConfig, providers: ProviderSet, planned: list[PlannedDataset], work: Iterable[Work],
                   answers: Answers, stamps: Stamps, progress: Progress, con: duckdb.DuckDBPyConnection,
                   budget: Budget | None) -> BatchLane:
    """The lane of a batched model in a sweep; its API wraps the adapter of the model's first dataset
    (each request carries its own dataset's body, so one API serves all of them)."""
    api = batch_core.make_api(m.provider, providers.for_dataset(planned[0].id))
    # Its own cursor: the results writer uses `con` from its thread meanwhile.
    return BatchLane(m, api, providers, work, answers, stamps, progress, con.cursor(), budget=budget)


class SweepBatchLane:
    """A batched model's lane in a sweep: the Lane protocol (engine/run/context.py) around BatchLane."""

    def __init__(self, m: ModelConfig, *, providers: ProviderSet, planned: list[PlannedDataset],
                 work: Iterable[Work], stamps: Stamps):
        self.m, self.providers, self.planned, self.work, self.stamps = m, providers, planned, work, stamps

    async def run(self, ctx: RunContext) -> None:
        await batch_lane_for(self.m, self.providers, self.planned, self.work, ctx.answers, self.stamps,  # type: ignore[arg-type]
                             ctx.progress, ctx.con, ctx.budget).run()
        self.stamps.report_stop(ctx)

"""A batched judge or extractor: a side lane's questions through its helper's provider batch API.

The side lane (engine/lanes/side_lane.py) still says what to ask about each answer
(`prepare`: the same prompt through the same adapter) and reads each reply into
the same row (`finish`); only the asking differs. Its jobs (the answers this
run produces, and the backlog of stored ones) are gathered into batches of
`batch_max_requests` (or the API's limits), the last one going out when the
model lanes are done; so a sweep normally makes one judge batch per split.

Submission, recording before the wait, re-attachment and the retry rounds are
engine/lanes/batch/core.py's, as for a batched model. A request's custom_id hashes the
answer's key with the very body asked, so a rerun re-attaches a question only
while its answer, rubric and settings are unchanged: a re-attached batch gives
the rows of the answers still waiting for one (none twice), and an answer whose
question changed is asked again in a new batch.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterable, AsyncIterator, Callable, Hashable, Iterable
from datetime import datetime
from typing import Any

import duckdb

from benchmark.dataset import stable_hash
from engine.lanes.batch import core as batch_core
from engine.lanes.batch.core import BatchCore, Key, Open, Reopened
from engine.lanes.batch.requests import question_id
from engine.config.models import ModelConfig, base_url, public_url
from engine.run.progress import Progress
from engine.lanes.side_lane import Question, SideLane
from engine.run.workers import run_workers
from providers.base import ChatResult
from providers.batch.core import BatchRequest
from providers.errors import ProviderError
from store.side.batches import AnswerKey


class SideBatch:
    """The BatchClient (engine/lanes/batch/core.py) of a side lane whose helper says ``batch = true``.

    ``lane``: 'judge' or 'extractor' (store/side/batches.py); ``adapter``: one of the helper's synchronous
    adapters (each request carries its own body, so one batch API serves all of them); ``plans``: whether
    this run plans an answer (an open batch carrying others is left for a run that does)."""

    def __init__(self, side: SideLane, helper: ModelConfig, con: duckdb.DuckDBPyConnection, progress: Progress, *,
                 lane: str, adapter: Any, run_id: str, plans: Callable[[AnswerKey], bool]):
        self.side, self.helper, self.plans = side, helper, plans
        # Its own cursor: the writers use the connection from their threads meanwhile.
        self.core: BatchCore[Question] = BatchCore(
            self, batch_core.make_api(helper.provider, adapter), con.cursor(), progress, helper, lane=lane,
            shown=side.label, run_id=run_id, budget=side.budget)
        # A batch made by another endpoint, model or generation settings is never collected (cancelled).
        self._stamp = stable_hash(helper.provider, public_url(base_url(helper)), helper.model,
                                  sorted(helper.generation().items()))

    async def run(self, jobs: AsyncIterable[tuple]) -> None:
        await self.core.run(functools.partial(self._plan, jobs))

    async def _plan(self, jobs: AsyncIterable[tuple], reopened: list[Reopened], carried: set[Hashable]
                    ) -> tuple[AsyncIterator[Question], list[Open[Question]]]:
        attach: list[Open[Question]] = []
        index: dict[str, Open[Question]] = {}  # custom_id -> the re-attached batch carrying that request
        waiting = set(carried)  # keys in batches of unknown fate (or left): they wait for the next run
        left = 0
        for b in reopened:
            if not all(isinstance(k, AnswerKey) and self.plans(k) for k in b.items.values()):
                left += 1
                continue
            attach.append(Open(b.label, b.batch_id, {}))
            index.update(dict.fromkeys(b.items, attach[-1]))
            waiting -= set(b.items.values())  # asked again if its question changed (another custom_id)
        self.core.attached(attach, left)
        return self._questions(jobs, index, waiting), attach

    async def _questions(self, jobs: AsyncIterable[tuple], index: dict[str, Open[Question]],
                         waiting: set[Hashable]) -> AsyncIterator[Question]:
        """The questions to submit; rows that need no question are stored, re-attached questions registered."""
        asked: set[str] = set()  # a question twice in a run (the same answer handed over twice) is asked once
        async for job in jobs:
            q = self.side.question(job)
            if not isinstance(q, Question):
                await self.side.store(q)
                continue
            req = self.request(q)
            if req.custom_id in asked:
                continue
            asked.add(req.custom_id)
            if req.custom_id in index:  # asked in an earlier run's batch: its reply is collected from there
                index[req.custom_id].jobs[req.custom_id] = q
            elif self.key(q) not in waiting:
                yield q

    # ---------------------------------------------------------------- the BatchClient

    def key(self, job: Question) -> AnswerKey:
        return AnswerKey(*job.job[:4])

    def request(self, job: Question) -> BatchRequest:
        if job.body is None:
            job.body = job.provider.request_body(job.messages)  # type: ignore[attr-defined]
        return BatchRequest(question_id(self.key(job), job.body), job.body)

    def estimate(self, job: Question) -> float:
        return self.side.cost_bound(job, batched=True)

    async def store(self, job: Question, outcome: ChatResult | ProviderError, started: datetime) -> float:
        job.batched = isinstance(outcome, ChatResult)
        await self.side.store(await self.side.answer(job, outcome))
        return self.side.cost(outcome, batched=True) or 0.0

    def stamp(self, keys: Iterable[Key]) -> str | None:
        return self._stamp

    async def synced(self) -> None:
        await self.side.writer.synced()

    async def ask_sync(self, jobs: list[Question]) -> None:
        """batch_retry = "sync": the questions batches did not answer, asked by ordinary calls (full price)."""

        async def one(q: Question) -> None:
            await self.side.store(await self.side.ask(q))

        await run_workers(jobs, width=self.helper.concurrency, handle=one)

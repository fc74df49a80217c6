"""A side lane: a bounded pool of workers (engine/run/workers.py) asking a helper model (the judge, the extractor) about answers.

Fed lazily from two places: the answers model lanes produce in this run (a
bounded channel: a lane waits when the helper is behind) and, from the start,
the answers stored by earlier runs that the helper has not settled (an
anti-join, read a page at a time). An answer is done when both it and the
helper's row are stored, so a resume asks neither again. Helper calls go
through the same provider adapters, rate limits, retries and adaptive
concurrency as model calls; their rows go through a Writer of their own.

A subclass says which answers it wants (`job`), reads its backlog
(`backlog_page`), what it asks about one job (`prepare`: a `Question`, or the
row itself when nothing need be asked) and how the reply becomes the row
(`finish`). A question is asked by a call, or, with `batch = true` on the
helper, carried by one of its provider batches (engine/lanes/batch/side_lane.py): the same
prompt, the same parsing, the same row.
"""

from __future__ import annotations

import traceback
from collections import Counter
from collections.abc import AsyncIterable, Callable, Sequence
from typing import Any, Protocol

import anyio
import duckdb

from engine.config.models import Price
from engine.run.context import RunContext, cost_bound
from engine.run.workers import STOP, run_workers
from providers.base import DEFAULT_MAX_OUTPUT, ChatResult, Provider
from providers.errors import ProviderError, Unreachable
from store.results.writer import ResultRow, Writer

CHANNEL = 1000  # answers waiting for the helper before model lanes wait too
PAGE = 256  # backlog rows read at a time


class Question:
    """What a side lane asks its helper about one job: the messages, the adapter that sends them, and what
    `finish` needs to read the reply (``context``) into the row (whose fixed fields are ``base``);
    ``max_output``: the reply's token cap, for the budget."""

    __slots__ = ("base", "batched", "body", "context", "job", "max_output", "messages", "provider")

    def __init__(self, job: tuple, base: dict, messages: Sequence[Any], provider: Provider, context: Any = None, *,
                 max_output: int = DEFAULT_MAX_OUTPUT):
        self.job, self.base, self.messages, self.provider, self.context = job, base, messages, provider, context
        self.max_output = max_output
        self.body: bytes | None = None  # the request body, once a batch needs it
        self.batched = False  # answered by a batch (at the batch price), not by a call


class OverBudget(Exception):
    """The run's --budget is spent: the side lane stops asking (what it holds waits for the next run)."""


class Batched(Protocol):
    """A side lane's helper asked through its provider's batch API (engine/lanes/batch/side_lane.py:SideBatch)."""

    async def run(self, jobs: AsyncIterable[tuple]) -> None: ...


class SideLane:
    label = "helper"
    batch: Batched | None = None  # set by a subclass whose helper says batch = true

    def __init__(self, ctx: RunContext, *, concurrency: int, total: int,
                 insert: Callable[[duckdb.DuckDBPyConnection, list[Any]], None], table: str, key: tuple[str, ...],
                 price: Price | None = None):
        con, progress = ctx.con, ctx.progress
        # The helper's calls count against --budget like the models' (at its price; unpriced: not counted).
        self.price, self.budget = price, ctx.budget
        # Own connections: the results writer uses `con` from its thread meanwhile.
        self.writer = Writer(con.cursor(), insert=insert, table=table, key=key)
        self._read = con.cursor()
        self.live, self._jobs = anyio.create_memory_object_stream[tuple](CHANNEL)
        # The backlog's own sender, made now: the jobs end when both it and `live` are closed.
        self._backlog = self.live.clone()
        self._concurrency = concurrency
        self._progress = progress
        self.statuses: Counter[str] = Counter()
        self.unreachable = False  # the helper's endpoint was given up: answers pass, asked on the next run
        progress.add(self.label, total, 0)
        ctx.add_side(self)  # its writer, its close, and the run's answers offered to it

    # -------------------------------------------------------------- what a subclass says

    def job(self, row: ResultRow) -> tuple | None:
        """The job for an answer stored in this run, or None when the helper does not want it."""
        raise NotImplementedError

    def backlog_page(self, cur: duckdb.DuckDBPyConnection, after: tuple, page: int) -> list[tuple]:
        """Stored answers to handle after key ``after`` (the first 4 fields of a job), in key order."""
        raise NotImplementedError

    def base(self, job: tuple) -> dict:
        """The fixed fields of the job's row (key, helper, versions, answer hash, run, start)."""
        raise NotImplementedError

    def prepare(self, job: tuple, base: dict) -> Question | Any:
        """What to ask about the job, or its row when nothing need be asked."""
        raise NotImplementedError

    async def finish(self, q: Question, outcome: ChatResult | ProviderError) -> Any:
        """The row of a question's reply (or of the error that stood for it)."""
        raise NotImplementedError

    def broken(self, base: dict, detail: str) -> Any:
        """The error row of a job the lane's own code failed on (retried on the next run)."""
        raise NotImplementedError

    async def close_providers(self) -> None:
        raise NotImplementedError

    def summary(self) -> str:
        """One line on what the lane did this run."""
        raise NotImplementedError

    # -------------------------------------------------------------- the machinery

    async def offer(self, row: ResultRow) -> None:
        job = self.job(row)
        if job is not None:
            await self.live.send(job)

    async def answers_done(self) -> None:
        """Model lanes are finished: the lane ends once the backlog and the channel are empty."""
        await self.live.aclose()

    async def run(self, ctx: RunContext) -> None:
        if self.batch is None:
            await run_workers(self._jobs, width=self._concurrency, handle=self._one, on_stop="drain",
                              feeders=[lambda: self._feed_backlog(self._backlog)])
            return
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._feed_backlog, self._backlog)
            await self.batch.run(self._jobs)
            async for _ in self._jobs:  # ended early (endpoint given up): model lanes never wait on it
                pass

    # -------------------------------------------------------------- one job

    def question(self, job: tuple) -> Question | Any:
        base = self.base(job)
        try:
            return self.prepare(job, base)
        except Exception as e:  # noqa: BLE001 - a bug costs one row (retried), not the sweep
            return self.broken(base, _detail(e))

    async def answer(self, q: Question, outcome: ChatResult | ProviderError) -> Any:
        try:
            return await self.finish(q, outcome)
        except Exception as e:  # noqa: BLE001 - a bug costs one row (retried), not the sweep
            return self.broken(q.base, _detail(e))

    async def ask(self, q: Question) -> Any:
        """A question by an ordinary call (Unreachable and OverBudget go on: not this job's outcome)."""
        budget, est = self.budget, self.cost_bound(q)
        if budget is not None and not budget.reserve(est):
            raise OverBudget
        try:
            res: ChatResult | ProviderError = await q.provider.chat(q.messages)
        except ProviderError as e:
            res = e
        except BaseException:
            if budget is not None:
                budget.settle(est, None)
            raise
        if budget is not None:
            budget.settle(est, self.cost(res, batched=False))
        return await self.answer(q, res)

    def cost_bound(self, q: Question, *, batched: bool = False) -> float:
        """What asking `q` may cost at most (the batch price when a batch carries it)."""
        price = self.price.batch() if batched and self.price is not None else self.price
        return cost_bound(price, q.messages, q.max_output)

    def cost(self, outcome: ChatResult | ProviderError, *, batched: bool) -> float | None:
        """What a reply cost, by the usage it reports (None: unpriced, or no reply)."""
        price = self.price.batch() if batched and self.price is not None else self.price
        if price is None or not isinstance(outcome, ChatResult):
            return None
        return price.cost(outcome.input_tokens, outcome.output_tokens)

    async def handle(self, job: tuple) -> Any:
        """The row to store for one job (its ``status`` counts; 'error' shows as an error)."""
        q = self.question(job)
        return await self.ask(q) if isinstance(q, Question) else q

    async def _feed_backlog(self, send: Any) -> None:
        after: tuple = ("", "", "", -1)
        async with send:
            while True:
                # In a thread: a page query must not stall the lanes' event loop.
                rows = await anyio.to_thread.run_sync(self._page, after)
                for job in rows:
                    await send.send(job)
                if len(rows) < PAGE:
                    return
                after = tuple(rows[-1][:4])

    def _page(self, after: tuple) -> list[tuple]:
        return self.backlog_page(self._read, after, PAGE)

    async def _one(self, job: tuple) -> object:
        try:
            row = await self.handle(job)
        except Unreachable:
            # The helper's endpoint was given up: the lane keeps draining (STOP, on_stop="drain"),
            # so model lanes never wait on a dead helper; the answers are asked on the next run.
            self.unreachable = True
            return STOP
        except OverBudget:
            return STOP  # the same drain: the answers are stored, asked about by a run with budget left
        await self.store(row)
        return None

    async def store(self, row: Any) -> None:
        self.statuses[row.status] += 1
        await self.writer.put(row)
        self._progress.advance(self.label, ok=row.status != "error")

    async def aclose(self) -> None:
        """Flush the rows (called shielded, after an interrupt too) and close connections."""
        await self.close_providers()
        await self.writer.close()
        await self.writer.finished.wait()


def _detail(e: Exception) -> str:
    return "".join(traceback.format_exception_only(type(e), e)).strip()

"""What every batched lane shares: its provider batches recorded, submitted, watched and collected, crash-safe.

A lane (a batched model, engine/lanes/batch/model_lane.py; a batched judge or extractor,
engine/lanes/batch/side_lane.py) is a ``BatchClient``: it says what one job's request is
and stores a job's outcome as the row a synchronous call would have made. The
core owns what makes a batch safe to pay for: every batch is recorded (store/
batches.py, with its lane) before it is submitted and its provider id stored as
soon as the provider gives it, so a rerun re-attaches to it (or finds it by
label) instead of paying twice. A batch is marked collected only once its rows
are in the database; collecting again after a crash in between skips the jobs
whose rows are stored (the lane leaves them out of what it attaches).

Requests a batch did not answer (failed, expired, cancelled, retryable errors)
are asked again in a new batch, up to MAX_ROUNDS batches per job and run, or by
synchronous calls when the lane's config says ``batch_retry = "sync"``;
permanent errors are stored as error rows (a later run retries them).
"""

from __future__ import annotations

import contextlib
import uuid
from collections import Counter
from collections.abc import AsyncIterable, Awaitable, Callable, Hashable, Iterable
from datetime import UTC, datetime
from typing import Any, Generic, Protocol, TypeVar

import anyio
import duckdb

from engine.lanes.batch.requests import Chunker, too_large
from engine.config.models import ModelConfig
from engine.run.progress import Progress, log
from engine.run.context import Budget
from providers.base import ChatResult
from providers.batch.core import FAILED, TERMINAL, BatchAPI, BatchRequest, BatchStatus, LostCreate
from providers.errors import ErrorClass, ProviderError, Unreachable
from store.side import batches as store
from store.side.batches import AnswerKey, ItemKey

MAX_ROUNDS = 3  # batches a job may go through in one run before its failure is stored
SUBMIT_TRIES = 3  # create attempts per batch (each preceded by a look-up of its label)

J = TypeVar("J")
Key = ItemKey | AnswerKey


def make_api(provider: str, adapter: Any) -> BatchAPI:
    """The provider's batch API around one of the lane's synchronous adapters (providers/batch_*.py)."""
    from providers.registry import make_batch_api

    return make_batch_api(provider, adapter)


def ambiguous(e: ProviderError) -> bool:
    """A create that failed without an HTTP status (timeout, dropped connection): it may have reached the server."""
    return e.klass is ErrorClass.TRANSIENT and e.status is None


class BatchClient(Protocol[J]):
    """A batched lane, as the core sees it."""

    def key(self, job: J) -> Key: ...

    def request(self, job: J) -> BatchRequest:
        """The job's request: the body a synchronous call would send."""

    def estimate(self, job: J) -> float:
        """Its cost at most, for the budget (0 where the lane is not budgeted)."""

    async def store(self, job: J, outcome: ChatResult | ProviderError, started: datetime) -> float:
        """Store the job's row (an answer, or a final error); its cost."""

    def stamp(self, keys: Iterable[Key]) -> str | None:
        """What a batch of these keys is stored under; None: this run cannot tell (it is not checked)."""

    async def synced(self) -> None:
        """Every row stored so far is in the database."""

    async def ask_sync(self, jobs: list[J]) -> None:
        """batch_retry = "sync": these jobs by ordinary calls."""


class Open(Generic[J]):
    """A batch to watch and collect: its provider id, and the jobs whose rows it is to give."""

    def __init__(self, label: str, batch_id: str, jobs: dict[str, J]):
        self.label, self.batch_id, self.jobs = label, batch_id, jobs


class Reopened:
    """An earlier run's batch still open: its label, provider id and every key it carries."""

    def __init__(self, label: str, batch_id: str, items: dict[str, Key]):
        self.label, self.batch_id, self.items = label, batch_id, items


Planner = Callable[[list[Reopened], set[Hashable]], Awaitable[tuple[Iterable[J] | AsyncIterable[J], list[Open[J]]]]]


class BatchCore(Generic[J]):
    """One lane's batches in one run. ``owner`` is the model's (judge's, extractor's) name; ``shown`` its
    progress row."""

    def __init__(self, client: BatchClient[J], api: BatchAPI, con: duckdb.DuckDBPyConnection, progress: Progress,
                 cfg: ModelConfig, *, lane: str, shown: str, run_id: str | None, budget: Budget | None = None,
                 sleep: Callable[[float], Any] = anyio.sleep):
        self.client, self.api, self.con, self.progress, self.cfg = client, api, con, progress, cfg
        self.lane, self.owner, self.shown, self.run_id = lane, cfg.name, shown, run_id
        self.budget, self._sleep = budget, sleep
        self.reserved: dict[str, float] = {}  # label -> budget reserved at submission
        self.states: dict[str, BatchStatus | None] = {}  # label -> last status seen (None: not polled yet)
        self.submitted = 0  # batches created in this run
        self.reattached = 0  # batches of earlier runs watched in this one

    # ---------------------------------------------------------------- the run

    async def run(self, plan: Planner[J]) -> None:
        """Reopen the lane's batches, let ``plan`` say which to attach and what to submit, then the rounds."""
        try:
            reopened, carried = await self._reopen()
            jobs, attach = await plan(reopened, carried)
            retry = await self._round(jobs, attach)
            rounds = 1
            while retry:
                if self.cfg.batch_retry == "sync":
                    await self.client.ask_sync([j for j, _ in retry])
                    break
                if rounds >= MAX_ROUNDS:
                    for j, err in retry:
                        await self.client.store(j, err, datetime.now(UTC))
                    break
                retry = await self._round([j for j, _ in retry], [])
                rounds += 1
        except* Unreachable as group:
            # Its endpoint was given up (raised inside a task group, so it comes grouped): what is in flight
            # stays so, what is pending stays unasked, and the sweep's breaker makes the exit 3.
            log(f"warning: {self.shown}: {group.exceptions[0]}; its batches are collected by the next run")
        finally:
            with anyio.CancelScope(shield=True):
                await self.api.aclose()

    def attached(self, attach: list[Open[J]], left: int) -> None:
        """Say what the plan re-attached, and what it left for a run that plans those items."""
        self.reattached = len(attach)
        for b in attach:
            self.states[b.label] = None
        if attach:
            log(f"{self.shown}: re-attached to {len(attach)} batch(es) submitted earlier", quiet=self.progress.quiet)
        if left:
            log(f"{self.shown}: {left} open batch(es) carry items outside this run's plan: left for a run "
                "that plans them", quiet=self.progress.quiet)

    async def _reopen(self) -> tuple[list[Reopened], set[Hashable]]:
        """The lane's open batches from earlier runs, with their provider ids, and every key they carry."""
        out: list[Reopened] = []
        carried: set[Hashable] = set()
        for rec in store.open_batches(self.con, self.owner, self.lane):
            items: dict[str, Key] = dict(store.batch_items(self.con, rec.label) if self.lane == store.MODEL
                                         else store.batch_answers(self.con, rec.label))
            batch_id = rec.batch_id
            now = self.client.stamp(items.values())
            if now is not None and rec.stamp is not None and rec.stamp != now:
                # Its answers were asked with other prompts or of another endpoint (a --fresh rerun after a
                # change): never stored under this run's stamps. Cancelled, so it costs no more.
                if batch_id is not None:
                    with contextlib.suppress(ProviderError):
                        await self.api.cancel(batch_id)
                store.set_not_submitted(self.con, rec.label, "made with other prompts or another endpoint than "
                                        "this run: not collected", status=store.STALE)
                log(f"warning: {self.shown}: batch {batch_id or rec.label} was made with other prompts or "
                    "another endpoint: cancelled, not collected; its items are asked again")
                continue
            if batch_id is None:  # recorded, then the run ended before the provider's id was stored
                # An API without labels (Anthropic) is searched by what was recorded of the batch.
                since = rec.submitted_at.timestamp() if rec.submitted_at is not None else 0.0
                hint = LostCreate(tuple(items), since, store.known_batch_ids(self.con, self.api.provider))
                try:
                    batch_id = await self.api.find(rec.label, hint)
                except ProviderError as e:
                    log(f"warning: {self.shown}: cannot tell whether batch {rec.label} was created ({e}); "
                        "its items wait for the next run")
                    carried |= set(items.values())
                    continue
                if batch_id is None:
                    store.set_not_submitted(self.con, rec.label, "not found at the provider after an interruption")
                    continue  # its items are asked again
                store.set_created(self.con, rec.label, batch_id)
            carried |= set(items.values())
            out.append(Reopened(rec.label, batch_id, items))
        return out, carried

    async def _round(self, jobs: Iterable[J] | AsyncIterable[J], attach: list[Open[J]]) -> list[tuple[J, ProviderError]]:
        """Submit these jobs, then wait on the new and attached batches and collect: the jobs to ask again."""
        batches = attach + await self._submit_all(jobs)
        retry: list[tuple[J, ProviderError]] = []
        async with anyio.create_task_group() as tg:
            for b in batches:
                tg.start_soon(self._watch, b, retry)
        return retry

    # ---------------------------------------------------------------- submission

    async def _submit_all(self, jobs: Iterable[J] | AsyncIterable[J]) -> list[Open[J]]:
        """Submit each chunk as soon as it is full (a stream's last one when it ends)."""
        out: list[Open[J]] = []
        chunker: Chunker[J] = Chunker(self.api, self.cfg.batch_max_requests)
        stopped = False

        async def send(chunk: list[tuple[BatchRequest, J]]) -> None:
            nonlocal stopped
            est = sum(self.client.estimate(j) for _, j in chunk)
            if stopped or self.budget is not None and not self.budget.reserve(est):
                stopped = True  # these jobs stay pending: a later run asks them
                return
            submitted = await self._submit(chunk, est)
            if submitted is not None:
                out.append(submitted)

        async for job in _each(jobs):
            req = self.client.request(job)
            if too_large(req, self.api):
                err = ProviderError(ErrorClass.PERMANENT, f"request of {self.api.request_size(req)} bytes is larger "
                                    f"than a {self.api.provider} batch may carry ({self.api.max_bytes} bytes)")
                await self.client.store(job, err, datetime.now(UTC))
                continue
            for chunk in chunker.add(req, job):
                await send(chunk)
        if chunker.chunk:
            await send(chunker.rest())
        return out

    async def _submit(self, chunk: list[tuple[BatchRequest, J]], est: float) -> Open[J] | None:
        label = f"eng-{self.run_id or 'run'}-{uuid.uuid4().hex[:12]}"
        jobs = {req.custom_id: j for req, j in chunk}
        items = {cid: self.client.key(j) for cid, j in jobs.items()}
        # Recorded first: a crash during the create leaves a row that the next run looks up by label.
        store.record_batch(self.con, label=label, run_id=self.run_id, model=self.owner, provider=self.api.provider,
                           items=items, est_cost_usd=est, stamp=self.client.stamp(items.values()), lane=self.lane)
        try:
            batch_id = await self._create([req for req, _ in chunk], label)
        except ProviderError as e:
            if self.budget is not None:
                self.budget.settle(est, None)
            if ambiguous(e):
                # It may exist without its id: the row stays 'submitting' and the next run looks it up by
                # label, submitting its items again only if it is not found. Nothing is stored for them now.
                log(f"warning: {self.shown}: whether a batch of {len(chunk)} request(s) was created is "
                    f"unknown ({e}); the next run looks for it before asking its items again")
                return None
            store.set_not_submitted(self.con, label, str(e))
            log(f"warning: {self.shown}: a batch of {len(chunk)} request(s) could not be submitted: {e}")
            for _, j in chunk:  # error rows: the next run asks them again
                await self.client.store(j, e, datetime.now(UTC))
            return None
        store.set_created(self.con, label, batch_id)
        self.reserved[label] = est
        self.states[label] = None
        self.submitted += 1
        self._show()
        return Open(label, batch_id, jobs)

    async def _create(self, requests: list[BatchRequest], label: str) -> str:
        """Submit, again after a failure the server answered (it created nothing); never after an ambiguous one."""
        for attempt in range(SUBMIT_TRIES):
            try:
                return await self.api.submit(requests, label=label)
            except ProviderError as e:
                # The create may have succeeded with its answer lost: look before anything else.
                with contextlib.suppress(ProviderError):
                    found = await self.api.find(label)
                    if found is not None:
                        return found
                if ambiguous(e) or not e.klass.retryable or attempt == SUBMIT_TRIES - 1:
                    raise
                await self._sleep(e.retry_after or self.cfg.backoff_s * 2 ** attempt)
        raise AssertionError("unreachable")

    # ---------------------------------------------------------------- waiting and collecting

    async def _watch(self, b: Open[J], retry: list[tuple[J, ProviderError]]) -> None:
        while True:
            try:
                st = await self.api.status(b.batch_id)
            except ProviderError as e:
                if not e.klass.retryable:
                    log(f"warning: {self.shown}: batch {b.batch_id} cannot be polled ({e}); it stays open for "
                        "the next run")
                    return
                await self._sleep(self.cfg.batch_poll_s)
                continue
            if st != self.states.get(b.label):
                self.states[b.label] = st
                store.set_status(self.con, b.label, status=st.state, provider_status=st.provider_status,
                                 succeeded=st.succeeded, failed=st.failed, ended=st.state in TERMINAL)
                self._show()
            if st.state in TERMINAL:
                break
            await self._sleep(self.cfg.batch_poll_s)
        await self._collect(b, st, retry)

    async def _collect(self, b: Open[J], st: BatchStatus, retry: list[tuple[J, ProviderError]]) -> None:
        seen: set[str] = set()
        cost = 0.0
        started = datetime.now(UTC)
        if st.state != FAILED:  # a failed batch has no results; all its jobs are asked again
            async for out in self.api.results(b.batch_id):
                cid = out.custom_id
                job = b.jobs.get(cid)
                if job is None or cid in seen:  # not this run's to store (stored already, or changed since)
                    continue
                seen.add(cid)
                if out.result is None and out.error is not None and out.error.klass.retryable:
                    retry.append((job, out.error))
                    continue
                outcome = out.result if out.result is not None else out.error
                if outcome is None:
                    outcome = ProviderError(ErrorClass.TRANSIENT, "batch result with neither answer nor error")
                cost += await self.client.store(job, outcome, started)
        why = f"batch {st.state} ({st.provider_status}) without an answer for this request"
        for cid, job in b.jobs.items():
            if cid not in seen:
                retry.append((job, ProviderError(ErrorClass.TRANSIENT, why)))
        await self.client.synced()  # the rows are stored before the batch is marked collected
        store.mark_collected(self.con, b.label)
        with contextlib.suppress(ProviderError):  # its files at the provider: nothing left to read there
            await self.api.discard(b.batch_id)
        if self.budget is not None and b.label in self.reserved:
            self.budget.settle(self.reserved.pop(b.label), cost)
        self._show()

    def _show(self) -> None:
        states = [s for s in self.states.values()]
        running = Counter(s.provider_status for s in states if s is not None and s.state not in TERMINAL)
        ended = sum(1 for s in states if s is not None and s.state in TERMINAL)
        waiting = sum(1 for s in states if s is None)
        detail = ", ".join(f"{n} {w}" for w, n in running.items())
        again = f" (+{self.reattached} re-attached)" if self.reattached else ""
        self.progress.note(self.shown, f"batches: {self.submitted} submitted{again}, "
                           f"{sum(running.values()) + waiting} in progress" + (f" ({detail})" if detail else "")
                           + f", {ended} done")


async def _each(jobs: Iterable[J] | AsyncIterable[J]):
    if isinstance(jobs, AsyncIterable):
        async for j in jobs:
            yield j
    else:
        for j in jobs:
            yield j

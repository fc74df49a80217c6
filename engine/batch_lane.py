"""A batched model's lane: its pending items through the provider's batch API, resumable across crashes.

The items are those the synchronous lane would ask (engine.plan.lane), with the
same bodies (the dataset's adapter in the model's ProviderSet), less the items
carried by the model's batches still open in the store. Every batch is recorded
before it is submitted and its provider id stored as soon as the provider gives
it, so a rerun re-attaches to it (or finds it by label) instead of paying twice.
Answers become rows through the same code as synchronous answers
(engine.scheduler.build_row) and go to the same writer (and its side lanes).
A batch is marked collected only once its rows are in the database; collecting
again after a crash in between skips the items already stored.

Requests a batch did not answer (failed, expired, cancelled, retryable errors)
are asked again in a new batch, up to MAX_ROUNDS batches per item and run, or by
synchronous calls when the model says ``batch_retry = "sync"``; permanent
errors are stored as error rows (a later run retries them, as it does any error row).
"""

from __future__ import annotations

import contextlib
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, Protocol

import anyio
import duckdb

from benchmark.dataset import stable_hash
from engine.batch_requests import build_requests, item_key, split, too_large
from engine.config import ModelConfig
from engine.generation import ProviderSet
from engine.plan import PlannedDataset, Work
from engine.progress import Progress, log
from engine.run_context import RunContext
from engine.scheduler import Budget, ModelLane, Stamps, build_row, estimate_cost
from providers.batch import FAILED, TERMINAL, BatchAPI, BatchRequest, BatchStatus
from providers.errors import ErrorClass, ProviderError, Unreachable
from store import batches as store
from store.batches import ItemKey
from store.writer import ResultRow

MAX_ROUNDS = 3  # batches an item may go through in one run before its failure is stored
SUBMIT_TRIES = 3  # create attempts per batch (each preceded by a look-up of its label)


class Answers(Protocol):
    """The results writer (store.writer.Writer, or engine.side_lane.Tee in front of it)."""

    async def put(self, row: ResultRow) -> None: ...

    async def synced(self) -> None: ...


def make_api(provider: str, adapter: Any) -> BatchAPI:
    """The provider's batch API around one of the model's synchronous adapters (providers/batch_*.py)."""
    from providers.registry import make_batch_api

    return make_batch_api(provider, adapter)


def ambiguous(e: ProviderError) -> bool:
    """A create that failed without an HTTP status (timeout, dropped connection): it may have reached the server."""
    return e.klass is ErrorClass.TRANSIENT and e.status is None


class BatchLane:
    """One batched model for one run. Its inputs are explicit, so any run context can build it."""

    def __init__(self, model: ModelConfig, api: BatchAPI, providers: ProviderSet, work: Iterable[Work],
                 answers: Answers, stamps: Stamps, progress: Progress, con: duckdb.DuckDBPyConnection, *,
                 budget: Budget | None = None, sleep: Callable[[float], Any] = anyio.sleep):
        self.model, self.api, self.providers, self.answers = model, api, providers, answers
        self.sync_stamps = stamps
        # Answers cost the batch price; the stamps are otherwise the same (identity, prompt hash).
        self.stamps = Stamps(stamps.suite_version, stamps.prompt_hash, run_id=stamps.run_id,
                             price=stamps.price.batch() if stamps.price is not None else None,
                             max_output=stamps.max_output, identity=stamps.identity)
        self.progress, self.con, self.budget, self._sleep = progress, con, budget, sleep
        self._work = work
        self.works: dict[ItemKey, Work] = {}
        self.reserved: dict[str, float] = {}  # label -> budget reserved at submission
        self.states: dict[str, BatchStatus | None] = {}  # label -> last status seen (None: not polled yet)
        self.submitted = 0  # batches created in this run
        self.reattached = 0  # batches of earlier runs watched in this one
        self.sync_asked = 0

    # ---------------------------------------------------------------- the run

    async def run(self) -> None:
        try:
            self.works = {item_key(w): w for w in self._work}
            await self._run()
        except Unreachable as e:
            # Its endpoint was given up: what is in flight stays so, what is pending stays unasked.
            log(f"warning: {self.model.name}: {e}; its batches are collected by the next run")
        finally:
            with anyio.CancelScope(shield=True):
                await self.api.aclose()

    async def _run(self) -> None:
        attach, carried = await self._reattach()
        fresh = [w for k, w in self.works.items() if k not in carried]
        retry = await self._round(fresh, attach)
        rounds = 1
        while retry:
            if self.model.batch_retry == "sync":
                await self._ask_sync([w for w, _ in retry])
                break
            if rounds >= MAX_ROUNDS:
                for w, err in retry:
                    await self._put(build_row(self.model.name, w, self.stamps, datetime.now(UTC), err))
                break
            retry = await self._round([w for w, _ in retry], [])
            rounds += 1

    async def _reattach(self) -> tuple[list[tuple[str, str, dict[str, ItemKey]]], set[ItemKey]]:
        """The model's open batches from earlier runs: (label, provider id, items) to watch, and every item they carry."""
        attach, carried = [], set()
        left = 0
        for rec in store.open_batches(self.con, self.model.name):
            items = store.batch_items(self.con, rec.label)
            batch_id = rec.batch_id
            datasets = {k.dataset for k in items.values()}
            if datasets <= set(self.stamps.prompt_hash) and rec.stamp is not None and rec.stamp != self._stamp(datasets):
                # Its answers were asked with other prompts or of another endpoint (a --fresh rerun after a
                # change): never stored under this run's stamps. Cancelled, so it costs no more.
                if batch_id is not None:
                    with contextlib.suppress(ProviderError):
                        await self.api.cancel(batch_id)
                store.set_not_submitted(self.con, rec.label, "made with other prompts or another endpoint than "
                                        "this run: not collected", status=store.STALE)
                log(f"warning: {self.model.name}: batch {batch_id or rec.label} was made with other prompts or "
                    "another endpoint: cancelled, not collected; its items are asked again")
                continue
            if batch_id is None:  # recorded, then the run ended before the provider's id was stored
                try:
                    batch_id = await self.api.find(rec.label)
                except ProviderError as e:
                    log(f"warning: {self.model.name}: cannot tell whether batch {rec.label} was created ({e}); "
                        "its items wait for the next run")
                    carried |= set(items.values())
                    continue
                if batch_id is None:
                    store.set_not_submitted(self.con, rec.label, "not found at the provider after an interruption")
                    continue  # its items are asked again below
                store.set_created(self.con, rec.label, batch_id)
            carried |= set(items.values())
            answered = store.answered(self.con, self.model.name, rec.label)
            if any(k not in self.works for c, k in items.items() if c not in answered):
                left += 1  # it carries items this run does not plan (another --datasets / --limit)
                continue
            attach.append((rec.label, batch_id, items))
            self.states[rec.label] = None
        self.reattached = len(attach)
        if attach:
            log(f"{self.model.name}: re-attached to {len(attach)} batch(es) submitted earlier", quiet=self.progress.quiet)
        if left:
            log(f"{self.model.name}: {left} open batch(es) carry items outside this run's plan: left for a run "
                "that plans them", quiet=self.progress.quiet)
        return attach, carried

    async def _round(self, works: list[Work], attach: list[tuple[str, str, dict[str, ItemKey]]]
                     ) -> list[tuple[Work, ProviderError]]:
        """Submit these items, wait on the new and re-attached batches, collect: the items to ask again."""
        batches = attach + await self._submit_all(works)
        retry: list[tuple[Work, ProviderError]] = []
        async with anyio.create_task_group() as tg:
            for label, batch_id, items in batches:
                tg.start_soon(self._watch, label, batch_id, items, retry)
        return retry

    # ---------------------------------------------------------------- submission

    async def _submit_all(self, works: list[Work]) -> list[tuple[str, str, dict[str, ItemKey]]]:
        out = []
        fitting = []
        for req, w in build_requests(works, self.providers):
            if too_large(req, self.api):
                err = ProviderError(ErrorClass.PERMANENT, f"request of {self.api.request_size(req)} bytes is larger "
                                    f"than a {self.api.provider} batch may carry ({self.api.max_bytes} bytes)")
                await self._put(build_row(self.model.name, w, self.stamps, datetime.now(UTC), err))
            else:
                fitting.append((req, w))
        for chunk in split(fitting, self.api, self.model.batch_max_requests):
            est = sum(estimate_cost(w, self.stamps) for _, w in chunk)
            if self.budget is not None and not self.budget.reserve(est):
                break  # these items stay pending: a later run asks them
            submitted = await self._submit(chunk, est)
            if submitted is not None:
                out.append(submitted)
        return out

    async def _submit(self, chunk: list[tuple[BatchRequest, Work]], est: float
                      ) -> tuple[str, str, dict[str, ItemKey]] | None:
        label = f"eng-{self.stamps.run_id or 'run'}-{uuid.uuid4().hex[:12]}"
        items = {req.custom_id: item_key(w) for req, w in chunk}
        # Recorded first: a crash during the create leaves a row that the next run looks up by label.
        store.record_batch(self.con, label=label, run_id=self.stamps.run_id, model=self.model.name,
                           provider=self.api.provider, items=items, est_cost_usd=est,
                           stamp=self._stamp({k.dataset for k in items.values()}))
        try:
            batch_id = await self._create([req for req, _ in chunk], label)
        except ProviderError as e:
            if self.budget is not None:
                self.budget.settle(est, None)
            if ambiguous(e):
                # It may exist without its id: the row stays 'submitting' and the next run looks it up by
                # label, submitting its items again only if it is not found. Nothing is stored for them now.
                log(f"warning: {self.model.name}: whether a batch of {len(chunk)} request(s) was created is "
                    f"unknown ({e}); the next run looks for it before asking its items again")
                return None
            store.set_not_submitted(self.con, label, str(e))
            log(f"warning: {self.model.name}: a batch of {len(chunk)} request(s) could not be submitted: {e}")
            for _, w in chunk:  # error rows: the next run asks them again
                await self._put(build_row(self.model.name, w, self.stamps, datetime.now(UTC), e))
            return None
        store.set_created(self.con, label, batch_id)
        self.reserved[label] = est
        self.states[label] = None
        self.submitted += 1
        self._show()
        return label, batch_id, items

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
                await self._sleep(e.retry_after or self.model.backoff_s * 2 ** attempt)
        raise AssertionError("unreachable")

    # ---------------------------------------------------------------- waiting and collecting

    async def _watch(self, label: str, batch_id: str, items: dict[str, ItemKey],
                     retry: list[tuple[Work, ProviderError]]) -> None:
        while True:
            try:
                st = await self.api.status(batch_id)
            except ProviderError as e:
                if not e.klass.retryable:
                    log(f"warning: {self.model.name}: batch {batch_id} cannot be polled ({e}); it stays open for "
                        "the next run")
                    return
                await self._sleep(self.model.batch_poll_s)
                continue
            if st != self.states.get(label):
                self.states[label] = st
                store.set_status(self.con, label, status=st.state, provider_status=st.provider_status,
                                 succeeded=st.succeeded, failed=st.failed, ended=st.state in TERMINAL)
                self._show()
            if st.state in TERMINAL:
                break
            await self._sleep(self.model.batch_poll_s)
        await self._collect(label, batch_id, items, st, retry)

    async def _collect(self, label: str, batch_id: str, items: dict[str, ItemKey], st: BatchStatus,
                       retry: list[tuple[Work, ProviderError]]) -> None:
        done = store.answered(self.con, self.model.name, label)  # stored by a collection a crash cut short
        seen: set[str] = set()
        cost = 0.0
        started = datetime.now(UTC)
        if st.state != FAILED:  # a failed batch has no results; all its items are asked again
            async for out in self.api.results(batch_id):
                cid = out.custom_id
                if cid not in items or cid in seen or cid in done:
                    continue
                seen.add(cid)
                w = self.works[items[cid]]
                if out.result is None and out.error is not None and out.error.klass.retryable:
                    retry.append((w, out.error))
                    continue
                outcome = out.result if out.result is not None else out.error
                if outcome is None:
                    outcome = ProviderError(ErrorClass.TRANSIENT, "batch result with neither answer nor error")
                row = build_row(self.model.name, w, self.stamps, started, outcome)
                cost += row.cost_usd or 0.0
                await self._put(row)
        why = f"batch {st.state} ({st.provider_status}) without an answer for this request"
        for cid, key in items.items():
            if cid not in seen and cid not in done:
                retry.append((self.works[key], ProviderError(ErrorClass.TRANSIENT, why)))
        await self.answers.synced()  # the rows are stored before the batch is marked collected
        store.mark_collected(self.con, label)
        if self.budget is not None and label in self.reserved:
            self.budget.settle(self.reserved.pop(label), cost)
        self._show()

    # ---------------------------------------------------------------- the rest

    def _stamp(self, datasets: set[str]) -> str:
        """What the answers of a batch over these datasets are stored under: prompt stamps and identities."""
        return stable_hash(sorted((d, self.stamps.prompt_hash[d], self.stamps.identity.get(d) or "")
                                  for d in datasets), length=16)

    async def _put(self, row: ResultRow) -> None:
        await self.answers.put(row)
        self.progress.advance(self.model.name, ok=row.status == "ok")

    async def _ask_sync(self, works: list[Work]) -> None:
        """batch_retry = "sync": the requests batches did not answer, asked by ordinary calls (full price)."""
        self.sync_asked += len(works)
        await ModelLane(self.model.name, provider=self.providers, work=iter(works), concurrency=self.model.concurrency,
                        stamps=self.sync_stamps).drive(self.answers, self.progress, self.budget)

    def _show(self) -> None:
        states = [s for s in self.states.values()]
        running = Counter(s.provider_status for s in states if s is not None and s.state not in TERMINAL)
        ended = sum(1 for s in states if s is not None and s.state in TERMINAL)
        waiting = sum(1 for s in states if s is None)
        detail = ", ".join(f"{n} {w}" for w, n in running.items())
        again = f" (+{self.reattached} re-attached)" if self.reattached else ""
        self.progress.note(self.model.name, f"batches: {self.submitted} submitted{again}, "
                           f"{sum(running.values()) + waiting} in progress" + (f" ({detail})" if detail else "")
                           + f", {ended} done")


def batch_lane_for(m: ModelConfig, providers: ProviderSet, planned: list[PlannedDataset], work: Iterable[Work],
                   answers: Answers, stamps: Stamps, progress: Progress, con: duckdb.DuckDBPyConnection,
                   budget: Budget | None) -> BatchLane:
    """The lane of a batched model in a sweep; its API wraps the adapter of the model's first dataset
    (each request carries its own dataset's body, so one API serves all of them)."""
    api = make_api(m.provider, providers.for_dataset(planned[0].id))
    # Its own cursor: the results writer uses `con` from its thread meanwhile.
    return BatchLane(m, api, providers, work, answers, stamps, progress, con.cursor(), budget=budget)


class SweepBatchLane:
    """A batched model's lane in a sweep: the Lane protocol (engine/run_context.py) around BatchLane."""

    def __init__(self, m: ModelConfig, *, providers: ProviderSet, planned: list[PlannedDataset],
                 work: Iterable[Work], stamps: Stamps):
        self.m, self.providers, self.planned, self.work, self.stamps = m, providers, planned, work, stamps

    async def run(self, ctx: RunContext) -> None:
        await batch_lane_for(self.m, self.providers, self.planned, self.work, ctx.answers, self.stamps,  # type: ignore[arg-type]
                             ctx.progress, ctx.con, ctx.budget).run()

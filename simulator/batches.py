"""Wire-neutral batch machinery of the simulated provider: stored files, batches, their clock and results.

Each wire (simulator/batch_openai.py, batch_anthropic.py, batch_gemini.py)
parses its own create request, hands the requests here with a function that
answers one request body the way its synchronous endpoint would (same reply
logic, so a batched answer reads like a synchronous one), and renders the
batch in its own words. State is in memory: the client, not the simulator, is
what gets killed in the tests.

A batch's life, for ``L = batch_latency_s``: queued (the first 20 % of L),
running (to 80 %), finalizing (to 100 %), then ended; the results are computed
once, when the batch is first seen ended, so a request is answered once however
often its results are downloaded. A cancelled batch is "cancelling" for L/4,
then ends with the requests it had reached answered and the rest cancelled.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from simulator.core import SimState
from simulator.openai import STATE

Answer = Callable[[Any], tuple[int, bytes]]  # request body -> (status, response body), as the sync endpoint

QUEUED, RUNNING, FINALIZING, CANCELLING, ENDED = "queued", "running", "finalizing", "cancelling", "ended"
# How a batch ended.
COMPLETED, EXPIRED, CANCELLED, FAILED = "completed", "expired", "cancelled", "failed"


@dataclass
class Result:
    custom_id: str
    kind: str  # "ok" (answered, any status), "error" (the simulator's injected 500), "expired", "cancelled"
    status: int = 0
    body: bytes = b""


@dataclass(frozen=True)
class Pending:
    custom_id: str
    body: Any
    key: str  # "{model}/{custom_id}": custom_ids repeat across models (the engine's are per item)
    attempt: int  # how often this key was submitted before


@dataclass
class StoredFile:
    id: str
    data: bytes
    purpose: str
    filename: str
    owner: str  # the wire whose Files API holds it: "openai" | "gemini"
    created: int = field(default_factory=lambda: int(time.time()))


@dataclass
class SimBatch:
    id: str
    provider: str
    requests: list[Pending]
    answer: Answer
    created: float  # monotonic
    created_at: int  # unix seconds
    latency_s: float
    extra: dict[str, Any] = field(default_factory=dict)  # the wire's own fields (metadata, display name ...)
    errors: list[dict[str, Any]] = field(default_factory=list)  # why it failed validation
    cancel_at: float | None = None
    results: list[Result] | None = None
    ended_as: str | None = None
    ended_at: int | None = None

    def elapsed(self) -> float:
        return time.monotonic() - self.created


class BatchStore:
    def __init__(self, state: SimState):
        self.state = state
        self.files: dict[str, StoredFile] = {}
        self.batches: dict[str, SimBatch] = {}  # in creation order
        self._ids = itertools.count(1)
        self._submitted: Counter[str] = Counter()  # Pending.key -> submissions

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):06d}"

    def add_file(self, data: bytes, purpose: str, filename: str, prefix: str, owner: str) -> StoredFile:
        stored = StoredFile(self.new_id(prefix), data, purpose, filename, owner)
        self.files[stored.id] = stored
        return stored

    def listed_files(self, owner: str) -> list[StoredFile]:
        """``owner``'s files, newest first (uploads still in progress are not files yet)."""
        return [f for f in reversed(self.files.values()) if f.owner == owner and f.purpose != "pending"]

    def create(self, provider: str, prefix: str, requests: list[tuple[str, Any]], answer: Answer,
               model_of: Callable[[Any], str], *, extra: dict[str, Any] | None = None,
               errors: list[dict[str, Any]] | None = None) -> SimBatch:
        """A new batch of (custom_id, body) requests; ``model_of`` names a body's model. One with
        ``errors`` failed validation and ends failed, answering nothing."""
        stats = self.state.stats
        stats.batches_created[provider] += 1
        stats.batch_requests[provider] += len(requests)
        numbered = []
        for custom_id, body in requests:
            key = f"{model_of(body)}/{custom_id}"
            numbered.append(Pending(custom_id, body, key, self._submitted[key]))
            self._submitted[key] += 1
        batch = SimBatch(self.new_id(prefix), provider, numbered, answer, time.monotonic(), int(time.time()),
                         self.state.config.batch_latency_s, extra or {}, errors or [])
        self.batches[batch.id] = batch
        return batch

    def get(self, batch_id: str) -> SimBatch | None:
        batch = self.batches.get(batch_id)
        if batch is not None:
            self.phase(batch)  # ends it, and computes its results, once its time has come
        return batch

    def listed(self, provider: str) -> list[SimBatch]:
        """This provider's batches, newest first."""
        return [self.get(b.id) or b for b in reversed(self.batches.values()) if b.provider == provider]

    def phase(self, batch: SimBatch) -> str:
        if batch.ended_as is not None:
            return ENDED
        now, span = batch.elapsed(), batch.latency_s
        if batch.errors:
            return self._end(batch, FAILED) if now >= span * 0.2 else QUEUED
        if batch.cancel_at is not None:
            if time.monotonic() - batch.cancel_at >= span * 0.25:
                return self._end(batch, CANCELLED)
            return CANCELLING
        if now >= span:
            return self._end(batch, COMPLETED)
        return QUEUED if now < span * 0.2 else RUNNING if now < span * 0.8 else FINALIZING

    def cancel(self, batch: SimBatch) -> bool:
        """Ask a batch to stop; False when it has already ended."""
        if self.phase(batch) == ENDED:
            return False
        if batch.cancel_at is None:
            batch.cancel_at = time.monotonic()
        return True

    def _end(self, batch: SimBatch, how: str) -> str:
        config, stats, draw = self.state.config, self.state.stats, self.state.draw
        reached = len(batch.requests)
        if batch.cancel_at is not None:  # the requests it had got to before the cancel
            progress = (batch.cancel_at - batch.created - batch.latency_s * 0.2) / (batch.latency_s * 0.6)
            reached = int(len(batch.requests) * min(1.0, max(0.0, progress)))
        results = []
        for i, p in enumerate(batch.requests):
            if how == FAILED:
                break
            if i >= reached:
                results.append(Result(p.custom_id, "cancelled"))
            elif draw("expire:" + p.key, p.attempt) < config.batch_expire_rate:
                results.append(Result(p.custom_id, "expired"))
            elif draw("error:" + p.key, p.attempt) < config.batch_error_rate:
                results.append(Result(p.custom_id, "error", 500))
            else:
                status, raw = batch.answer(p.body)
                results.append(Result(p.custom_id, "ok", status, raw))
        for p, r in zip(batch.requests, results):
            counter = (stats.batch_answered if r.kind == "ok" and r.status == 200 else
                       stats.batch_errored if r.kind in ("ok", "error") else stats.batch_unanswered)
            counter[p.key] += 1
        if how == COMPLETED and any(r.kind == "expired" for r in results):
            how = EXPIRED
        batch.results, batch.ended_as, batch.ended_at = results, how, int(time.time())
        return ENDED

    @staticmethod
    def counts(batch: SimBatch) -> Counter[str]:
        """succeeded / errored / expired / cancelled / processing, as the batch stands."""
        if batch.results is None:
            return Counter(processing=len(batch.requests))
        return Counter("succeeded" if r.kind == "ok" and r.status == 200 else
                       "errored" if r.kind in ("ok", "error") else r.kind for r in batch.results)


BATCHES = web.AppKey("sim_batches", BatchStore)
Handler = Callable[[web.Request, BatchStore], Awaitable[web.StreamResponse]]


def guarded(check: Callable[[web.Request, SimState], web.Response | None], error: type[Exception],
            render: Callable[[Any], web.Response]) -> Callable[[Handler], Callable[..., Any]]:
    """A wire's handler behind its key check (``check`` returns the refusal, or None), with
    its ``error`` exception rendered in the wire's error shape."""

    def wrap(handler: Handler) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def wrapper(request: web.Request) -> web.StreamResponse:
            refused = check(request, request.app[STATE])
            if refused is not None:
                return refused
            try:
                return await handler(request, request.app[BATCHES])
            except error as err:
                return render(err)

        return wrapper

    return wrap


def json_response(doc: Any, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=orjson.dumps(doc), content_type="application/json", headers=headers)


def after(batches: list[SimBatch], batch_id: str | None) -> list[SimBatch]:
    """The batches listed after ``batch_id`` (a list's cursor); all of them without one."""
    if not batch_id:
        return batches
    ids = [b.id for b in batches]
    return batches[ids.index(batch_id) + 1:] if batch_id in ids else []

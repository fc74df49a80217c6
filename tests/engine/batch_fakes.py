"""An in-memory provider batch API (providers/batch/core.py's Protocol) with knobs, and a dataset to batch.

The fake keeps its batches across engine runs, as a provider does: a test can
stop the engine while batches are in flight and run it again against the same
fake. Answers are computed from the request body, so a wrong body scores wrong.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import anyio
import orjson

from benchmark.dataset import DatasetBase, Item, Message, MetricSpec, Scored
from engine.lanes.work import PlannedDataset
from providers.base import ChatResult
from providers.batch.core import (
    CANCELLED,
    ENDED,
    EXPIRED,
    FAILED,
    RUNNING,
    BatchOutcome,
    BatchRequest,
    BatchStatus,
    LostCreate,
)
from providers.errors import ErrorClass, ProviderError


class EchoDataset(DatasetBase):
    """Item i asks 'q<i>'; the right answer is 'a<i>'."""

    language = "en"
    scorer_version = "1"
    metrics = (MetricSpec("accuracy", "mean", primary=True),)
    samples = 1

    def __init__(self, id: str = "echo", n: int = 10):
        self.id = id
        self.n = n

    def prompt_hash(self) -> str:
        return "h"

    def records(self, data_dir: Any):
        return iter([(str(i), i) for i in range(self.n)])

    def render(self, item_id: str, raw: Any) -> Item:
        return Item(item_id, (Message("user", f"q{item_id}"),), f"a{item_id}")

    def score(self, item: Item, response: str, *, finish_reason: str | None = None) -> Scored:
        return Scored(response, 1.0 if response == item.gold else 0.0)


def planned(ds: EchoDataset) -> PlannedDataset:
    return PlannedDataset(dataset=ds, records=tuple(ds.records(None)))  # type: ignore[arg-type]


def answer_of(body: bytes) -> str:
    return "a" + orjson.loads(body)["messages"][-1]["content"][1:]


class FakeChat:
    """A synchronous adapter: the body it would send, and answers counted (for batch_retry = "sync")."""

    def __init__(self, gen: dict):
        self.gen = gen
        self.calls: list[bytes] = []

    def request_body(self, messages: Sequence[Any], answer: Any = None) -> bytes:
        return orjson.dumps({"model": "m", "messages": [{"role": m.role, "content": m.content} for m in messages],
                             **self.gen})

    async def chat(self, messages: Sequence[Any], answer: Any = None) -> ChatResult:
        body = self.request_body(messages, answer)
        self.calls.append(body)
        return ChatResult(text=answer_of(body), input_tokens=10, output_tokens=2)

    async def aclose(self) -> None:
        pass


class FakeBatch:
    def __init__(self, id: str, label: str, requests: Sequence[BatchRequest], states: list[str], final: str):
        self.id, self.label, self.requests = id, label, list(requests)
        self.states = list(states)  # provider statuses still to go through before `final`
        self.final = final
        self.cancelled = False
        self.results_read = 0
        self.special = True  # the knobs apply to it


class FakeBatchAPI:
    """Knobs:
    - ``fail``: custom_id -> ProviderError for that request
    - ``states``: provider statuses each batch reports (one per poll) before it ends
    - ``final``: how a batch ends: ENDED, EXPIRED (``expire`` custom_ids unanswered), FAILED, CANCELLED
    - ``submit_error``: errors raised by the next submits (a lost create: ``create_then_fail``)
    - ``on_poll``: called on each status poll (a test stops the engine from there)
    - ``first_only``: ``fail``, ``expire`` and ``final`` apply to the first batch only (later ones end well)
    """

    provider = "openai"

    def __init__(self, *, max_requests: int = 100, max_bytes: int = 1_000_000, states: Sequence[str] = ("in_progress",),
                 final: str = ENDED):
        self.max_requests, self.max_bytes = max_requests, max_bytes
        self.states, self.final = list(states), final
        self.fail: dict[str, ProviderError] = {}
        self.first_only = False
        self.expire: set[str] = set()
        self.submit_errors: list[ProviderError] = []
        self.create_then_fail = False
        self.finds = True  # whether `find` can tell a batch by its label
        self.on_poll: Callable[[str], None] | None = None
        self.batches: dict[str, FakeBatch] = {}
        self.polls = 0
        self.answered: list[str] = []  # custom_ids answered with a result, over all batches
        self.answer: Callable[[bytes], str] = answer_of  # the reply text for a request body
        self.hints: list[LostCreate | None] = []  # what `find` was told of each batch it looked for
        self.discarded: list[str] = []  # batches whose files the engine deleted after collecting them

    def request_size(self, request: BatchRequest) -> int:
        return len(request.body) + 50

    async def submit(self, requests: Sequence[BatchRequest], *, label: str) -> str:
        assert len(requests) <= self.max_requests
        assert sum(self.request_size(r) for r in requests) <= self.max_bytes
        ids = [r.custom_id for r in requests]
        assert len(set(ids)) == len(ids)
        if self.submit_errors and not self.create_then_fail:
            raise self.submit_errors.pop(0)
        batch_id = f"batch_{len(self.batches)}"
        special = not self.batches or not self.first_only
        self.batches[batch_id] = FakeBatch(batch_id, label, requests, self.states, self.final if special else ENDED)
        self.batches[batch_id].special = special
        if self.submit_errors:  # created, and the answer lost on the way back
            raise self.submit_errors.pop(0)
        return batch_id

    async def find(self, label: str, hint: LostCreate | None = None) -> str | None:
        self.hints.append(hint)
        if not self.finds:
            return None
        return next((b.id for b in self.batches.values() if b.label == label), None)

    async def status(self, batch_id: str) -> BatchStatus:
        self.polls += 1
        if self.on_poll is not None:
            self.on_poll(batch_id)
        b = self.batches[batch_id]
        n = len(b.requests)
        if b.cancelled:
            return BatchStatus(CANCELLED, "cancelled", n, 0, n)
        if b.states:
            return BatchStatus(RUNNING, b.states.pop(0), n, 0, 0)
        bad = sum(1 for r in b.requests if b.special and (r.custom_id in self.fail or r.custom_id in self.expire))
        word = {ENDED: "completed", EXPIRED: "expired", FAILED: "failed", CANCELLED: "cancelled"}[b.final]
        return BatchStatus(b.final, word, n, n - bad, bad)

    async def results(self, batch_id: str) -> AsyncIterator[BatchOutcome]:
        b = self.batches[batch_id]
        b.results_read += 1
        assert b.final != FAILED and not b.states
        for r in b.requests:
            if r.custom_id in self.expire and b.final == EXPIRED:
                continue  # never answered: the engine must notice the missing ones
            err = self.fail.get(r.custom_id) if b.special else None
            if err is not None:
                yield BatchOutcome(r.custom_id, error=err)
                continue
            self.answered.append(r.custom_id)
            yield BatchOutcome(r.custom_id, result=ChatResult(text=self.answer(r.body), input_tokens=10,
                                                              output_tokens=2))

    async def cancel(self, batch_id: str) -> None:
        self.batches[batch_id].cancelled = True

    async def discard(self, batch_id: str) -> None:
        self.discarded.append(batch_id)

    async def aclose(self) -> None:
        pass


def transient(msg: str = "server error") -> ProviderError:
    return ProviderError(ErrorClass.TRANSIENT, msg)


def permanent(msg: str = "invalid request") -> ProviderError:
    return ProviderError(ErrorClass.PERMANENT, msg, status=400)


class Crash(BaseException):
    """The process dies here (nothing after it runs, like kill -9)."""


def survives(main: Callable[[], Awaitable[Any]]) -> bool:
    """Run one engine run; False when it died at a Crash."""
    try:
        anyio.run(main)
    except (Crash, BaseExceptionGroup) as e:
        if isinstance(e, BaseExceptionGroup) and not e.subgroup(Crash):
            raise
        return False
    return True

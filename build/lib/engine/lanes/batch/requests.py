"""Batch requests: stable custom ids, the synchronous bodies, split by the API's limits.

A model's items (``build_requests``), and the chunks any batched lane submits (``Chunker``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

from engine.run.generation import ProviderSet
from engine.lanes.work import Work
from providers.batch.core import BatchAPI, BatchRequest
from store.side.batches import AnswerKey, ItemKey

J = TypeVar("J")

CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # what all three batch APIs accept


def item_key(w: Work) -> ItemKey:
    return ItemKey(w.planned.id, w.item.id, w.sample)


def custom_id(key: ItemKey) -> str:
    """Short, stable and provider-safe: the same item has the same id in every batch and run."""
    return _digest("i", f"{key.dataset}\x00{key.item_id}\x00{key.sample}".encode())


def question_id(key: AnswerKey, body: bytes) -> str:
    """A judge's or extractor's request: the answer's key and the very body asked, so a rerun recognises
    the request it submitted before only while the answer, rubric and settings are still the same."""
    return _digest("q", f"{key.model}\x00{key.dataset}\x00{key.item_id}\x00{key.sample}\x00".encode() + body)


def _digest(prefix: str, data: bytes) -> str:
    return prefix + hashlib.sha256(data).hexdigest()[:24]


def build_requests(works: Iterable[Work], providers: ProviderSet) -> Iterator[tuple[BatchRequest, Work]]:
    """Each item's request, its body exactly what a synchronous call of the same dataset would send."""
    for w in works:
        adapter = providers.for_dataset(w.planned.id)
        body = adapter.request_body(w.item.messages, w.item.answer)  # type: ignore[attr-defined]
        yield BatchRequest(custom_id(item_key(w)), body), w


class Chunker(Generic[J]):
    """Consecutive chunks within the API's requests and bytes per batch (and a smaller configured cap),
    fed one request at a time: a chunk is out as soon as it is full, so a stream need not end first.

    A request larger than a whole batch may carry is the caller's to refuse (``too_large``).
    """

    def __init__(self, api: BatchAPI, max_requests: int | None = None):
        self.api = api
        self.cap = min(api.max_requests, max_requests) if max_requests else api.max_requests
        self.chunk: list[tuple[BatchRequest, J]] = []
        self.size = 0

    def add(self, req: BatchRequest, job: J) -> Iterator[list[tuple[BatchRequest, J]]]:
        """The chunks this request completes (none, or one or two)."""
        n = self.api.request_size(req)
        if self.chunk and self.size + n > self.api.max_bytes:
            yield self.rest()
        self.chunk.append((req, job))
        self.size += n
        if len(self.chunk) >= self.cap:
            yield self.rest()

    def rest(self) -> list[tuple[BatchRequest, J]]:
        """The chunk so far (maybe empty), and a fresh one begun."""
        out, self.chunk, self.size = self.chunk, [], 0
        return out


def too_large(req: BatchRequest, api: BatchAPI) -> bool:
    return api.request_size(req) > api.max_bytes

"""A batched model's pending items as batch requests: stable custom ids, the synchronous bodies, split by limits."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator

from engine.generation import ProviderSet
from engine.plan import Work
from providers.batch import BatchAPI, BatchRequest
from store.batches import ItemKey

CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # what all three batch APIs accept


def item_key(w: Work) -> ItemKey:
    return ItemKey(w.planned.id, w.item.id, w.sample)


def custom_id(key: ItemKey) -> str:
    """Short, stable and provider-safe: the same item has the same id in every batch and run."""
    digest = hashlib.sha256(f"{key.dataset}\x00{key.item_id}\x00{key.sample}".encode()).hexdigest()
    return "i" + digest[:24]


def build_requests(works: Iterable[Work], providers: ProviderSet) -> Iterator[tuple[BatchRequest, Work]]:
    """Each item's request, its body exactly what a synchronous call of the same dataset would send."""
    for w in works:
        adapter = providers.for_dataset(w.planned.id)
        body = adapter.request_body(w.item.messages, w.item.answer)  # type: ignore[attr-defined]
        yield BatchRequest(custom_id(item_key(w)), body), w


def split(requests: Iterable[tuple[BatchRequest, Work]], api: BatchAPI, max_requests: int | None = None
          ) -> Iterator[list[tuple[BatchRequest, Work]]]:
    """Consecutive chunks within the API's requests and bytes per batch (and a smaller configured cap).

    A request larger than a whole batch may carry is the caller's to refuse (``too_large``).
    """
    cap = min(api.max_requests, max_requests) if max_requests else api.max_requests
    chunk: list[tuple[BatchRequest, Work]] = []
    size = 0
    for req, w in requests:
        n = api.request_size(req)
        if chunk and (len(chunk) >= cap or size + n > api.max_bytes):
            yield chunk
            chunk, size = [], 0
        chunk.append((req, w))
        size += n
    if chunk:
        yield chunk


def too_large(req: BatchRequest, api: BatchAPI) -> bool:
    return api.request_size(req) > api.max_bytes

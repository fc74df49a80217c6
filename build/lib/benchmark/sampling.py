"""Deterministic sampling: the same items on every machine, in any file order."""

from __future__ import annotations

import hashlib
import heapq
from typing import Any, Iterable

DEFAULT_SEED = 20250826


def sample_key(seed: int, dataset_id: str, item_id: str) -> int:
    digest = hashlib.blake2b(f"{seed}\x00{dataset_id}\x00{item_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def seeded_sample(
    records: Iterable[tuple[str, Any]], dataset_id: str, limit: int | None, seed: int = DEFAULT_SEED
) -> list[tuple[str, Any]]:
    """Keep the ``limit`` records whose seeded hash of the id is smallest.

    Memory is O(limit), whatever the pool size. The result is ordered by that
    hash, so it is also a deterministic shuffle. Duplicate ids are an error:
    a silently dropped item would change the sample.
    """
    heap: list[tuple[int, str, Any]] = []
    seen: set[str] = set()
    for item_id, raw in records:
        if item_id in seen:
            raise ValueError(f"{dataset_id}: duplicate item id {item_id!r}")
        seen.add(item_id)
        key = -sample_key(seed, dataset_id, item_id)  # max-heap of the smallest keys
        if limit is None or len(heap) < limit:
            heapq.heappush(heap, (key, item_id, raw))
        elif key > heap[0][0]:
            heapq.heapreplace(heap, (key, item_id, raw))
    return [(item_id, raw) for _, item_id, raw in sorted(heap, key=lambda t: -t[0])]

"""The work a lane takes: a dataset's sample held once, and each model's pending calls streamed from it.

Nothing here materialises models x items: a dataset's sampled items are held
once and shared by every model; each model's lane walks them lazily, skipping
what the store says is done. Choosing the sample is the sweep's planning
(engine/sweep/plan.py).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Callable, Iterator

import msgspec

from benchmark.context import fitted
from benchmark.dataset import Dataset, Item, Scored

# Every model's lane renders the same items, and models often answer an item alike ("A"): each
# dataset keeps the last few renders and scores, shared by the lanes, so ten models cost about
# one render and one score per item while their lanes run abreast (bench/README.md, "The calling
# phase"). Bounded, so memory does not grow with the sample; a lane that falls behind renders again.
SHARED_RENDERS = 2048
SHARED_SCORES = 4096
SCORE_MEMO_CHARS = 512  # longer answers rarely repeat, and may be scored in a thread (engine/run/scoring.py)


class PlannedDataset(msgspec.Struct, frozen=True, dict=True):
    """A dataset's sample: raw records, rendered only when a model needs one.

    A resume over finished datasets then renders nothing, and memory holds the
    raw rows rather than every prompt. `ids` and `size` are computed once: a
    sweep reads them per model and per dataset, and a sum over 50,000 records
    each time cost a resume seconds.
    """

    dataset: Dataset
    records: tuple[tuple[str, Any], ...]

    @property
    def id(self) -> str:
        return self.dataset.id

    @cached_property
    def ids(self) -> list[str]:
        return [item_id for item_id, _ in self.records]

    @cached_property
    def size(self) -> int:
        return sum(self.dataset.samples_of(item_id) for item_id, _ in self.records)

    @cached_property
    def _renders(self) -> dict[tuple[str, int, int | None], Item]:
        return {}

    @cached_property
    def _scores(self) -> dict[tuple[int, str, str | None], tuple[Item, Scored]]:
        return {}

    def rendered(self, item_id: str, raw: Any, sample: int, budget: int | None) -> Item:
        """`render`, shared by the models' lanes (the last SHARED_RENDERS items)."""
        cache = self._renders
        key = (item_id, sample, budget)
        item = cache.get(key)
        if item is None:
            item = render(self.dataset, item_id, raw, sample, budget)
            if len(cache) >= SHARED_RENDERS:
                del cache[next(iter(cache))]  # the oldest: dicts keep their insertion order
            cache[key] = item
        return item

    def score(self, item: Item, text: str, finish_reason: str | None) -> Scored:
        """The dataset's score of an answer, the same answer to the same rendered item scored once
        (scorers are pure functions of the item and the answer); a scorer's exception is not kept."""
        if len(text) > SCORE_MEMO_CHARS:
            return self.dataset.score(item, text, finish_reason=finish_reason)
        cache = self._scores
        key = (id(item), text, finish_reason)
        hit = cache.get(key)
        if hit is not None and hit[0] is item:  # the item itself is held: its id is not reused meanwhile
            return hit[1]
        scored = self.dataset.score(item, text, finish_reason=finish_reason)
        if len(cache) >= SHARED_SCORES:
            del cache[next(iter(cache))]
        cache[key] = (item, scored)
        return scored

    @property
    def items(self) -> Iterator[Item]:
        """Every sampled item, rendered now (for estimates and tools; lanes render lazily)."""
        return (self.dataset.render(i, raw) for i, raw in self.records)


class Work(msgspec.Struct, frozen=True):
    """One call to make: an item of a dataset, for one sample."""

    planned: PlannedDataset
    item: Item
    sample: int


def render(ds: Dataset, item_id: str, raw: Any, sample: int, budget: int | None = None) -> Item:
    """The prompt of one sample, fitted to a prompt budget (benchmark.context)."""
    item = ds.render_sample(item_id, raw, sample) if sample else ds.render(item_id, raw)
    return fitted(ds, item_id, raw, item, budget)


def pending_work(planned: list[PlannedDataset], done_count: Callable[[str], int],
         done_keys: Callable[[str], set[tuple[str, int]]],
         prompt_tokens: dict[str, int | None] | None = None) -> Iterator[Work]:
    """A model's pending work, dataset by dataset.

    A dataset whose planned items are all done is skipped without reading its
    keys; a partly done one (an interrupted run) loads its done keys once.
    ``prompt_tokens``: the model's prompt budget per dataset (missing: unlimited); longer
    items are shortened by datasets that can (``fit``), else sent as they are.
    """
    for p in planned:
        n_done = done_count(p.id)
        if n_done >= p.size:
            continue
        done = done_keys(p.id) if n_done else set()
        budget = (prompt_tokens or {}).get(p.id)
        samples_of, rendered = p.dataset.samples_of, p.rendered
        for item_id, raw in p.records:
            n = samples_of(item_id)
            if n == 1:  # most items: no list of pending samples to build (a lane's generator is on the hot path)
                if (item_id, 0) not in done:
                    yield Work(p, rendered(item_id, raw, 0, budget), 0)
                continue
            pending = [s for s in range(n) if (item_id, s) not in done]
            if pending:
                item = p.rendered(item_id, raw, 0, budget)
                for s in pending:
                    yield Work(p, item if s == 0 else p.rendered(item_id, raw, s, budget), s)

"""Planning: load and sample each dataset once, then stream each model's pending work.

Nothing here materialises models x items: a dataset's sampled items are held
once and shared by every model; each model's lane walks them lazily, skipping
what the store says is done.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import msgspec

from benchmark import registry
from benchmark.context import fitted
from benchmark.dataset import DataMissing, Dataset, Item, stable_hash
from benchmark.sampling import seeded_sample
from engine.errors import UserError


class PlannedDataset(msgspec.Struct, frozen=True):
    """A dataset's sample: raw records, rendered only when a model needs one.

    A resume over finished datasets then renders nothing, and memory holds the
    raw rows rather than every prompt.
    """

    dataset: Dataset
    records: tuple[tuple[str, Any], ...]

    @property
    def id(self) -> str:
        return self.dataset.id

    @property
    def ids(self) -> list[str]:
        return [item_id for item_id, _ in self.records]

    @property
    def size(self) -> int:
        return sum(self.dataset.samples_of(item_id) for item_id, _ in self.records)

    @property
    def items(self) -> Iterator[Item]:
        """Every sampled item, rendered now (for estimates and tools; lanes render lazily)."""
        return (self.dataset.render(i, raw) for i, raw in self.records)


class Work(msgspec.Struct, frozen=True):
    """One call to make: an item of a dataset, for one sample."""

    planned: PlannedDataset
    item: Item
    sample: int


def resolve_datasets(requested: list[str] | None, suite_ids: tuple[str, ...]) -> tuple[list[Dataset], list[str]]:
    """Adapters for the requested ids (or the suite's); returns (datasets, suite ids skipped)."""
    if requested:
        unknown = [d for d in requested if registry.get(d) is None]
        if unknown:
            raise UserError(
                f"unknown dataset id(s): {', '.join(unknown)} (known: {', '.join(registry.all_ids())})"
            )
        return [registry.get(d) for d in requested], []  # type: ignore[misc]
    found = [registry.get(d) for d in suite_ids]
    skipped = [d for d, ds in zip(suite_ids, found) if ds is None]
    return [ds for ds in found if ds is not None], skipped


@contextmanager
def reading_data(ds: Dataset, data_dir: Path) -> Iterator[None]:
    """Missing or unreadable data files inside the block: a UserError naming the dataset and folder."""
    try:
        yield
    except DataMissing as e:
        raise UserError(f"dataset {ds.id}: {e} (fetch it with: python -m engine data pull --datasets {ds.id} --data-dir {data_dir})") from None
    except (OSError, ValueError) as e:
        raise UserError(f"dataset {ds.id}: cannot read its data under {data_dir}: {e}") from None


def load_dataset(ds: Dataset, data_dir: Path, limit: int | None, seed: int) -> PlannedDataset:
    with reading_data(ds, data_dir):
        chosen = seeded_sample(ds.records(data_dir), ds.id, limit, seed)
    if not chosen:
        raise UserError(f"dataset {ds.id}: no items found under {data_dir}")
    return PlannedDataset(dataset=ds, records=tuple(chosen))


def run_stamp(ds: Dataset, generation: dict) -> str:
    """The prompt stamp of a row: the dataset's template and the generation settings used."""
    return stable_hash(ds.prompt_hash(), sorted(generation.items()), length=12)


def render(ds: Dataset, item_id: str, raw: Any, sample: int, budget: int | None = None) -> Item:
    """The prompt of one sample, fitted to a prompt budget (benchmark.context)."""
    item = ds.render_sample(item_id, raw, sample) if sample else ds.render(item_id, raw)
    return fitted(ds, item_id, raw, item, budget)


def lane(planned: list[PlannedDataset], done_count: Callable[[str], int],
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
        for item_id, raw in p.records:
            pending = [s for s in range(p.dataset.samples_of(item_id)) if (item_id, s) not in done]
            if pending:
                item = render(p.dataset, item_id, raw, 0, budget)
                for s in pending:
                    yield Work(p, item if s == 0 else render(p.dataset, item_id, raw, s, budget), s)

"""Where the team's real data is, for the tests that read it (skipped when absent)."""

from __future__ import annotations

import pytest

from benchmark import registry
from benchmark.sampling import seeded_sample
from tests.conftest import DATA_DIR, SHARED

# The team's copy, whose pool sizes the tests pin; another data folder only has to be consistent.
IS_TEAM_COPY = DATA_DIR == SHARED / "datasets"
_cache: dict[str, list] = {}


def need(dataset_id: str) -> None:
    if not (DATA_DIR / dataset_id).is_dir():
        pytest.skip(f"real data for {dataset_id} not found: {DATA_DIR / dataset_id} is absent")


def assert_sample_deterministic(dataset_id: str, recs: list, pool: int | None, data_dir=DATA_DIR) -> list[str]:
    """Ids unique; the 300-item sample is the same whatever the record order and on a fresh read."""
    ds = registry.get(dataset_id)
    if pool is not None and IS_TEAM_COPY:
        assert len(recs) == pool
    assert len({i for i, _ in recs}) == len(recs)
    a = [i for i, _ in seeded_sample(recs, ds.id, 300)]
    assert len(a) == min(300, len(recs))
    assert a == [i for i, _ in seeded_sample(list(reversed(recs)), ds.id, 300)]
    assert a == [i for i, _ in seeded_sample(recs[1::2] + recs[::2], ds.id, 300)]
    assert a == [i for i, _ in seeded_sample(list(ds.records(data_dir)), ds.id, 300)]
    return a


def records(dataset_id: str) -> list:
    """All (item_id, row) pairs of a dataset, read once per test session."""
    need(dataset_id)
    if dataset_id not in _cache:
        _cache[dataset_id] = list(registry.get(dataset_id).records(DATA_DIR))
    return _cache[dataset_id]


def assert_pool_and_declaration(dataset_id: str, recs: list, pool: int | None) -> None:
    """The sample is deterministic (see above), the stamps are set, and one metric is primary."""
    assert_sample_deterministic(dataset_id, recs, pool)
    ds = registry.get(dataset_id)
    assert ds.prompt_hash() and ds.scorer_version
    assert sum(m.primary for m in ds.metrics) == 1

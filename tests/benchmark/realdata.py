"""Where the team's real data is, for the tests that read it (skipped when absent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmark import registry

DATA_DIR = Path(os.environ.get("MOODENGINE_DATA_DIR", "/work/shared/datasets"))
_cache: dict[str, list] = {}


def need(dataset_id: str) -> None:
    if not (DATA_DIR / dataset_id).is_dir():
        pytest.skip(f"real data for {dataset_id} not found: {DATA_DIR / dataset_id} is absent")


def records(dataset_id: str) -> list:
    """All (item_id, row) pairs of a dataset, read once per test session."""
    need(dataset_id)
    if dataset_id not in _cache:
        _cache[dataset_id] = list(registry.get(dataset_id).records(DATA_DIR))
    return _cache[dataset_id]

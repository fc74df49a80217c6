"""Dataset id -> adapter. Adapters register themselves on import."""

from __future__ import annotations

import importlib
import pkgutil
from typing import TypeVar

from benchmark.dataset import Dataset

_DATASETS: dict[str, Dataset] = {}
_loaded = False


DS = TypeVar("DS", bound=Dataset)


def register(dataset: DS) -> DS:
    """The one way a dataset is declared: `register(<adapter>)` at the top level of its module."""
    if dataset.id in _DATASETS:
        raise ValueError(f"dataset id {dataset.id!r} registered twice")
    _DATASETS[dataset.id] = dataset
    return dataset


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    import benchmark.datasets as pkg

    for mod in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"benchmark.datasets.{mod.name}")
    _loaded = True


def get(dataset_id: str) -> Dataset | None:
    # Most ids are declared in the module of their name: importing the ~70 modules (and compiling their
    # patterns) costs a short command 0.1-0.5 s. Any other id, or an unknown one, loads them all.
    if dataset_id not in _DATASETS and not _loaded and dataset_id.isidentifier():
        try:
            importlib.import_module(f"benchmark.datasets.{dataset_id}")
        except ModuleNotFoundError as e:
            if e.name != f"benchmark.datasets.{dataset_id}":
                raise
    if dataset_id not in _DATASETS:
        _load_all()
    return _DATASETS.get(dataset_id)


def all_ids() -> list[str]:
    _load_all()
    return sorted(_DATASETS)

"""Datasets whose items come in two kinds, each asked and scored by its own declaration.

A ``RowSplit`` reads the rows of its ``base`` declaration and hands each row to
``base`` or to ``other`` (``is_other(row)``); ``other``'s items carry
``meta[mark] = True`` so that their answers go back to it for scoring. The two
stamps are made from the parts' stamps, so a change to either part changes them.
AGIEval nests two: single- vs several-answer choice items, then choice vs cloze items.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import msgspec
from msgspec.structs import replace

from benchmark.dataset import (
    Dataset,
    DatasetBase,
    Item,
    MetricSpec,
    Scored,
    stable_hash,
)
from benchmark.loaders import Files


class Part(Protocol):
    """What a split needs of the declaration that asks and scores one kind of row."""

    @property
    def scorer_version(self) -> str: ...

    def prompt_hash(self) -> str: ...

    def render(self, item_id: str, raw: Any) -> Item: ...

    def score(self, item: Item, response: str, *, finish_reason: str | None = None) -> Scored: ...


class RowSplit(DatasetBase, msgspec.Struct, frozen=True, kw_only=True):
    base: Dataset  # reads the files; asks and scores the rows `is_other` refuses
    other: Part  # asks and scores the rows `is_other` accepts
    is_other: Callable[[dict], bool]
    mark: str  # item.meta key set on `other`'s items
    metrics: tuple[MetricSpec, ...]
    max_tokens: int  # output allowance: enough for either kind
    # (item, the part's Scored) -> the row's Scored; None keeps the part's.
    rescore: Callable[[Item, Scored], Scored] | None = None
    tags: tuple[str, str] = ("split", "split")  # prefixes of the prompt hash and the scorer version
    chance_baseline: float | None = None
    majority_baseline: float | None = None

    @property
    def id(self) -> str:
        return self.base.id

    @property
    def language(self) -> str:
        return self.base.language

    @property
    def files(self) -> tuple[Files, ...]:
        return self.base.files

    @property
    def scorer_version(self) -> str:
        parts = (self.base.scorer_version, self.other.scorer_version, self.metrics)
        return f"{self.tags[1]}-{stable_hash(*parts, length=8)}"

    def prompt_hash(self) -> str:
        return stable_hash(self.tags[0], self.base.prompt_hash(), self.other.prompt_hash())

    def records(self, data_dir: Path) -> Iterator[tuple[str, Any]]:
        return self.base.records(data_dir)

    def render(self, item_id: str, raw: Any) -> Item:
        if not self.is_other(raw):
            return self.base.render(item_id, raw)
        item = self.other.render(item_id, raw)
        return replace(item, meta={**item.meta, self.mark: True})

    def score(self, item: Item, response: str, *, finish_reason: str | None = None) -> Scored:
        part = self.other if item.meta.get(self.mark) else self.base
        s = part.score(item, response, finish_reason=finish_reason)
        return s if self.rescore is None else self.rescore(item, s)

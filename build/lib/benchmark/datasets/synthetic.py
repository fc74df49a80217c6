"""`synthetic`: generated multiple-choice items, no files. For engine tests and benchmarks only.

It is in no suite. Its pool is large enough for any benchmark (50,000 items)
so that `--limit` sets the number of items.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

from benchmark.dataset import (
    DatasetBase,
    Item,
    Message,
    MetricSpec,
    Scored,
    stable_hash,
)
from benchmark.registry import register

_ANSWER = re.compile(r"Answer:\s*\(?([A-D])\)?\s*$")
_TEMPLATE = "Question {n}: which option is right?\nA. alpha {n}\nB. beta {n}\nC. gamma {n}\nD. delta {n}\n[[gold:{gold}]]\nReply with `Answer: X`."


class Synthetic(DatasetBase):
    id = "synthetic"
    language = "en"
    scorer_version = "synthetic-1"
    metrics = (MetricSpec(name="accuracy", kind="mean", primary=True),)
    samples = 1
    max_tokens = 16  # "Answer: X"
    pool_size = 50_000

    def prompt_hash(self) -> str:
        return stable_hash(_TEMPLATE)

    def records(self, data_dir: Path) -> Iterator[tuple[str, Any]]:
        for n in range(self.pool_size):
            yield f"s{n:06d}", n

    def render(self, item_id: str, raw: Any) -> Item:
        gold = "ABCD"[raw % 4]
        return Item(id=item_id, messages=(Message("user", _TEMPLATE.format(n=raw, gold=gold)),), gold=gold)

    def score(self, item: Item, response: str, *, finish_reason: str | None = None) -> Scored:
        m = _ANSWER.search(response.strip())
        pred = m.group(1) if m else None
        return Scored(prediction=pred, score=float(pred == item.gold))


register(Synthetic())

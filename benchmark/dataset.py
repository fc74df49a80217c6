"""The dataset seam: what the engine needs from every dataset adapter.

Flow for one dataset: ``records(data_dir)`` streams the whole pool as
(item_id, raw) pairs; ``benchmark.sampling`` keeps a seeded-hash sample of
ids; ``render`` turns each kept raw record into an ``Item`` (prompt + gold);
after the model answers, ``score`` parses the response and scores it (given the
API's finish reason, so a response cut off at the length limit can be read as such).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Iterator, Protocol, runtime_checkable

import msgspec

from benchmark.errors import UserError
from benchmark.metric_kinds import check_spec


class Message(msgspec.Struct, frozen=True):
    role: str  # "system" | "user" | "assistant"
    content: str


class AnswerSpace(msgspec.Struct, frozen=True):
    """The answers a prompt asks for, exactly as the prompt spells them ("A", "B" ...).

    A model configured with `answer_constraint` is held to them by the provider
    (grammar or JSON schema); otherwise it only documents the item.
    """

    values: tuple[str, ...]
    multi: bool = False  # a list of distinct values, in the listed order
    # multi only: a value that is an answer by itself alone ("None of these"); with others it is unparseable.
    alone: str | None = None


class Item(msgspec.Struct, frozen=True):
    """One prompt to send, with what is needed to score its answer."""

    id: str
    messages: tuple[Message, ...]
    gold: Any
    # Anything the scorer needs besides gold (option permutation, category,
    # BBQ context condition ...). JSON-serialisable.
    meta: dict[str, Any] = {}
    answer: AnswerSpace | None = None  # None: free text


class Scored(msgspec.Struct, frozen=True):
    """The outcome of scoring one response."""

    prediction: Any  # None when nothing could be parsed (scores as wrong, counted apart)
    score: float | None
    measures: dict[str, float] | None = None  # named values for non-mean metrics


class MetricSpec(msgspec.Struct, frozen=True):
    """How item rows aggregate into one metric value (see store/schema.sql)."""

    name: str
    kind: str  # a name in benchmark.metric_kinds.KINDS (checked here, at declaration)
    a: str = "score"
    b: str | None = None
    c: str | None = None
    primary: bool = False

    def __post_init__(self) -> None:
        check_spec(self.name, self.kind, self.a, self.b, self.c)


class DataMissing(UserError):
    """A dataset's files are not where the adapter looks; the message names them."""


@runtime_checkable
class Dataset(Protocol):
    id: str
    language: str  # "en" | "zh" | "mixed"
    scorer_version: str
    metrics: tuple[MetricSpec, ...]
    samples: int  # answers per item (1 unless a method needs several)
    max_tokens: int  # output allowance when models.toml sets none (engine/generation.py)

    def prompt_hash(self) -> str: ...

    def records(self, data_dir: Path) -> Iterator[tuple[str, Any]]: ...

    def render(self, item_id: str, raw: Any) -> Item: ...

    # finish_reason: as the API reported it; "length" means the answer was cut off.
    def score(self, item: Item, response: str, *, finish_reason: str | None = None) -> Scored: ...


def stable_hash(*parts: object, length: int = 16) -> str:
    """A short hex digest of the given parts, the same on every machine."""
    h = hashlib.blake2b(digest_size=length // 2)
    for p in parts:
        h.update(repr(p).encode())
        h.update(b"\x00")
    return h.hexdigest()

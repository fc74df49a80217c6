"""The dataset seam: what the engine needs from every dataset adapter.

Flow for one dataset: ``records(data_dir)`` streams the whole pool as
(item_id, raw) pairs; ``benchmark.sampling`` keeps a seeded-hash sample of
ids; ``render`` turns each kept raw record into an ``Item`` (prompt + gold);
after the model answers, ``score`` parses the response and scores it (given the
API's finish reason, so a response cut off at the length limit can be read as such).

The contract is ``Dataset`` (read-only, so frozen declarations satisfy it); ``DatasetBase``
defaults its optional members, so the engine calls every member on every dataset. The types a
declaration names (``Files``, the judge seam's ``Rubric``) live here too, so this module imports
nothing else of the project but the metric kinds. docs/architecture.md has the whole picture.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import (
    Any,
    Callable,
    Generic,
    Iterator,
    Protocol,
    TypeVar,
    runtime_checkable,
)

import msgspec

from benchmark.errors import UserError
from benchmark.metrics.kinds import check_spec


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
    """How item rows aggregate into one metric value (see store/results/schema.sql)."""

    name: str
    kind: str  # a name in benchmark.metrics.kinds.KINDS (checked here, at declaration)
    a: str = "score"
    b: str | None = None
    c: str | None = None
    primary: bool = False

    def __post_init__(self) -> None:
        check_spec(self.name, self.kind, self.a, self.b, self.c)


class Files(msgspec.Struct, frozen=True):
    """One place a dataset's files may be, and how to read them."""

    origin: str  # "original" (under <data_dir>/<id>/) | "reference" (the MoodBench data/ tree)
    pattern: str  # glob relative to that root, e.g. "data/*.jsonl"
    format: str  # "parquet" | "csv" | "tsv" | "jsonl" | "json" (one array of objects) | "lines" (blocks, below)
    columns: tuple[str, ...] = ()  # field names for header-less csv/tsv files
    quoted: bool = True  # False: cells are raw text and '"' is an ordinary character
    label_list: str = ""  # sibling file (same root) listing the label space, one per line
    # Folder under <data_dir> holding the originals when it is not the dataset id
    # (several datasets from one upstream release, e.g. emobench1-3 in emobench/).
    folder: str = ""
    # Leading lines to ignore, with `columns`: a header that cannot be parsed (VUA20's
    # header is space-separated while its rows are tab-separated).
    skip_lines: int = 0
    # Item-id template for rows read from here, instead of the dataset's own: for a copy
    # whose ids cannot match the preferred one's (e.g. "ref/{_row}" for a re-sampled file).
    item_id: str = ""



class Verdict(msgspec.Struct, frozen=True):
    """What a judge's reply (or the lack of an answer to judge) amounts to."""

    status: str  # "ok" | "unparsed" | "refused"
    fields: dict[str, float] | None = None  # named values the rubric's metrics read
    score: float | None = None  # the item's judge score on the rubric's scale
    reason: str | None = None  # the judge's reason (ok), or why the reply was not read


class JudgePrompt(msgspec.Struct, frozen=True):
    messages: tuple[Message, ...]
    truncated: bool = False  # part of the source was cut to fit the judge's context


class Rubric(Protocol):
    # Read-only, so frozen declarations satisfy it.
    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str: ...  # stamped on every judgement; changes when the prompt or the parsing does
    @property
    def max_tokens(self) -> int: ...  # the judge's output allowance
    @property
    def metrics(self) -> tuple[MetricSpec, ...]: ...  # over verdict fields; never primary (the dataset keeps its own)

    def answer(self, response: str | None, prediction: Any) -> str: ...

    def floor(self, item: Item) -> Verdict: ...

    def prompt(self, item: Item, answer: str, budget: int | None) -> JudgePrompt | None: ...

    def parse(self, item: Item, text: str | None) -> Verdict: ...



class DataMissing(UserError):
    """A dataset's files are not where the adapter looks; the message names them."""


@runtime_checkable
class Dataset(Protocol):
    """Everything the engine reads from an adapter; read-only, so frozen declarations satisfy it.

    The optional capabilities (several answers per item, shortening to a token budget, a
    `derive` hook) are members too: `DatasetBase` gives each its default, so the engine calls
    them on every dataset without probing.
    """

    @property
    def id(self) -> str: ...
    @property
    def language(self) -> str: ...  # "en" | "zh" | "mixed"
    @property
    def scorer_version(self) -> str: ...  # stamped on every row; changes when scoring does
    @property
    def metrics(self) -> tuple[MetricSpec, ...]: ...
    @property
    def samples(self) -> int: ...  # answers per item (1 unless a method needs several)
    @property
    def max_tokens(self) -> int: ...  # output allowance when models.toml sets none (engine/run/generation.py)
    # row -> extra fields read by the prompt; its source enters the model identity (engine/sweep/identity.py)
    @property
    def derive(self) -> Callable[[dict], dict] | None: ...
    # Where `records` reads, most preferred first: the one place a dataset's paths are declared
    # (benchmark/sources.toml fetches them; tests/benchmark/test_file_locations.py holds the two together).
    @property
    def files(self) -> tuple[Files, ...]: ...
    @property
    def rubric(self) -> Rubric | None: ...  # how a judge model grades its answers (engine/lanes/judge.py); None: no judge
    # The primary metric (0..1) of a uniform random answer and of always giving the commonest one.
    @property
    def chance_baseline(self) -> float | None: ...
    @property
    def majority_baseline(self) -> float | None: ...

    def prompt_hash(self) -> str: ...  # stamped on every row; changes when the prompt text does

    def records(self, data_dir: Path) -> Iterator[tuple[str, Any]]: ...

    def render(self, item_id: str, raw: Any) -> Item: ...

    # finish_reason: as the API reported it; "length" means the answer was cut off.
    def score(self, item: Item, response: str, *, finish_reason: str | None = None) -> Scored: ...

    def samples_of(self, item_id: str) -> int: ...  # answers wanted for this item

    def render_sample(self, item_id: str, raw: Any, sample: int) -> Item: ...  # the prompt of sample >= 1

    # The item shortened to `budget` prompt tokens (benchmark/context.py); None: it cannot be shortened.
    def fit(self, item_id: str, raw: Any, budget: int) -> Item | None: ...


class DatasetBase:
    """The defaults of `Dataset`'s optional members; every adapter derives from it (first, before
    msgspec.Struct). A declaration's own field or method of the same name replaces the default."""

    @property
    def samples(self) -> int:
        return 1

    @property
    def max_tokens(self) -> int:
        return 256  # an adapter that declares none (the choice and text bases do)

    @property
    def derive(self) -> Callable[[dict], dict] | None:
        return None

    @property
    def files(self) -> tuple[Files, ...]:
        return ()  # made in memory (synthetic)

    @property
    def rubric(self) -> Rubric | None:
        return None

    @property
    def chance_baseline(self) -> float | None:
        return None

    @property
    def majority_baseline(self) -> float | None:
        return None

    def render(self, item_id: str, raw: Any) -> Item:
        raise NotImplementedError

    def samples_of(self, item_id: str) -> int:
        return self.samples

    def render_sample(self, item_id: str, raw: Any, sample: int) -> Item:
        return self.render(item_id, raw)

    def fit(self, item_id: str, raw: Any, budget: int) -> Item | None:
        return None


D = TypeVar("D")
V = TypeVar("V")


class Derived(Generic[D, V]):
    """Values derived once from a frozen declaration, kept beside it rather than written into it.

    Keyed by the declaration object (a strong reference, so its id is never reused while cached);
    a `msgspec.structs.replace` copy is a new declaration and derives its own.
    """

    def __init__(self, build: Callable[[D], V]):
        self._build = build
        self._cache: dict[int, tuple[D, V]] = {}

    def of(self, decl: D) -> V:
        hit = self._cache.get(id(decl))
        if hit is None or hit[0] is not decl:
            hit = (decl, self._build(decl))
            self._cache[id(decl)] = hit
        return hit[1]


def stable_hash(*parts: object, length: int = 16) -> str:
    """A short hex digest of the given parts, the same on every machine."""
    h = hashlib.blake2b(digest_size=length // 2)
    for p in parts:
        h.update(repr(p).encode())
        h.update(b"\x00")
    return h.hexdigest()


# A judge's reply read into a Verdict: what every rubric shares (adapters/judges.py, episodes/rubric.py).

_THINK = re.compile(r"^\s*<think>.*?</think>", re.S | re.I)
_FENCE = re.compile(r"^```(?:json)?\s*\n?(.*?)\n?```$", re.S | re.I)
_REFUSAL = re.compile(
    r"^\W*(?:i'?m sorry|i am sorry|sorry,|i can(?:not|'t|’t)|i won'?t|i will not|i'?m (?:not able|unable)|"
    r"i am (?:not able|unable)|as an ai\b|抱歉|对不起|我无法|我不能)",
    re.I,
)


def without_think(text: str | None) -> str:
    """A reply less a leading <think> block, stripped."""
    return _THINK.sub("", text or "").strip()


def clean_reply(text: str | None) -> str:
    """A reply less a leading <think> block and one fence around the whole of it; nothing more."""
    text = without_think(text)
    m = _FENCE.match(text)
    return m.group(1).strip() if m else text


def refused_or_unparsed(text: str, why: str) -> Verdict:
    if _REFUSAL.match(text):
        return Verdict("refused", reason="the judge declined")
    return Verdict("unparsed", reason=why)


def short(text: str, n: int = 200) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def read_scored(text: str | None, decoder: msgspec.json.Decoder, dimensions: tuple[str, ...]) -> Verdict:
    """A JSON object of 1-5 scores per dimension and a `reason`: the dimensions, their mean as the score."""
    body = clean_reply(text)
    if not body:
        return Verdict("unparsed", reason="empty reply")
    try:
        reply = decoder.decode(body)
    except msgspec.DecodeError as e:
        return refused_or_unparsed(body, f"not the required JSON object: {short(str(e))}")
    fields = {d: float(getattr(reply, d)) for d in dimensions}
    score = sum(fields.values()) / len(fields)
    return Verdict("ok", {**fields, "score": score}, score, reply.reason.strip() or None)

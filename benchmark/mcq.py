"""Choice questions as data: one declaration per dataset, one generic adapter.

A dataset that asks the model to pick one option (or several) is declared as a
``ChoiceDataset``: where its files are, how an item id is built from a row, the
prompt's task sentence and body template, its options (a fixed label list or
per-row fields), where its gold answer is. Rendering, option codes, seeded
option order, answer extraction, scoring and metrics come from here.

Prompt layout (one user message):

    <task>

    <body, formatted with the row's fields>

    A. <option>
    B. <option>

    <answer-format sentence, benchmark/prompts.py>
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterator

import msgspec
from msgspec.structs import force_setattr

from benchmark.dataset import Item, Message, MetricSpec, Scored, stable_hash
from benchmark.extract import EXTRACT_VERSION, Choices, codes_for, extract_multi, extract_single
from benchmark.loaders import Files, locate, read_label_list, read_rows
from benchmark.metrics import f1_from_counts
from benchmark.prompts import instruction

# Bump when render() changes the text it produces for unchanged declarations.
RENDER_VERSION = "1"
# Bump when score() changes for unchanged declarations.
SCORING_VERSION = "1"

MeasuresHook = Callable[[dict, "int | None", bool], dict[str, float]]


def seeded_permutation(dataset_id: str, item_id: str, n: int) -> list[int]:
    """Display order of n options: original indices sorted by a hash of (dataset, item, index).

    Depends on nothing but the ids, so every machine and every model sees the same order.
    """
    keys = [
        (hashlib.blake2b(f"{dataset_id}\x00{item_id}\x00{i}".encode(), digest_size=8).digest(), i)
        for i in range(n)
    ]
    return [i for _, i in sorted(keys)]


def label_key(label: str) -> str:
    """A measures/metric key fragment for a label: lower-case, [a-z0-9_] only."""
    return "".join(c if c.isalnum() and c.isascii() else "_" for c in label.lower()).strip("_")


class ChoiceDataset(msgspec.Struct, frozen=True, kw_only=True):
    """A multiple-choice (or multi-label) dataset, declared as data."""

    id: str
    language: str  # "en" | "zh": picks the answer-format sentence
    files: tuple[Files, ...]  # where the data may be, most preferred first
    item_id: str  # template over a row; also `_stem` (file stem) and `_row` (row number in file)
    task: str  # first paragraph of the prompt
    body: str  # template over the row (str.format_map)
    gold_field: str
    # row value -> original option index: a dict, "index" (int), "letter" ("A" -> 0),
    # or "ids" (comma-separated indices, multi-label)
    gold_map: dict | str = "index"
    labels: tuple[str, ...] = ()  # fixed options, the same for every item ...
    option_fields: tuple[str, ...] = ()  # ... or per-item options from these row fields
    multi: bool = False  # several options may be right
    answer_with: str = "code"  # what the model is asked for: "code" (letter/number) | "name"
    shuffle: bool = False  # seeded option order per item (for skewed gold positions)
    max_tokens: int | None = None  # generation hint; default 32 (single) / 64 (multi)
    metrics: tuple[MetricSpec, ...] = ()  # default: accuracy, or micro F1 & co. for multi
    meta_fields: Callable[[dict], dict] | None = None  # row -> extra item.meta for `measures`
    measures: MeasuresHook | None = None  # single answer: (meta, chosen original index, correct) -> measures
    revision: int = 1  # bump when a hook changes what is shown or scored
    chance_baseline: float | None = None  # primary metric of a uniform random answer
    majority_baseline: float | None = None  # primary metric of always giving the commonest answer
    samples: int = 1
    # Derived in __post_init__.
    scorer_version: str = ""
    _instruction: str = ""
    _prompt_hash: str = ""
    _fixed: Any = None  # Choices shared by all items (fixed labels, not shuffled)
    _label_keys: tuple[str, ...] = ()

    kind: ClassVar[str] = "choice"

    def __post_init__(self) -> None:
        if bool(self.labels) == bool(self.option_fields):
            raise ValueError(f"{self.id}: declare exactly one of labels / option_fields")
        n = len(self.labels or self.option_fields)
        if n < 2:
            raise ValueError(f"{self.id}: a choice question needs at least two options")
        if self.answer_with not in ("code", "name"):
            raise ValueError(f"{self.id}: answer_with must be 'code' or 'name'")
        instr = instruction(self.language, self.multi, self.answer_with, n > 26)
        set_ = lambda name, value: force_setattr(self, name, value)  # noqa: E731
        set_("_instruction", instr)
        if self.max_tokens is None:
            set_("max_tokens", 64 if self.multi else 32)
        if self.labels:
            set_("_label_keys", tuple(label_key(x) for x in self.labels))
            if len(set(self._label_keys)) != n:
                raise ValueError(f"{self.id}: labels collide after key folding: {self._label_keys}")
            if not self.shuffle:
                set_("_fixed", Choices(self.labels))
        if not self.metrics:
            set_("metrics", self._default_metrics())
        set_(
            "_prompt_hash",
            stable_hash(
                "choice", RENDER_VERSION, self.language, self.task, self.body, self.labels,
                self.option_fields, self.multi, self.answer_with, self.shuffle, self.max_tokens,
                instr, self.revision,
            ),
        )
        scoring = stable_hash(self.gold_field, self.gold_map, self.multi, self.answer_with, self.metrics, length=6)
        set_("scorer_version", f"choice-{SCORING_VERSION}.x{EXTRACT_VERSION}.r{self.revision}.{scoring}")

    def _default_metrics(self) -> tuple[MetricSpec, ...]:
        if not self.multi:
            return (MetricSpec("accuracy", "mean", "score", primary=True),)
        out = [
            MetricSpec("micro_f1", "micro_f1", "tp", "fp", "fn", primary=True),
            MetricSpec("example_f1", "mean", "score"),
            MetricSpec("exact_match", "mean", "em"),
        ]
        if self.labels:
            # Per-label F1 rows; macro_f1 averages those present (see store/views.sql).
            out.append(MetricSpec("macro_f1", "macro_f1", "score"))
            out += [MetricSpec(f"f1_{k}", "label_f1", f"tp_{k}", f"fp_{k}", f"fn_{k}") for k in self._label_keys]
        return tuple(out)

    # ------------------------------------------------------------ Dataset protocol

    def prompt_hash(self) -> str:
        return self._prompt_hash

    def records(self, data_dir: Path) -> Iterator[tuple[str, Any]]:
        where, root, paths = locate(self.files, Path(data_dir), self.id)
        if where.label_list:
            self._check_label_list(root / where.label_list)
        for path in paths:
            for n, row in read_rows(where, path):
                row["_stem"], row["_row"] = path.stem, n
                try:
                    item_id = self.item_id.format_map(row)
                except (KeyError, IndexError) as e:
                    raise ValueError(f"{path} row {n}: no field {e} to build the item id") from None
                yield item_id, row

    def render(self, item_id: str, raw: Any) -> Item:
        options = self.labels or tuple(self._option_text(item_id, raw, f) for f in self.option_fields)
        gold = self._gold(item_id, raw, len(options))
        perm = seeded_permutation(self.id, item_id, len(options)) if self.shuffle else None
        shown = [options[i] for i in perm] if perm else list(options)
        at = {orig: pos for pos, orig in enumerate(perm)} if perm else None
        if self.multi:
            g: Any = sorted(at[i] for i in gold) if at else sorted(gold)
        else:
            g = at[gold] if at else gold
        codes = codes_for(len(shown))
        try:
            body = self.body.format_map(raw)
        except (KeyError, IndexError) as e:
            raise ValueError(f"{self.id} item {item_id}: no field {e} for the prompt body") from None
        content = "\n\n".join(
            (self.task, body, "\n".join(f"{c}. {t}" for c, t in zip(codes, shown)), self._instruction)
        )
        meta: dict[str, Any] = {"g": g}
        if perm:
            meta["perm"] = perm
        if self._fixed is None:
            meta["options"] = shown
        if self.meta_fields:
            meta.update(self.meta_fields(raw))
        answer = [self._say(i, codes, shown) for i in g] if self.multi else self._say(g, codes, shown)
        return Item(id=item_id, messages=(Message("user", content),), gold=answer, meta=meta)

    def score(self, item: Item, response: str) -> Scored:
        meta = item.meta
        choices = self._fixed or Choices(meta["options"])
        shown = self.labels if self._fixed is not None else meta["options"]
        if self.multi:
            return self._score_multi(meta, choices, shown, response)
        i = extract_single(response, choices)
        correct = i is not None and i == meta["g"]
        measures = None
        if self.measures is not None:
            perm = meta.get("perm")
            measures = self.measures(meta, perm[i] if perm and i is not None else i, correct)
        pred = None if i is None else self._say(i, choices.codes, shown)
        return Scored(prediction=pred, score=1.0 if correct else 0.0, measures=measures)

    # ------------------------------------------------------------ helpers

    def _score_multi(self, meta: dict, choices: Choices, shown: Any, response: str) -> Scored:
        got = extract_multi(response, choices)
        p = got or frozenset()
        g = frozenset(meta["g"])
        tp, fp, fn = len(p & g), len(p - g), len(g - p)
        m = {"tp": float(tp), "fp": float(fp), "fn": float(fn), "em": float(got is not None and p == g)}
        if self.labels:
            perm = meta.get("perm")
            for i in p | g:
                k = self._label_keys[perm[i] if perm else i]
                m[f"tp_{k}"] = float(i in p and i in g)
                m[f"fp_{k}"] = float(i in p and i not in g)
                m[f"fn_{k}"] = float(i in g and i not in p)
        pred = None if got is None else [self._say(i, choices.codes, shown) for i in sorted(got)]
        return Scored(prediction=pred, score=f1_from_counts(tp, fp, fn), measures=m)

    def _say(self, i: int, codes: tuple[str, ...], shown: Any) -> str:
        """An answer in the vocabulary the prompt asks for (code or option text)."""
        return shown[i] if self.answer_with == "name" else codes[i]

    def _option_text(self, item_id: str, raw: dict, field: str) -> str:
        value = raw.get(field)
        text = " ".join(str(value).split()) if value is not None else ""
        if not text:
            raise ValueError(f"{self.id} item {item_id}: option field {field!r} is empty")
        return text

    def _gold(self, item_id: str, raw: dict, n: int) -> Any:
        if self.gold_field not in raw:
            raise ValueError(f"{self.id} item {item_id}: no gold field {self.gold_field!r}")
        v = raw[self.gold_field]
        gm = self.gold_map
        try:
            if isinstance(gm, dict):
                g: Any = gm[v]
            elif gm == "index":
                g = int(v)
            elif gm == "letter":
                g = "ABCDEFGHIJKLMNOPQRSTUVWXYZ".index(str(v).strip().upper())
            elif gm == "ids":
                g = frozenset(int(x) for x in str(v).split(","))
            else:
                raise ValueError(f"unknown gold_map {gm!r}")
        except (KeyError, ValueError) as e:
            raise ValueError(f"{self.id} item {item_id}: gold {v!r} is not valid ({e})") from None
        bad = [x for x in (g if isinstance(g, frozenset) else (g,)) if not 0 <= x < n]
        if bad or (self.multi != isinstance(g, frozenset)) or g == frozenset():
            raise ValueError(f"{self.id} item {item_id}: gold {v!r} does not name an option")
        return g

    def _check_label_list(self, path: Path) -> None:
        if not path.is_file():
            raise ValueError(f"{self.id}: label list {path} is missing")
        found = read_label_list(path)
        if found != self.labels:
            raise ValueError(f"{self.id}: {path} lists {found}, the adapter expects {self.labels}")

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

    <answer-format sentence, benchmark/adapters/prompts.py>
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator

import msgspec

from benchmark.dataset import (
    AnswerSpace,
    DataMissing,
    DatasetBase,
    Derived,
    Item,
    Message,
    MetricSpec,
    Scored,
    stable_hash,
)
from benchmark.extract.choice import (
    EXTRACT_VERSION,
    Choices,
    codes_for,
    extract_multi,
    extract_single,
)
from benchmark.loaders import Files, locate, read_label_list, read_rows
from benchmark.metrics.item import f1_from_counts
from benchmark.adapters.choice_measures import MeasuresHook, label_key
from benchmark.adapters.prompts import instruction

# Bump when render() changes the text it produces for unchanged declarations.
RENDER_VERSION = "1"
# Bump when score() changes for unchanged declarations.
SCORING_VERSION = "1"

@lru_cache(maxsize=4096)
def _choices(options: tuple[str, ...]) -> Choices:
    """Per-item option lookups, cached: every model's answer to an item reuses them."""
    return Choices(options)


def seeded_permutation(dataset_id: str, item_id: str, n: int) -> list[int]:
    """Display order of n options: original indices sorted by a hash of (dataset, item, index).

    Depends on nothing but the ids, so every machine and every model sees the same order.
    """
    keys = [
        (hashlib.blake2b(f"{dataset_id}\x00{item_id}\x00{i}".encode(), digest_size=8).digest(), i)
        for i in range(n)
    ]
    return [i for _, i in sorted(keys)]


class ChoiceDataset(DatasetBase, msgspec.Struct, frozen=True, kw_only=True):
    """A multiple-choice (or multi-label) dataset, declared as data.

    What follows from the declaration (the answer sentence, option lookups, default metrics and
    output allowance, the two stamps) is derived once by `_derive` and kept beside it (`derived`).
    """

    id: str
    language: str  # "en" | "zh": picks the answer-format sentence
    files: tuple[Files, ...]  # where the data may be, most preferred first
    item_id: str  # template over a row; also `_stem` (file stem) and `_row` (row number in file)
    task: str | dict[str, str]  # first paragraph of the prompt (per language with `language_field`)
    body: str | dict[str, str]  # template over the row (str.format_map; per language with `language_field`)
    gold_field: str
    # row value -> original option index: a dict, "index" (int), "letter" ("A" -> 0),
    # "ids" (comma-separated indices, multi-label), or "text" (the right option's text)
    gold_map: dict | str = "index"
    labels: tuple[str, ...] = ()  # fixed options, the same for every item ...
    option_fields: tuple[str, ...] = ()  # ... or per-item options from these row fields
    multi: bool = False  # several options may be right
    answer_with: str = "code"  # what the model is asked for: "code" (letter/number) | "name"
    shuffle: bool = False  # seeded option order per item (for skewed gold positions)
    output_tokens: int | None = None  # output allowance (`max_tokens`); default 32 (single) / 64 (multi)
    metric_specs: tuple[MetricSpec, ...] = ()  # the `metrics`; default accuracy, or micro F1 & co. for multi
    meta_fields: Callable[[dict], dict] | None = None  # row -> extra item.meta for `measures`
    measures: MeasuresHook | None = None  # single answer: (meta, chosen original index, correct) -> measures
    revision: int = 1  # bump when a hook changes what is shown or scored: enters both stamps
    chance_baseline: float | None = None  # primary metric of a uniform random answer
    majority_baseline: float | None = None  # primary metric of always giving the commonest answer
    samples: int = 1
    # Optional, all off by default (added for the emotional datasets):
    options_field: str = ""  # per-item options from ONE row field holding a list (any length 2..26)
    derive: Callable[[dict], dict] | None = None  # row -> extra fields, merged before anything is read from it
    # Bilingual datasets: the row field naming the item's language; `task` and `body` are then
    # dicts language -> text and the answer sentence follows the item's language.
    language_field: str = ""
    none_option: str = ""  # multi: a last option "none of these", the answer when the gold set is empty
    jaccard: bool = False  # multi: also record the item's Jaccard index |P&G|/|P|G| as measure `jac`
    # Row filter applied while streaming the pool (before ids and sampling): rows it returns
    # False for are left out, e.g. items without a gold label. Document every exclusion.
    keep: Callable[[dict], bool] | None = None

    def __post_init__(self) -> None:
        _DERIVED.of(self)  # checks the declaration now, at import, rather than at the first item

    @property
    def derived(self) -> ChoiceDerived:
        return _DERIVED.of(self)

    @property
    def metrics(self) -> tuple[MetricSpec, ...]:
        return self.derived.metrics

    @property
    def max_tokens(self) -> int:
        return self.derived.max_tokens

    @property
    def scorer_version(self) -> str:
        return self.derived.scorer_version

    def scoring_extra(self) -> str:
        """A suffix of the scorer stamp for scoring data a subclass adds (benchmark/adapters/questionnaire.py)."""
        return ""

    # ------------------------------------------------------------ Dataset protocol

    def prompt_hash(self) -> str:
        return self.derived.prompt_hash

    def records(self, data_dir: Path) -> Iterator[tuple[str, Any]]:
        where, root, paths = locate(self.files, Path(data_dir), self.id)
        if where.label_list:
            self._check_label_list(root / where.label_list)
        for path in paths:
            for n, row in read_rows(where, path):
                row["_stem"], row["_row"] = path.stem, n
                if self.keep is not None and not self.keep(row):
                    continue
                try:
                    item_id = (where.item_id or self.item_id).format_map(row)
                except (KeyError, IndexError) as e:
                    raise ValueError(f"{path} row {n}: no field {e} to build the item id") from None
                yield item_id, row

    def render(self, item_id: str, raw: Any) -> Item:
        if self.derive is not None:
            raw = {**raw, **self.derive(raw)}
        if self.options_field:
            options = self._list_options(item_id, raw)
        else:
            options = self.labels or tuple(self._option_text(item_id, raw, f) for f in self.option_fields)
        gold = self._gold(item_id, raw, len(options), options)
        perm = seeded_permutation(self.id, item_id, len(options)) if self.shuffle else None
        shown = [options[i] for i in perm] if perm else list(options)
        at = {orig: pos for pos, orig in enumerate(perm)} if perm else None
        if self.multi:
            g: Any = sorted(at[i] for i in gold) if at else sorted(gold)
        else:
            g = at[gold] if at else gold
        if self.none_option:
            shown.append(self.none_option)  # always last, never shuffled
            if perm:
                perm = perm + [len(options)]
        codes = codes_for(len(shown))
        derived = self.derived
        lang: str = ""  # with `language_field`: the item's language
        instr = derived.instruction
        if derived.instructions is not None:
            lang = raw.get(self.language_field)
            if lang not in derived.instructions:
                raise ValueError(f"{self.id} item {item_id}: language {lang!r} has no prompt")
            instr = derived.instructions[lang]
        # Per language exactly when `language_field` is set (checked by _derive).
        task = self.task if isinstance(self.task, str) else self.task[lang]
        body_t = self.body if isinstance(self.body, str) else self.body[lang]
        try:
            body = body_t.format_map(raw)
        except (KeyError, IndexError) as e:
            raise ValueError(f"{self.id} item {item_id}: no field {e} for the prompt body") from None
        content = "\n\n".join((task, body, "\n".join(f"{c}. {t}" for c, t in zip(codes, shown)), instr))
        meta: dict[str, Any] = {"g": g}
        if perm:
            meta["perm"] = perm
        if derived.fixed is None:
            meta["options"] = shown
        if self.meta_fields:
            meta.update(self.meta_fields(raw))
        answer = [self._say(i, codes, shown) for i in g] if self.multi else self._say(g, codes, shown)
        if self.multi and not g:
            answer = [self._say(len(shown) - 1, codes, shown)]  # the none option
        values = tuple(shown) if self.answer_with == "name" else codes
        space = AnswerSpace(values=values, multi=self.multi,
                            alone=values[-1] if self.multi and self.none_option else None)
        return Item(id=item_id, messages=(Message("user", content),), gold=answer, meta=meta, answer=space)

    def score(self, item: Item, response: str, *, finish_reason: str | None = None) -> Scored:
        meta = item.meta
        fixed = self.derived.fixed
        choices = fixed or _choices(tuple(meta["options"]))
        shown = self.derived.fixed_shown if fixed is not None else meta["options"]
        if self.multi:
            return self._score_multi(meta, choices, shown, response, finish_reason)
        i = extract_single(response, choices, finish_reason=finish_reason)
        correct = i is not None and i == meta["g"]
        measures = None
        if self.measures is not None:
            perm = meta.get("perm")
            measures = self.measures(meta, perm[i] if perm and i is not None else i, correct)
        pred = None if i is None else self._say(i, choices.codes, shown)
        return Scored(prediction=pred, score=1.0 if correct else 0.0, measures=measures)

    # ------------------------------------------------------------ helpers

    def _score_multi(self, meta: dict, choices: Choices, shown: Any, response: str,
                     finish_reason: str | None = None) -> Scored:
        got = extract_multi(response, choices, finish_reason=finish_reason)
        none = len(shown) - 1 if self.none_option else None
        if got is not None and none in got:
            # "None of these" is an empty answer; together with labels it contradicts itself.
            got = frozenset() if len(got) == 1 else None
        p = got or frozenset()
        g = frozenset(meta["g"])
        tp, fp, fn = len(p & g), len(p - g), len(g - p)
        m = {"tp": float(tp), "fp": float(fp), "fn": float(fn), "em": float(got is not None and p == g)}
        both_empty = got is not None and not p and not g  # only possible with none_option
        if self.jaccard:
            m["jac"] = 1.0 if both_empty else tp / (tp + fp + fn) if tp else 0.0
        label_keys = self.derived.label_keys
        if label_keys:
            perm = meta.get("perm")
            for i in p | g:
                k = label_keys[perm[i] if perm else i]
                m[f"tp_{k}"] = float(i in p and i in g)
                m[f"fp_{k}"] = float(i in p and i not in g)
                m[f"fn_{k}"] = float(i in g and i not in p)
        pred = None if got is None else [self._say(i, choices.codes, shown) for i in sorted(got)]
        if got is not None and not got and none is not None:
            pred = [self._say(none, choices.codes, shown)]
        return Scored(prediction=pred, score=1.0 if both_empty else f1_from_counts(tp, fp, fn), measures=m)

    def _say(self, i: int, codes: tuple[str, ...], shown: Any) -> str:
        """An answer in the vocabulary the prompt asks for (code or option text)."""
        return shown[i] if self.answer_with == "name" else codes[i]

    def _option_text(self, item_id: str, raw: dict, field: str) -> str:
        value = raw.get(field)
        text = " ".join(str(value).split()) if value is not None else ""
        if not text:
            raise ValueError(f"{self.id} item {item_id}: option field {field!r} is empty")
        return text

    def _list_options(self, item_id: str, raw: dict) -> tuple[str, ...]:
        value = raw.get(self.options_field)
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"{self.id} item {item_id}: field {self.options_field!r} is not a list of options")
        opts = tuple(" ".join(str(x).split()) for x in value)
        if not 2 <= len(opts) <= 26 or not all(opts):
            raise ValueError(f"{self.id} item {item_id}: {self.options_field!r} needs 2-26 non-empty options")
        return opts

    def _gold(self, item_id: str, raw: dict, n: int, options: tuple[str, ...] = ()) -> Any:
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
                g = frozenset(int(x) for x in str(v).split(",") if x.strip())
            elif gm == "text":  # the gold is the text of the right option
                hits = [i for i, t in enumerate(options) if t == " ".join(str(v).split())]
                if len(hits) != 1:
                    raise ValueError(f"{len(hits)} options have this text")
                g = hits[0]
            else:
                raise ValueError(f"unknown gold_map {gm!r}")
        except (KeyError, ValueError) as e:
            raise ValueError(f"{self.id} item {item_id}: gold {v!r} is not valid ({e})") from None
        bad = [x for x in (g if isinstance(g, frozenset) else (g,)) if not 0 <= x < n]
        if bad or (self.multi != isinstance(g, frozenset)) or (g == frozenset() and not self.none_option):
            raise ValueError(f"{self.id} item {item_id}: gold {v!r} does not name an option")
        return g

    def _check_label_list(self, path: Path) -> None:
        if not path.is_file():
            raise DataMissing(f"{self.id}: label list {path} is missing")
        found = read_label_list(path)
        if found != self.labels:
            raise ValueError(f"{self.id}: {path} lists {found}, the adapter expects {self.labels}")


class ChoiceDerived(msgspec.Struct, frozen=True):
    """What a `ChoiceDataset` declaration implies, computed once (`_derive`)."""

    instruction: str  # the answer sentence (with `language_field`: all of them, for the prompt hash)
    instructions: dict[str, str] | None  # language -> answer sentence (with `language_field`)
    max_tokens: int
    fixed_shown: tuple[str, ...]  # the fixed options as shown (labels, plus `none_option`); () if per item
    fixed: Choices | None  # their lookups, shared by all items
    label_keys: tuple[str, ...]  # multi with labels: per-label measure keys
    metrics: tuple[MetricSpec, ...]
    prompt_hash: str
    scorer_version: str


def _derive(d: ChoiceDataset) -> ChoiceDerived:
    """Check a declaration and derive its values; the one place its stamps are made."""
    if sum(map(bool, (d.labels, d.option_fields, d.options_field))) != 1:
        raise ValueError(f"{d.id}: declare exactly one of labels / option_fields / options_field")
    # A list field's length is per item (checked at render, at most 26).
    n = len(d.labels or d.option_fields) if not d.options_field else 2
    if n < 2:
        raise ValueError(f"{d.id}: a choice question needs at least two options")
    if d.answer_with not in ("code", "name"):
        raise ValueError(f"{d.id}: answer_with must be 'code' or 'name'")
    if (d.none_option or d.jaccard) and not d.multi:
        raise ValueError(f"{d.id}: none_option and jaccard are for multi-label datasets")
    n_shown = n + bool(d.none_option)
    instructions = None
    if d.language_field:
        langs = d.task.keys() if isinstance(d.task, dict) else ()
        if not langs or not isinstance(d.body, dict) or set(d.body) != set(langs):
            raise ValueError(f"{d.id}: with language_field, task and body map the same languages to text")
        instructions = {k: instruction(k, d.multi, d.answer_with, n_shown > 26) for k in langs}
        instr = " | ".join(f"{k}: {v}" for k, v in sorted(instructions.items()))  # for the prompt hash
    else:
        instr = instruction(d.language, d.multi, d.answer_with, n_shown > 26)
    max_tokens = d.output_tokens if d.output_tokens is not None else 64 if d.multi else 32
    fixed_shown = d.labels + ((d.none_option,) if d.none_option else ()) if d.labels and not d.shuffle else ()
    label_keys: tuple[str, ...] = ()
    if d.labels and d.multi:
        # Per-label measure keys; labels without ASCII letters (Chinese) get their position.
        label_keys = tuple(label_key(x) or f"label{i}" for i, x in enumerate(d.labels))
        if len(set(label_keys)) != n:
            raise ValueError(f"{d.id}: labels collide after key folding: {label_keys}")
    metrics = d.metric_specs or _default_metrics(d.multi, label_keys)
    # The optional fields enter the stamps only when set, so older declarations keep theirs.
    extra = (d.options_field, d.language_field, d.none_option)
    prompt_hash = stable_hash(
        "choice", RENDER_VERSION, d.language, d.task, d.body, d.labels, d.option_fields, d.multi,
        d.answer_with, d.shuffle, max_tokens, instr, d.revision, *((extra,) if any(extra) else ()),
    )
    extra_s = (d.none_option, d.jaccard)
    scoring = stable_hash(d.gold_field, d.gold_map, d.multi, d.answer_with, metrics,
                          *((extra_s,) if any(extra_s) else ()), length=6)
    scorer_version = f"choice-{SCORING_VERSION}.x{EXTRACT_VERSION}.r{d.revision}.{scoring}{d.scoring_extra()}"
    return ChoiceDerived(instruction=instr, instructions=instructions, max_tokens=max_tokens,
                         fixed_shown=fixed_shown, fixed=Choices(fixed_shown) if fixed_shown else None,
                         label_keys=label_keys, metrics=metrics, prompt_hash=prompt_hash,
                         scorer_version=scorer_version)


def _default_metrics(multi: bool, label_keys: tuple[str, ...]) -> tuple[MetricSpec, ...]:
    if not multi:
        return (MetricSpec("accuracy", "mean", "score", primary=True),)
    out = [
        MetricSpec("micro_f1", "micro_f1", "tp", "fp", "fn", primary=True),
        MetricSpec("example_f1", "mean", "score"),
        MetricSpec("exact_match", "mean", "em"),
    ]
    if label_keys:
        # Per-label F1 rows; macro_f1 averages those present (see store/hierarchy/views.sql).
        out.append(MetricSpec("macro_f1", "macro_f1", "score"))
        out += [MetricSpec(f"f1_{k}", "label_f1", f"tp_{k}", f"fp_{k}", f"fn_{k}") for k in label_keys]
    return tuple(out)


_DERIVED: Derived[ChoiceDataset, ChoiceDerived] = Derived(_derive)

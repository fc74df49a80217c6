"""Template YAMLs (CompactBench's DSL, schema `template-v1.json`) as typed values.

A template holds `{{placeholders}}`; `generate.generate_case` realises it for a
seed. Loading checks the structure (msgspec) and then what structure alone
cannot: declared variables, known generators, distinct keys.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal, TypeGuard

import msgspec
import msgspec.yaml

from benchmark.errors import UserError
from benchmark.compactbench.generators import GENERATORS, ITEM_TYPES

Difficulty = Literal["easy", "medium", "hard", "elite"]
DIFFICULTIES: tuple[str, ...] = ("easy", "medium", "hard", "elite")


def is_difficulty(name: str) -> TypeGuard[Difficulty]:
    return name in DIFFICULTIES

TemplateRole = Literal["user", "assistant", "system", "distractor_block"]

_Name = Annotated[str, msgspec.Meta(min_length=1, pattern=r"^[a-zA-Z_]\w*$")]
_DIFFICULTY_REFS = frozenset({"difficulty.distractor_turns", "difficulty.paraphrase_depth",
                              "difficulty.override_timing"})
_REF = re.compile(r"\{\{\s*([\w.]+)\s*\}\}")


class TemplateError(UserError):
    """A template file cannot be used; the message names the file and the field."""


class _Struct(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Base of the template structs; each subclass repeats `frozen=True`, which msgspec inherits
    but a type checker (dataclass_transform) does not."""


class DifficultyPolicy(_Struct, frozen=True):
    distractor_turns: dict[Difficulty, Annotated[int, msgspec.Meta(ge=0)]] = {}
    paraphrase_depth: dict[Difficulty, Annotated[int, msgspec.Meta(ge=0)]] = {}
    override_timing: dict[Difficulty, str] = {}


class Variable(_Struct, frozen=True):
    name: _Name
    generator: Annotated[str, msgspec.Meta(min_length=1)]


class TurnTemplate(_Struct, frozen=True):
    role: TemplateRole
    template: str | None = None
    tags: tuple[str, ...] = ()
    count: str | int | None = None


class TranscriptTemplate(_Struct, frozen=True):
    turns: tuple[TurnTemplate, ...]


class GroundTruthTemplate(_Struct, frozen=True):
    immutable_facts: tuple[str, ...] = ()
    locked_decisions: tuple[str, ...] = ()
    forbidden_behaviors: tuple[str, ...] = ()
    unresolved_items: tuple[str, ...] = ()
    deferred_items: tuple[str, ...] = ()
    entity_map: dict[str, str] = {}


class ItemTemplate(_Struct, frozen=True):
    key: _Name
    type: Annotated[str, msgspec.Meta(min_length=1)]
    prompt: Annotated[str, msgspec.Meta(min_length=1)]
    expected: dict[str, Any]


class Template(_Struct, frozen=True, kw_only=True):
    key: Annotated[str, msgspec.Meta(min_length=1, pattern=r"^[a-zA-Z_][\w-]*$")]
    family: _Name
    version: Annotated[str, msgspec.Meta(pattern=r"^\d+\.\d+\.\d+$")]
    difficulty_policy: DifficultyPolicy
    variables: tuple[Variable, ...] = ()
    transcript: TranscriptTemplate
    ground_truth: GroundTruthTemplate
    evaluation_items: Annotated[tuple[ItemTemplate, ...], msgspec.Meta(min_length=1)]


class _File(_Struct, frozen=True):
    template: Template


def references(text: str) -> list[str]:
    """Every `{{ref}}` name in `text`, in order."""
    return _REF.findall(text)


def load_template(path: Path) -> Template:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise TemplateError(f"cannot read template {path}: {e.strerror}") from None
    try:
        template = msgspec.yaml.decode(raw, type=_File).template
    except msgspec.ValidationError as e:
        raise TemplateError(f"{path}: {e}") from None
    except msgspec.DecodeError as e:
        raise TemplateError(f"{path}: invalid YAML: {e}") from None
    _validate(path, template)
    return template


def _validate(path: Path, t: Template) -> None:
    names = [v.name for v in t.variables]
    if dup := {n for n in names if names.count(n) > 1}:
        raise TemplateError(f"{path}: duplicate variable name(s) {sorted(dup)}")
    for v in t.variables:
        if v.generator not in GENERATORS:
            raise TemplateError(f"{path}: variable {v.name!r}: unknown generator {v.generator!r} "
                                f"(known: {', '.join(sorted(GENERATORS))})")
    keys = [i.key for i in t.evaluation_items]
    if dup := {k for k in keys if keys.count(k) > 1}:
        raise TemplateError(f"{path}: duplicate evaluation item key(s) {sorted(dup)}")
    for item in t.evaluation_items:
        if item.type not in ITEM_TYPES:
            raise TemplateError(f"{path}: evaluation item {item.key!r}: unknown type {item.type!r}")
    for i, turn in enumerate(t.transcript.turns):
        if turn.role == "distractor_block":
            if turn.count is None:
                raise TemplateError(f"{path}: transcript.turns[{i}]: distractor_block needs `count`")
        elif not turn.template:
            raise TemplateError(f"{path}: transcript.turns[{i}]: role {turn.role!r} needs a `template`")
    declared = set(names)
    for where, text in _strings(t):
        for ref in references(text):
            if ref.startswith("difficulty."):
                if ref not in _DIFFICULTY_REFS:
                    raise TemplateError(f"{path}: {where}: unknown reference {{{{{ref}}}}}")
            elif ref not in declared:
                raise TemplateError(f"{path}: {where}: undeclared variable {{{{{ref}}}}}")


def _strings(t: Template):
    for i, turn in enumerate(t.transcript.turns):
        if turn.template is not None:
            yield f"transcript.turns[{i}].template", turn.template
        if isinstance(turn.count, str):
            yield f"transcript.turns[{i}].count", turn.count
    gt = t.ground_truth
    for field in ("immutable_facts", "locked_decisions", "forbidden_behaviors", "unresolved_items",
                  "deferred_items"):
        for i, s in enumerate(getattr(gt, field)):
            yield f"ground_truth.{field}[{i}]", s
    for k, v in gt.entity_map.items():
        yield f"ground_truth.entity_map[{k!r}]", k
        yield f"ground_truth.entity_map[{k!r}]", v
    for i, item in enumerate(t.evaluation_items):
        yield f"evaluation_items[{i}].prompt", item.prompt
        for k, v in item.expected.items():
            if isinstance(v, str):
                yield f"evaluation_items[{i}].expected.{k}", v


class TemplateSet(msgspec.Struct, frozen=True):
    """The templates of one folder, sorted by file name (as CompactBench loads them): what CompactBench calls
    a suite, named apart from the engine's suites (benchmark/suites/suite.py)."""

    key: str
    templates: tuple[Template, ...]

    @property
    def version(self) -> str:
        """CompactBench's suite version: the templates' common version, else 'mixed'."""
        versions = {t.version for t in self.templates}
        return next(iter(versions)) if len(versions) == 1 else "mixed"


def load_template_set(benchmarks_dir: Path, key: str) -> TemplateSet:
    folder = benchmarks_dir / key
    if not folder.is_dir():
        known = ", ".join(suite_names(benchmarks_dir)) or "none"
        raise TemplateError(f"suite {key!r} not found: no folder {folder} (suites there: {known})")
    suite = TemplateSet(key, tuple(load_template(p) for p in sorted(folder.glob("*.yaml"))))
    if not suite.templates:
        raise TemplateError(f"suite {key!r}: no *.yaml templates in {folder}")
    return suite


def suite_names(benchmarks_dir: Path) -> list[str]:
    return sorted(p.name for p in benchmarks_dir.iterdir() if p.is_dir()) if benchmarks_dir.is_dir() else []


def find_template(benchmarks_dir: Path, key: str) -> tuple[TemplateSet, Template]:
    """The template with `key` in any suite folder (CompactBench's `generate` lookup)."""
    found: dict[str, tuple[TemplateSet, Template]] = {}
    for name in suite_names(benchmarks_dir):
        folder = benchmarks_dir / name
        suite = TemplateSet(name, tuple(load_template(p) for p in sorted(folder.glob("*.yaml"))))
        for t in suite.templates:
            found[t.key] = (suite, t)
    if key not in found:
        raise TemplateError(f"template {key!r} not found under {benchmarks_dir} (known: {', '.join(sorted(found))})")
    return found[key]

"""A generated case: transcript, ground truth, evaluation items.

Field names and order are CompactBench's `GeneratedCase`. Two shapes differ in
one field: the upstream repository (its golden fixtures, the 220 generated
cases) has `ground_truth.deferred_items`; the 0.1.0 wheel's GroundTruth lacks
it (its generator drops deferred items; no public template has any).
"""

from __future__ import annotations

import json
from typing import Any, Literal

import msgspec

Role = Literal["user", "assistant", "system"]


class Turn(msgspec.Struct, frozen=True):
    id: int
    role: Role
    content: str
    tags: tuple[str, ...] = ()


class Transcript(msgspec.Struct, frozen=True):
    turns: tuple[Turn, ...]

    def without_tags(self) -> Transcript:
        """Tags are generation metadata (they mark the answer key): strict mode hides them."""
        return Transcript(tuple(msgspec.structs.replace(t, tags=()) for t in self.turns))

    def extended(self, *turns: Turn) -> Transcript:
        return Transcript(self.turns + turns)


class GroundTruth(msgspec.Struct, frozen=True):
    immutable_facts: tuple[str, ...] = ()
    locked_decisions: tuple[str, ...] = ()
    forbidden_behaviors: tuple[str, ...] = ()
    unresolved_items: tuple[str, ...] = ()
    deferred_items: tuple[str, ...] = ()
    entity_map: dict[str, str] = {}


class EvaluationItem(msgspec.Struct, frozen=True):
    key: str
    item_type: str
    prompt: str
    expected: dict[str, Any]


class GeneratedCase(msgspec.Struct, frozen=True):
    case_id: str
    template_key: str
    template_version: str
    seed: int
    difficulty: str
    transcript: Transcript
    ground_truth: GroundTruth
    evaluation_items: tuple[EvaluationItem, ...]


SHAPES = ("repo", "0.1.0")


def case_json(case: GeneratedCase, *, shape: str = "repo", ascii: bool = False) -> str:
    """The case as JSON text. Indent 2 and UTF-8 kept is what `compactbench generate`
    prints; `ascii=True` escapes like the repository's fixture files."""
    doc = msgspec.to_builtins(case)
    if shape == "0.1.0":
        del doc["ground_truth"]["deferred_items"]
    return json.dumps(doc, indent=2, ensure_ascii=ascii)


def case_from_json(text: str | bytes) -> GeneratedCase:
    return msgspec.json.decode(text, type=GeneratedCase)

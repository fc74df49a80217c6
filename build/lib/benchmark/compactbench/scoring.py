"""Item scoring, as CompactBench 0.1.0 scores (`scoring/checks.py`, `scorer.py`,
`contradictions.py`). Aggregation to cycle, case and run scores is SQL
(store/side/compactbench.sql) so that it can be re-read without re-asking a model.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from benchmark.errors import UserError
from benchmark.compactbench.cases import EvaluationItem, GroundTruth
from benchmark.compactbench.modes import Mode

SCORER_VERSION = "1.0.0"  # CompactBench's; a change in weights or checks is a bump

WEIGHTS: dict[str, float] = {
    "locked_decision_retention": 3.0,
    "forbidden_behavior_retention": 3.0,
    "immutable_fact_recall": 2.0,
    "unresolved_task_continuity": 2.0,
    "entity_integrity": 1.0,
    "planning_soundness": 1.0,
}
# Items whose right answer names the locked or forbidden thing.
RECALL_TYPES = frozenset({"forbidden_behavior_retention", "locked_decision_retention"})

_WS = re.compile(r"\s+")


class ScoringError(UserError):
    """An item's `expected` spec cannot be checked."""


def normalize(text: str) -> str:
    """Lowercase, collapse whitespace: the only tolerance the checks allow."""
    return _WS.sub(" ", text.strip().lower())


def _value(spec: dict[str, Any], check: str) -> str:
    value = spec.get("value", "")
    if not isinstance(value, str):
        raise ScoringError(f"{check!r} requires 'value' to be a string")
    return value


def run_check(spec: dict[str, Any], response: str, normalized: str | None = None) -> float:
    """The item's score in [0, 1]; `normalized` is `normalize(response)` when the caller has it."""
    check = spec.get("check")
    if not check:
        raise ScoringError("expected spec is missing a 'check' key")
    if check in ("contains_normalized", "forbidden_absent"):
        value = _value(spec, check)
        if not value:
            return 1.0
        found = normalize(value) in (normalized if normalized is not None else normalize(response))
        return 1.0 if found == (check == "contains_normalized") else 0.0
    if check == "exact":
        return 1.0 if _value(spec, check).strip() == response.strip() else 0.0
    if check == "set_match":
        values = spec.get("values", [])
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise ScoringError("'set_match' requires 'values' to be a list of strings")
        if not values:
            return 1.0
        norm = normalized if normalized is not None else normalize(response)
        return sum(1 for v in values if normalize(v) in norm) / len(values)
    raise ScoringError(f"unknown check type {check!r}. Known: ['contains_normalized', 'forbidden_absent', "
                       "'exact', 'set_match']")


class ItemScore(msgspec.Struct, frozen=True):
    score: float
    weight: float
    check: str
    violates: bool  # counts in the contradiction numerator
    counted: bool  # counts in the contradiction denominator


def score_item(item: EvaluationItem, response: str, truth: GroundTruth, mode: Mode) -> ItemScore:
    """Score one response (already stripped, as CompactBench strips it)."""
    norm = normalize(response)  # once: responses can be long and are searched several times
    score = run_check(item.expected, response, norm)
    weight = WEIGHTS.get(item.item_type, 1.0)
    check = str(item.expected.get("check", "unknown"))
    if mode.contradiction == "non_recall_items":
        counted = item.item_type not in RECALL_TYPES
        violates = counted and _names_forbidden(norm, truth.forbidden_behaviors)
    else:
        # Methodology: over every response. A response violates when it names a
        # forbidden behaviour, unless the item asks it to name one.
        counted = True
        exempt = check == "contains_normalized" and normalize(str(item.expected.get("value", ""))) in {
            normalize(f) for f in truth.forbidden_behaviors}
        violates = not exempt and _names_forbidden(norm, truth.forbidden_behaviors)
    return ItemScore(score, weight, check, violates, counted)


def _names_forbidden(normalized: str, forbidden: tuple[str, ...]) -> bool:
    return any(normalize(f) in normalized for f in forbidden)

"""The value generators a template's variables name, and the evaluation item types it may use.

Apart from generate.py so that templates.py can validate a template against them without importing
the generator that needs templates (no import cycle).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from benchmark.compactbench import lexicons

ITEM_TYPES = frozenset({
    "locked_decision_retention", "forbidden_behavior_retention", "immutable_fact_recall",
    "unresolved_task_continuity", "entity_integrity", "planning_soundness",
})


def _lexicon(words: tuple[str, ...]) -> Callable[[random.Random], str]:
    return lambda rng: rng.choice(words)


def _date_iso(rng: random.Random) -> str:
    year, month, day = rng.randint(2024, 2026), rng.randint(1, 12), rng.randint(1, 28)
    return f"{year:04d}-{month:02d}-{day:02d}"


def _amount_usd(rng: random.Random) -> str:
    magnitude = rng.choice((2, 3, 4, 5))
    return f"${rng.randint(10 ** (magnitude - 1), 10 ** magnitude - 1):,}"


def _product_sku(rng: random.Random) -> str:
    prefix = rng.choice(("SKU", "PRD", "ITEM", "ART"))
    alpha = "".join(rng.choices("ABCDEFGHJKLMNPQRTUVWXYZ", k=2))
    return f"{prefix}-{alpha}{rng.randint(100, 9999)}"


# Each generator draws from its own Random(sub_seed); the order of draws inside
# one is part of the contract.
GENERATORS: dict[str, Callable[[random.Random], str]] = {
    "person_name": _lexicon(lexicons.PERSON_NAMES),
    "action_phrase": _lexicon(lexicons.ACTION_PHRASES),
    "project_noun": _lexicon(lexicons.PROJECT_NOUNS),
    "org_name": _lexicon(lexicons.ORG_NAMES),
    "date_iso": _date_iso,
    "amount_usd": _amount_usd,
    "product_sku": _product_sku,
}

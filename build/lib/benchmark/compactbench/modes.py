"""compat and strict, as data: each switch is one place where CompactBench 0.1.0's
code and its methodology page ("Methodology", docs/methodology.md upstream)
disagree. docs/compactbench.md has the same table in prose."""

from __future__ import annotations

from typing import Literal

import msgspec

ModeName = Literal["compat", "strict"]


class Mode(msgspec.Struct, frozen=True, kw_only=True):
    name: ModeName
    # Case seeds: "suite" derives them from "suite@version" (0.1.0: slot N of every
    # template in a suite gets the same seed); "template" from
    # "suite@version/template@version" (the methodology: a case is a function of
    # template version, seed group and slot; also the upstream fix after 0.1.0).
    seed_namespace: Literal["suite", "template"]
    # Draw template variables without same-generator collisions.
    distinct_variables: bool
    # Hide turn tags (`critical_constraint`, `distractor` ...) from the compactor.
    strip_tags: bool
    # In drift cycles the compactor sees only its previous artifact and the new
    # turns (methodology); 0.1.0 hands it the whole extended transcript too.
    incremental: bool
    # Contradiction rate: 0.1.0 skips retention-typed items entirely (numerator
    # and denominator); the methodology divides by every response.
    contradiction: Literal["non_recall_items", "all_responses"]
    # Drift: 0.1.0 takes deltas of penalized cycle scores; the methodology of cycle scores.
    drift_on_penalized: bool
    # Compression: 0.1.0 divides the ORIGINAL case transcript's tokens by the
    # artifact's in every cycle; strict counts every turn the artifact replaces.
    compression_source: Literal["case", "replaced"]
    # Family floor: 0.1.0 applies it only when the run spans >1 family, and
    # takes the family from the template key (minus its _v<N> suffix).
    family_floor_always: bool
    family_from_key: bool
    # Qualification requires every configured slot to be complete (methodology);
    # 0.1.0's qualify() only looks at the cases that completed.
    require_all_slots: bool
    # Structured-state JSON: 0.1.0 keeps what it can; strict rejects a response
    # that is not exactly the schema (and records why).
    strict_state_json: bool


COMPAT = Mode(name="compat", seed_namespace="suite", distinct_variables=False, strip_tags=False,
              incremental=False, contradiction="non_recall_items", drift_on_penalized=True,
              compression_source="case", family_floor_always=False, family_from_key=True, require_all_slots=False,
              strict_state_json=False)
STRICT = Mode(name="strict", seed_namespace="template", distinct_variables=True, strip_tags=True,
              incremental=True, contradiction="all_responses", drift_on_penalized=False,
              compression_source="replaced", family_floor_always=True, family_from_key=False, require_all_slots=True,
              strict_state_json=True)
MODES = {"compat": COMPAT, "strict": STRICT}

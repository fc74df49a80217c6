"""Case generation: template + seed + difficulty -> GeneratedCase, draw for draw
the same as CompactBench 0.1.0 (`engine/`, `dsl/generators.py`).

Every random choice is made by a `random.Random` seeded with a SHA-256-derived
sub-seed, so the same inputs give the same case on any machine.
"""

from __future__ import annotations

import hashlib
import random
import re

from benchmark.compactbench import lexicons
from benchmark.compactbench.cases import EvaluationItem, GeneratedCase, GroundTruth, Transcript, Turn
from benchmark.compactbench.generators import GENERATORS
from benchmark.compactbench.templates import Template, TemplateError, is_difficulty, references


def _sha_seed(payload: str) -> int:
    return int.from_bytes(hashlib.sha256(payload.encode()).digest()[:8], "big")


def derive_case_seed(namespace: str, seed_group: str, case_slot: int) -> int:
    """The seed of a case slot: SHA-256 of "namespace:group:slot", first 8 bytes big-endian."""
    return _sha_seed(f"{namespace}:{seed_group}:{case_slot}")


def derive_seed(base_seed: int, name: str) -> int:
    """A named sub-seed (a variable, a distractor block, a continuation prompt)."""
    return _sha_seed(f"{base_seed}:{name}")


# How many redraws strict mode allows before declaring a lexicon too small.
_MAX_REDRAWS = 1000


def resolve_variables(template: Template, seed: int, *, distinct: bool = False) -> dict[str, str]:
    """Bind every declared variable.

    CompactBench draws each variable independently, so two variables of the
    same generator can get the same value (SOURCE.md: up to ~20% of cases).
    `distinct=True` (strict mode) redraws a collided variable with sub-seeds
    "name#1", "name#2", ...: cases without a collision stay identical.
    """
    out: dict[str, str] = {}
    taken: dict[str, set[str]] = {}
    for var in template.variables:
        gen = GENERATORS[var.generator]
        value = gen(random.Random(derive_seed(seed, var.name)))
        if distinct:
            used = taken.setdefault(var.generator, set())
            k = 0
            while value in used:
                k += 1
                if k > _MAX_REDRAWS:
                    raise TemplateError(f"template {template.key}: generator {var.generator!r} cannot give "
                                        f"{len(used) + 1} distinct values")
                value = gen(random.Random(derive_seed(seed, f"{var.name}#{k}")))
            used.add(value)
        out[var.name] = value
    return out


def difficulty_bindings(template: Template, difficulty: str) -> dict[str, str]:
    policy = template.difficulty_policy
    depth, timing = 0, ""
    if is_difficulty(difficulty):  # the policies are keyed by known difficulties only
        depth, timing = policy.paraphrase_depth.get(difficulty, 0), policy.override_timing.get(difficulty, "")
    out = {
        "difficulty.paraphrase_depth": str(depth),  # no-op in 0.1.0
        "difficulty.override_timing": timing,  # no-op in 0.1.0
    }
    if policy.distractor_turns:
        out["difficulty.distractor_turns"] = str(distractor_count(template, difficulty))
    return out


def distractor_count(template: Template, difficulty: str) -> int:
    levels = template.difficulty_policy.distractor_turns
    if not levels:
        return 0
    if not is_difficulty(difficulty) or difficulty not in levels:
        raise TemplateError(f"template {template.key} has no distractor_turns for difficulty {difficulty!r} "
                            f"(it has: {', '.join(sorted(levels))})")
    return levels[difficulty]


_PLACEHOLDER = re.compile(r"\{\{\s*([\w.]+)\s*\}\}")


def substitute(text: str, bindings: dict[str, str]) -> str:
    def repl(m: re.Match[str]) -> str:
        try:
            return bindings[m.group(1)]
        except KeyError:
            raise TemplateError(f"no binding for {{{{{m.group(1)}}}}}") from None

    return _PLACEHOLDER.sub(repl, text)


def distractor_turns(count: int, first_id: int, seed: int) -> list[Turn]:
    rng = random.Random(seed)
    turns = []
    for i in range(count):
        if i % 2 == 0:
            turns.append(Turn(first_id + i, "user", rng.choice(lexicons.USER_DISTRACTORS), ("distractor",)))
        else:
            turns.append(Turn(first_id + i, "assistant", rng.choice(lexicons.ASSISTANT_DISTRACTORS), ("distractor",)))
    return turns


def _count(template: Template, index: int, count: str | int | None, difficulty: str) -> int:
    if isinstance(count, int):
        if count < 0:
            raise TemplateError(f"template {template.key}: transcript.turns[{index}]: negative count")
        return count
    if count is not None and references(count) == ["difficulty.distractor_turns"]:
        return distractor_count(template, difficulty)
    raise TemplateError(f"template {template.key}: transcript.turns[{index}]: unsupported count {count!r}")


def build_transcript(template: Template, bindings: dict[str, str], seed: int, difficulty: str) -> Transcript:
    turns: list[Turn] = []
    for index, tt in enumerate(template.transcript.turns):
        if tt.role == "distractor_block":
            n = _count(template, index, tt.count, difficulty)
            turns += distractor_turns(n, len(turns), derive_seed(seed, f"distractor_block_{index}"))
        else:
            turns.append(Turn(len(turns), tt.role, substitute(tt.template or "", bindings), tt.tags))
    return Transcript(tuple(turns))


def generate_case(template: Template, seed: int, difficulty: str = "medium", *,
                  distinct: bool = False) -> GeneratedCase:
    """The case of (template, seed, difficulty); `distinct` draws variables without collisions."""
    bindings = resolve_variables(template, seed, distinct=distinct)
    bindings.update(difficulty_bindings(template, difficulty))
    gt = template.ground_truth

    def sub_all(values: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(substitute(v, bindings) for v in values)

    ground_truth = GroundTruth(
        immutable_facts=sub_all(gt.immutable_facts),
        locked_decisions=sub_all(gt.locked_decisions),
        forbidden_behaviors=sub_all(gt.forbidden_behaviors),
        unresolved_items=sub_all(gt.unresolved_items),
        deferred_items=sub_all(gt.deferred_items),
        entity_map={substitute(k, bindings): substitute(v, bindings) for k, v in gt.entity_map.items()},
    )
    items = tuple(
        EvaluationItem(it.key, it.type, substitute(it.prompt, bindings),
                       {k: substitute(v, bindings) if isinstance(v, str) else v for k, v in it.expected.items()})
        for it in template.evaluation_items
    )
    return GeneratedCase(
        case_id=f"{template.key}:s{seed}:d{difficulty}", template_key=template.key,
        template_version=template.version, seed=seed, difficulty=difficulty,
        transcript=build_transcript(template, bindings, seed, difficulty),
        ground_truth=ground_truth, evaluation_items=items,
    )

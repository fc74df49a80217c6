"""Case generation equals CompactBench's: the golden fixtures, the 220 generated cases, and 0.1.0 itself."""

from __future__ import annotations

import json
import random

import pytest

from benchmark.compactbench import lexicons
from benchmark.compactbench.cases import case_json
from benchmark.compactbench.generate import derive_case_seed, generate_case, resolve_variables
from benchmark.compactbench.templates import find_template, load_template_set, load_template
from tests.benchmark.compactbench.conftest import load_generated

STARTERS = ("buried_constraint_starter_v1", "decision_override_starter_v1", "entity_confusion_starter_v1",
            "reference_resolution_starter_v1")


@pytest.mark.parametrize("key", STARTERS)
def test_golden_fixtures_byte_for_byte(benchmarks, key):
    fixture = benchmarks.parents[1] / "tests" / "fixtures" / "cases" / f"{key}_seed42_medium.json"
    _, template = find_template(benchmarks, key)
    case = generate_case(template, 42, "medium")
    assert case_json(case, ascii=True) + "\n" == fixture.read_text(encoding="utf-8")
    assert json.loads(case_json(case)) == json.loads(fixture.read_text(encoding="utf-8"))


def test_all_220_generated_cases(benchmarks, cb_data):
    manifest, cases = load_generated(cb_data)
    assert len(manifest) == 220
    suites = {s: load_template_set(benchmarks, s) for s in {m["suite_key"] for m in manifest}}
    for m in manifest:
        suite = suites[m["suite_key"]]
        template = next(t for t in suite.templates if m["case_id"].startswith(t.key + ":"))
        # The seed too is CompactBench's: derived from the runner's namespace, group and slot.
        assert derive_case_seed(m["seed_namespace"], m["seed_group"], m["case_slot"]) == m["seed"]
        assert m["seed_namespace"] == f"{suite.key}@{suite.version}/{template.key}@{template.version}"
        case = generate_case(template, m["seed"], m["difficulty"])
        assert json.loads(case_json(case)) == cases[m["case_id"]], m["case_id"]


def test_lexicons_are_compactbench_010s(cb):
    from compactbench.dsl import generators
    from compactbench.engine import distractors
    from compactbench.runner import continuation

    assert lexicons.PERSON_NAMES == generators._FIRST_NAMES
    assert lexicons.ACTION_PHRASES == generators._ACTION_PHRASES
    assert lexicons.PROJECT_NOUNS == generators._PROJECT_NOUNS
    assert lexicons.ORG_NAMES == generators._ORG_NAMES
    assert lexicons.USER_DISTRACTORS == distractors._USER_DISTRACTORS
    assert lexicons.ASSISTANT_DISTRACTORS == distractors._ASSISTANT_DISTRACTORS
    assert lexicons.CONTINUATION_PROMPTS == continuation._CONTINUATION_PROMPTS


def _cb_dump(case) -> dict:
    return json.loads(case.model_dump_json())


def test_same_as_compactbench_010_for_any_seed_and_difficulty(cb, benchmarks):
    from compactbench.dsl import DifficultyLevel
    from compactbench.dsl import load_suite as cb_load_suite
    from compactbench.engine import generate_case as cb_generate

    rng = random.Random(7)
    for suite_key in ("starter", "elite_practice"):
        ours = {t.key: t for t in load_template_set(benchmarks, suite_key).templates}
        for cb_template in cb_load_suite(benchmarks / suite_key):
            levels = [d for d in ("easy", "medium", "hard", "elite")
                      if d in ours[cb_template.key].difficulty_policy.distractor_turns]
            for _ in range(6):
                seed, diff = rng.getrandbits(64), rng.choice(levels)
                theirs = cb_generate(cb_template, seed, DifficultyLevel(diff))
                mine = generate_case(ours[cb_template.key], seed, diff)
                # What `compactbench generate` prints: rich's print_json of model_dump_json (indent 2, UTF-8).
                printed = json.dumps(json.loads(theirs.model_dump_json()), indent=2, ensure_ascii=False)
                assert case_json(mine, shape="0.1.0") == printed


SYNTHETIC = """
template:
  key: every_generator_v1
  family: every_generator
  version: 2.1.0
  difficulty_policy:
    distractor_turns: {easy: 1, hard: 7}
    override_timing: {easy: early}
  variables:
    - {name: who, generator: person_name}
    - {name: org, generator: org_name}
    - {name: when, generator: date_iso}
    - {name: cost, generator: amount_usd}
    - {name: sku, generator: product_sku}
    - {name: a, generator: action_phrase}
    - {name: b, generator: action_phrase}
  transcript:
    turns:
      - {role: system, template: "Be brief ({{difficulty.paraphrase_depth}}/{{difficulty.override_timing}})."}
      - {role: user, template: "{{who}} at {{org}} orders {{sku}} for {{cost}} on {{when}}.", tags: [fact, x]}
      - {role: distractor_block, count: "{{ difficulty.distractor_turns }}"}
      - {role: distractor_block, count: 3}
      - {role: assistant, template: "Never {{a}}; prefer {{b}}."}
  ground_truth:
    immutable_facts: ["{{who}} ordered {{sku}}"]
    deferred_items: ["pay {{cost}}"]
    entity_map: {"{{who}}": buyer, "{{org}}": "seller of {{sku}}"}
  evaluation_items:
    - key: q1
      type: immutable_fact_recall
      prompt: "What did {{who}} order?"
      expected: {check: set_match, values: ["{{sku}}", "{{cost}}"], note: 3}
"""


def test_every_generator_and_count_form_match_compactbench(cb, tmp_path):
    from compactbench.dsl import DifficultyLevel, parse_template_string
    from compactbench.engine import generate_case as cb_generate

    path = tmp_path / "t.yaml"
    path.write_text(SYNTHETIC)
    ours, theirs = load_template(path), parse_template_string(SYNTHETIC)
    for seed in (0, 1, 42, 2**64 - 1, 123456789):
        for diff in ("easy", "hard"):
            mine = json.loads(case_json(generate_case(ours, seed, diff)))
            ref = _cb_dump(cb_generate(theirs, seed, DifficultyLevel(diff)))
            # 0.1.0 drops ground_truth.deferred_items; the upstream repo's generator keeps them.
            deferred = mine["ground_truth"].pop("deferred_items")
            assert len(deferred) == 1 and deferred[0].startswith("pay $")
            assert mine == ref


def test_strict_draws_have_no_collisions_and_keep_other_cases(benchmarks, cb_data):
    manifest, _ = load_generated(cb_data)
    suites = {s: load_template_set(benchmarks, s) for s in ("starter", "elite_practice")}
    changed = 0
    for m in manifest:
        template = next(t for t in suites[m["suite_key"]].templates if m["case_id"].startswith(t.key + ":"))
        loose = resolve_variables(template, m["seed"])
        strict = resolve_variables(template, m["seed"], distinct=True)
        by_gen: dict[str, list[str]] = {}
        for v in template.variables:
            by_gen.setdefault(v.generator, []).append(strict[v.name])
        assert all(len(set(vals)) == len(vals) for vals in by_gen.values())
        loose_by_gen: dict[str, list[str]] = {}
        for v in template.variables:
            loose_by_gen.setdefault(v.generator, []).append(loose[v.name])
        if all(len(set(vals)) == len(vals) for vals in loose_by_gen.values()):
            assert strict == loose  # no collision: the same case as compat
        else:
            changed += 1
    assert changed > 0  # the defect is present in the data (SOURCE.md)


def test_documented_collision_is_fixed_in_strict(benchmarks, cb_data):
    _, cases = load_generated(cb_data)
    case_id = "decision_override_v1_2:s6919054810097137998:dmedium"
    c = cases[case_id]
    assert c["ground_truth"]["locked_decisions"][0] in c["ground_truth"]["forbidden_behaviors"]
    _, template = find_template(benchmarks, "decision_override_v1_2")
    strict = generate_case(template, 6919054810097137998, "medium", distinct=True)
    assert not set(strict.ground_truth.locked_decisions) & set(strict.ground_truth.forbidden_behaviors)

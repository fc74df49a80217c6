"""The artifact schema, its rendering and the state parsers, against CompactBench 0.1.0."""

from __future__ import annotations

import json

import msgspec
import pytest

from benchmark.compactbench.artifact import (
    ArtifactError,
    CompactionArtifact,
    StructuredState,
    from_json,
    from_obj,
    parse_state_lenient,
    parse_state_strict,
    render_for_prompt,
    to_json,
)

STATE_TEXTS = [
    '{"immutable_facts": ["a", " b ", "", 3], "locked_decisions": "x", "entity_map": {"Tara": "lead", "k": 1}}',
    '```json\n{"forbidden_behaviors": ["deploy on Fridays"], "unresolved_items": null}\n```',
    "```\n[1, 2]\n```",
    "not json at all",
    '{"deferred_items": ["' + "y" * 600 + '"], "entity_map": ["a"]}',
    json.dumps({"immutable_facts": [f"f{i}" for i in range(250)]}),
    json.dumps({k: [] for k in ("immutable_facts", "locked_decisions", "deferred_items", "forbidden_behaviors",
                                "unresolved_items")} | {"entity_map": {}}),
    "",
    '{"immutable_facts": ["x"], "extra": 1}',
]


@pytest.mark.parametrize("text", STATE_TEXTS)
def test_lenient_parser_is_compactbench_010s(cb, text):
    from compactbench.compactors._state_parser import parse_state

    theirs, their_warnings = parse_state(text)
    mine, my_warnings = parse_state_lenient(text)
    assert json.loads(msgspec.json.encode(mine)) == theirs.model_dump()
    assert my_warnings == their_warnings


def test_strict_parser_wants_exactly_the_schema():
    full = {k: [] for k in ("immutable_facts", "locked_decisions", "deferred_items", "forbidden_behaviors",
                            "unresolved_items")} | {"entity_map": {"Tara": "lead"}}
    state, error = parse_state_strict("```json\n" + json.dumps(full) + "\n```")
    assert error is None and state.entity_map == {"Tara": "lead"}
    for bad in ({**full, "extra": []}, {k: v for k, v in full.items() if k != "entity_map"},
                {**full, "immutable_facts": [1]}, {**full, "immutable_facts": [""]}):
        state, error = parse_state_strict(json.dumps(bad))
        assert error and state == StructuredState()
    assert parse_state_strict("nope")[1].startswith("structured state rejected")


def _artifacts():
    yield CompactionArtifact()
    yield CompactionArtifact(summary_text="Tara leads the auth rewrite.")
    yield CompactionArtifact(structured_state=StructuredState(
        immutable_facts=("primary_subject: Tara",), locked_decisions=("use feature flags",),
        deferred_items=("docs",), forbidden_behaviors=("deploy on Fridays",), unresolved_items=("owner?",),
        entity_map={"Tara": "primary_subject", "Bob": "reviewer"}))
    yield CompactionArtifact(summary_text="S", structured_state=StructuredState(entity_map={"A": "b"}),
                             selected_source_turn_ids=(0, 1), warnings=("w",), method_metadata={"k": [1]})


def test_render_and_tokens_are_compactbench_010s(cb, tiktoken_cl100k):
    from compactbench.contracts import CompactionArtifact as CbArtifact
    from compactbench.runner.evaluation import render_artifact_for_prompt
    from compactbench.scoring import artifact_tokens as cb_tokens

    from benchmark.compactbench.tokens import artifact_tokens

    for a in _artifacts():
        doc = json.loads(to_json(a))
        theirs = CbArtifact.model_validate({"schemaVersion": doc["schema_version"], "summaryText": doc["summary_text"],
                                            "structured_state": doc["structured_state"],
                                            "selectedSourceTurnIds": doc["selected_source_turn_ids"],
                                            "warnings": doc["warnings"], "methodMetadata": doc["method_metadata"]})
        assert render_for_prompt(a) == render_artifact_for_prompt(theirs)
        assert artifact_tokens(a) == cb_tokens(theirs)
        # Our JSON is the field-named dump CompactBench writes (model_dump_json).
        assert doc == json.loads(theirs.model_dump_json())


def test_from_obj_takes_both_spellings_and_enforces_limits():
    a = from_obj({"summaryText": "x", "selectedSourceTurnIds": [1], "methodMetadata": {"m": 1}})
    assert a.summary_text == "x" and a.selected_source_turn_ids == (1,) and a.method_metadata == {"m": 1}
    assert from_obj({"summary_text": "x"}) == CompactionArtifact(summary_text="x")
    assert from_json(to_json(a)) == a
    for bad in ({"summary_text": "x" * 8001}, {"structured_state": {"immutable_facts": [""]}},
                {"structured_state": {"immutable_facts": ["x"] * 201}}, {"bogus": 1}, "text"):
        with pytest.raises(ArtifactError):
            from_obj(bad)
    with pytest.raises(ArtifactError):  # a built instance is re-validated
        from_obj(CompactionArtifact(warnings=("w" * 501,)))

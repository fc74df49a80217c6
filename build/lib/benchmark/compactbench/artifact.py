"""The CompactionArtifact (CompactBench's schema 1.0.0) and how the target model sees it.

Field names are CompactBench's; `from_obj` also takes its camelCase aliases
(summaryText, selectedSourceTurnIds, methodMetadata, schemaVersion), which is
what its pydantic model accepts on input.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import msgspec

from benchmark.errors import UserError

SCHEMA_VERSION = "1.0.0"
_MAX_ITEMS, _MAX_CHARS, _SUMMARY_CHARS = 200, 500, 8000

_Entry = Annotated[str, msgspec.Meta(min_length=1, max_length=_MAX_CHARS)]
_Section = Annotated[tuple[_Entry, ...], msgspec.Meta(max_length=_MAX_ITEMS)]
LIST_SECTIONS = ("immutable_facts", "locked_decisions", "deferred_items", "forbidden_behaviors", "unresolved_items")


class ArtifactError(UserError):
    """A compactor returned something that is not a valid CompactionArtifact."""


class StructuredState(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    immutable_facts: _Section = ()
    locked_decisions: _Section = ()
    deferred_items: _Section = ()
    forbidden_behaviors: _Section = ()
    entity_map: dict[str, _Entry] = {}
    unresolved_items: _Section = ()


class CompactionArtifact(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    schema_version: str = SCHEMA_VERSION
    summary_text: Annotated[str, msgspec.Meta(max_length=_SUMMARY_CHARS)] = ""
    structured_state: StructuredState = StructuredState()
    selected_source_turn_ids: tuple[int, ...] = ()
    warnings: Annotated[tuple[_Entry, ...], msgspec.Meta(max_length=50)] = ()
    method_metadata: dict[str, Any] = {}


_ALIASES = {"schemaVersion": "schema_version", "summaryText": "summary_text",
            "selectedSourceTurnIds": "selected_source_turn_ids", "methodMetadata": "method_metadata"}


def from_obj(obj: Any) -> CompactionArtifact:
    """Validate what a compactor returned: an artifact, or a mapping in either spelling."""
    if isinstance(obj, CompactionArtifact):
        obj = msgspec.to_builtins(obj)  # re-check the limits: a plugin may build one unvalidated
    elif hasattr(obj, "model_dump"):  # a CompactBench (pydantic) artifact
        obj = obj.model_dump()
    if not isinstance(obj, dict):
        raise ArtifactError(f"compactor returned {type(obj).__name__}, not a CompactionArtifact")
    obj = {_ALIASES.get(k, k): v for k, v in obj.items()}
    try:
        return msgspec.convert(obj, CompactionArtifact)
    except msgspec.ValidationError as e:
        raise ArtifactError(f"invalid CompactionArtifact: {e}") from None


def to_json(artifact: CompactionArtifact) -> str:
    return msgspec.json.encode(artifact).decode()


def from_json(text: str | bytes) -> CompactionArtifact:
    return msgspec.json.decode(text, type=CompactionArtifact)


# --------------------------------------------------------------------------- rendering

def render_for_prompt(artifact: CompactionArtifact) -> str:
    """The artifact as the target model reads it (CompactBench's render_artifact_for_prompt)."""
    blocks = []
    if artifact.summary_text:
        blocks.append(f"SUMMARY:\n{artifact.summary_text}")
    state = _render_state(artifact.structured_state)
    if state:
        blocks.append("STRUCTURED STATE:\n" + state)
    return "\n\n".join(blocks) if blocks else "(no summary or structured state)"


_STATE_LABELS = (("Immutable facts", "immutable_facts"), ("Locked decisions", "locked_decisions"),
                 ("Forbidden behaviors (NEVER do)", "forbidden_behaviors"), ("Deferred items", "deferred_items"),
                 ("Unresolved items", "unresolved_items"))


def _render_state(state: StructuredState) -> str:
    sections = []
    for label, field in _STATE_LABELS:
        items = getattr(state, field)
        if items:
            sections.append(f"{label}:\n" + "\n".join(f"- {s}" for s in items))
    if state.entity_map:
        sections.append("Entity roles:\n" + "\n".join(f"- {k}: {v}" for k, v in state.entity_map.items()))
    return "\n\n".join(sections)


# --------------------------------------------------------------------------- parsing model JSON

def strip_code_fences(text: str) -> str:
    """Remove a ```json fence around a model's JSON, as CompactBench does."""
    stripped = text.strip()
    if not stripped.startswith("```"):
        return stripped
    body = stripped[3:]
    if body.lower().startswith("json"):
        body = body[4:]
    if "\n" in body:
        body = body.split("\n", 1)[1]
    if body.rstrip().endswith("```"):
        body = body.rstrip()[:-3]
    return body.strip()


def parse_state_lenient(text: str) -> tuple[StructuredState, list[str]]:
    """CompactBench 0.1.0's parser (compat): keep what is usable, warn about the rest."""
    warnings: list[str] = []
    try:
        data = json.loads(strip_code_fences(text))
    except json.JSONDecodeError as e:
        return StructuredState(), [f"response was not valid JSON: {e}"]
    if not isinstance(data, dict):
        return StructuredState(), [f"expected JSON object, got {type(data).__name__}; treating as empty state"]
    sections: dict[str, Any] = {name: _clean_list(data.get(name), name, warnings) for name in LIST_SECTIONS}
    sections["entity_map"] = _clean_map(data.get("entity_map"), warnings)
    return msgspec.convert(sections, StructuredState), warnings


def _clean_list(value: Any, name: str, warnings: list[str]) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        warnings.append(f"{name!r} was not a list (got {type(value).__name__}); dropping")
        return []
    out: list[str] = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            warnings.append(f"{name}[{i}] was not a string (got {type(item).__name__}); skipping")
            continue
        item = item.strip()
        if not item:
            continue
        if len(item) > _MAX_CHARS:
            warnings.append(f"{name}[{i}] exceeded {_MAX_CHARS} chars; truncating")
            item = item[:_MAX_CHARS]
        out.append(item)
        if len(out) >= _MAX_ITEMS:
            warnings.append(f"{name} exceeded {_MAX_ITEMS} items; dropping the rest")
            break
    return out


def _clean_map(value: Any, warnings: list[str]) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        warnings.append(f"'entity_map' was not a mapping (got {type(value).__name__}); dropping")
        return {}
    out: dict[str, str] = {}
    for k, v in value.items():
        if not isinstance(k, str) or not isinstance(v, str):
            warnings.append(f"entity_map entry {k!r}={v!r} is not string-to-string; skipping")
            continue
        k, v = k.strip(), v.strip()
        if k and v:
            out[k[:_MAX_CHARS]] = v[:_MAX_CHARS]
    return out


class _StrictState(StructuredState, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Every section required, as the schema says ("missing keys are rejected")."""

    immutable_facts: _Section
    locked_decisions: _Section
    deferred_items: _Section
    forbidden_behaviors: _Section
    entity_map: dict[str, _Entry]
    unresolved_items: _Section


def parse_state_strict(text: str) -> tuple[StructuredState, str | None]:
    """Strict mode: the JSON must be exactly a StructuredState. Returns (state, error)."""
    try:
        s = msgspec.json.decode(strip_code_fences(text), type=_StrictState)
    except (msgspec.ValidationError, msgspec.DecodeError) as e:
        return StructuredState(), f"structured state rejected: {e}"
    return StructuredState(**msgspec.structs.asdict(s)), None

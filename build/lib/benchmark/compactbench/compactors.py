"""The compactor seam and the built-in baselines.

A compactor turns a transcript (and its own previous artifact, in drift
cycles) into a CompactionArtifact. Model calls go through `ctx.llm`, which the
engine binds to a models.toml entry: its rate limits, retries and error
classes apply, and a failed call fails the step (stored as an error, retried
on resume) instead of producing a half-made artifact.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import msgspec

from benchmark.compactbench import prompts
from benchmark.compactbench.artifact import (
    CompactionArtifact,
    parse_state_lenient,
    parse_state_strict,
)
from benchmark.compactbench.cases import Transcript, Turn
from benchmark.compactbench.modes import Mode

_SUMMARY_CAP = 8000  # CompactionArtifact.summary_text's limit


class LLM(Protocol):
    """A model a compactor may call (one user message in, text out)."""

    name: str

    async def complete(self, prompt: str, *, json_object: bool = False) -> str: ...


@runtime_checkable
class Compactor(Protocol):
    """What a plugin implements (`module:Class` or `file.py:Class`).

    The class is built as `Class(ctx)` (or `Class()` if it takes no argument),
    once per (target model, case). `compact` gets the turns to compact: in
    compat mode the whole transcript so far, in strict mode only the turns
    added since `previous_artifact` (and never turn tags).
    """

    async def compact(self, transcript: Transcript,
                      previous_artifact: CompactionArtifact | None) -> CompactionArtifact: ...


class CompactorContext(msgspec.Struct, frozen=True, kw_only=True):
    mode: Mode
    llm: Any = None  # an LLM, or None for compactors without a model
    options: dict[str, Any] = {}


# --------------------------------------------------------------------------- baselines without a model

def _render_plain(turns: tuple[Turn, ...] | list[Turn]) -> str:
    return "\n".join(f"{t.role}: {t.content}" for t in turns)


def _new_turns(transcript: Transcript, previous: CompactionArtifact | None) -> tuple[Turn, ...]:
    """Turns the previous artifact does not already stand for.

    In compat mode the transcript repeats earlier turns; in strict mode it is
    only new ones. Filtering on `selected_source_turn_ids` makes the baselines
    give the same artifact in both.
    """
    if previous is None:
        return transcript.turns
    seen = set(previous.selected_source_turn_ids)
    return tuple(t for t in transcript.turns if t.id not in seen)


def _capped(text: str) -> tuple[str, tuple[str, ...]]:
    if len(text) <= _SUMMARY_CAP:
        return text, ()
    return text[:_SUMMARY_CAP], (f"text exceeded the {_SUMMARY_CAP}-character summary cap and was cut",)


class FullTranscript:
    """No compaction: the artifact is the transcript itself (the upper-bound control)."""

    name, version = "full-transcript", "1.0.0"

    def __init__(self, ctx: CompactorContext):
        pass

    async def compact(self, transcript: Transcript, previous_artifact: CompactionArtifact | None) -> CompactionArtifact:
        new = _new_turns(transcript, previous_artifact)
        parts = [previous_artifact.summary_text] if previous_artifact and previous_artifact.summary_text else []
        if new:
            parts.append(_render_plain(new))
        text, warnings = _capped("\n".join(parts))
        ids = (previous_artifact.selected_source_turn_ids if previous_artifact else ()) + tuple(t.id for t in new)
        return CompactionArtifact(summary_text=text, selected_source_turn_ids=ids, warnings=warnings,
                                  method_metadata={"method": self.name, "version": self.version})


class TruncateLastN:
    """Keep the last `n` turns verbatim (option `n`, default 10)."""

    name, version = "truncate-last-n", "1.0.0"

    def __init__(self, ctx: CompactorContext):
        self.n = int(ctx.options.get("n", 10))
        if self.n < 1:
            raise ValueError("truncate-last-n: option n must be >= 1")

    async def compact(self, transcript: Transcript, previous_artifact: CompactionArtifact | None) -> CompactionArtifact:
        # The kept turns ride along in method_metadata so that strict mode (new
        # turns only) can still keep the last n of the whole conversation.
        earlier = previous_artifact.method_metadata.get("kept", ()) if previous_artifact else ()
        kept = [Turn(i, r, c) for i, r, c in earlier]
        kept += _new_turns(transcript, previous_artifact)
        kept = kept[-self.n:]
        text, warnings = _capped(_render_plain(kept))
        ids = (previous_artifact.selected_source_turn_ids if previous_artifact else ()) + tuple(
            t.id for t in _new_turns(transcript, previous_artifact))
        return CompactionArtifact(summary_text=text, selected_source_turn_ids=ids, warnings=warnings,
                                  method_metadata={"method": self.name, "version": self.version, "n": self.n,
                                                   "kept": [[t.id, t.role, t.content] for t in kept]})


# --------------------------------------------------------------------------- LLM baselines

class _WithModel:
    def __init__(self, ctx: CompactorContext):
        if ctx.llm is None:
            raise ValueError(f"{self.name}: needs a model")  # type: ignore[attr-defined]
        self.llm: LLM = ctx.llm
        self.mode = ctx.mode

    def _update(self, previous: CompactionArtifact | None) -> bool:
        return self.mode.incremental and previous is not None

    def _meta(self, **extra: Any) -> dict[str, Any]:
        return {"method": self.name, "version": self.version,  # type: ignore[attr-defined]
                "model": self.llm.name, **extra}


class NaiveSummary(_WithModel):
    """One call, prose only (CompactBench's `naive-summary`)."""

    name, version = "naive-summary", "1.0.0"

    async def compact(self, transcript: Transcript, previous_artifact: CompactionArtifact | None) -> CompactionArtifact:
        if self._update(previous_artifact):
            assert previous_artifact is not None
            prompt = prompts.NAIVE_SUMMARY_UPDATE.format(previous=previous_artifact.summary_text or "(empty)",
                                                         transcript=prompts.render_turns(transcript.turns))
        else:
            prompt = prompts.NAIVE_SUMMARY.format(transcript=prompts.render_turns(transcript.turns))
        text, warnings = _capped((await self.llm.complete(prompt)).strip())
        return CompactionArtifact(summary_text=text, warnings=warnings, method_metadata=self._meta(calls=1),
                                  selected_source_turn_ids=_ids(transcript, previous_artifact, self.mode))


class StructuredStateExtraction(_WithModel):
    """One JSON-mode call into structured_state, no prose (CompactBench's `structured-state`).

    compat parses as 0.1.0 does (keeps what it can); strict rejects anything
    that is not exactly the schema. Either way a failure is recorded in
    `warnings` and `method_metadata.parse_ok`, and the artifact is empty.
    """

    name, version = "structured-state", "1.0.0"

    async def compact(self, transcript: Transcript, previous_artifact: CompactionArtifact | None) -> CompactionArtifact:
        if self._update(previous_artifact):
            assert previous_artifact is not None
            previous = msgspec.json.encode(previous_artifact.structured_state).decode()
            prompt = prompts.STRUCTURED_STATE_UPDATE.format(previous=previous,
                                                            transcript=prompts.render_turns(transcript.turns))
        else:
            prompt = prompts.STRUCTURED_STATE.format(transcript=prompts.render_turns(transcript.turns))
        text = await self.llm.complete(prompt, json_object=True)
        if self.mode.strict_state_json:
            state, error = parse_state_strict(text)
            warnings = [error] if error else []
            ok = error is None
        else:
            state, warnings = parse_state_lenient(text)
            ok = not any(w.startswith(("response was not valid JSON", "expected JSON object")) for w in warnings)
        return CompactionArtifact(summary_text="", structured_state=state,
                                  selected_source_turn_ids=_ids(transcript, previous_artifact, self.mode),
                                  warnings=tuple(w[:500] for w in warnings[:50]),
                                  method_metadata=self._meta(calls=1, parse_ok=ok))


def _ids(transcript: Transcript, previous: CompactionArtifact | None, mode: Mode) -> tuple[int, ...]:
    """0.1.0 lists the turns it was given; in strict mode those are only the new ones."""
    ids = tuple(t.id for t in transcript.turns)
    if mode.incremental and previous is not None:
        return previous.selected_source_turn_ids + ids
    return ids


BUILT_INS: dict[str, type] = {
    "full-transcript": FullTranscript,
    "truncate-last-n": TruncateLastN,
    "naive-summary": NaiveSummary,
    "structured-state": StructuredStateExtraction,
}

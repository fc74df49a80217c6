"""Every prompt text, in one place. The compat ones are CompactBench 0.1.0's
verbatim (runner/evaluation.py, runner/continuation.py, compactors/*.py); each
is sent as a single user message, as 0.1.0's providers send it.

`prompts_hash()` stamps result rows: changing any text here changes the stamp.
"""

from __future__ import annotations

import hashlib

from benchmark.compactbench.cases import Turn

EVALUATION = (
    "You have the following summary of a prior conversation:\n\n"
    "{context}\n\n"
    "Based only on this summary, answer the following question concisely.\n\n"
    "QUESTION: {question}\n\n"
    "ANSWER:"
)

CONTINUATION = (
    "You have the following summary of a prior conversation:\n\n"
    "{context}\n\n"
    "The user now says:\n\n"
    "USER: {user}\n\n"
    "Respond as the assistant. Your response will be treated as the next "
    "assistant turn in the ongoing conversation.\n\n"
    "ASSISTANT:"
)

NAIVE_SUMMARY = (
    "Summarize the following conversation in under 500 words. "
    "Preserve all constraints, decisions, unresolved tasks, and anything the "
    "user said must never happen.\n\n"
    "CONVERSATION:\n{transcript}\n\n"
    "SUMMARY:"
)

# The state's fields, as both structured-state prompts list them.
_STATE_FIELDS = (
    "Required fields (all must be present; use empty arrays or an empty object "
    "when none apply):\n"
    "- immutable_facts: array of strings — facts that must not change\n"
    "- locked_decisions: array of strings — decisions the user committed to\n"
    "- deferred_items: array of strings — items explicitly postponed\n"
    "- forbidden_behaviors: array of strings — things the assistant must never do\n"
    "- entity_map: object mapping entity names to a role label\n"
    "- unresolved_items: array of strings — open tasks or questions\n\n"
)

STRUCTURED_STATE = (
    "Extract a strict JSON object summarizing the current state of this "
    "conversation. Return ONLY the JSON, no prose or markdown fencing.\n\n"
    + _STATE_FIELDS
    + "CONVERSATION:\n{transcript}\n\n"
    "JSON:"
)

# Strict mode, drift cycles: the compactor updates its own previous artifact
# from the new turns only (the methodology's "called again with only the
# previous artifact as context").
NAIVE_SUMMARY_UPDATE = (
    "Here is a summary of a conversation so far, followed by the turns that came "
    "after it. Write an updated summary of the whole conversation in under 500 "
    "words. Preserve all constraints, decisions, unresolved tasks, and anything "
    "the user said must never happen.\n\n"
    "SUMMARY SO FAR:\n{previous}\n\n"
    "NEW TURNS:\n{transcript}\n\n"
    "UPDATED SUMMARY:"
)

STRUCTURED_STATE_UPDATE = (
    "Here is the state of a conversation so far as a JSON object, followed by the "
    "turns that came after it. Return the updated state as a strict JSON object "
    "with the same fields, keeping every earlier entry that still holds. Return "
    "ONLY the JSON, no prose or markdown fencing.\n\n"
    + _STATE_FIELDS
    + "STATE SO FAR:\n{previous}\n\n"
    "NEW TURNS:\n{transcript}\n\n"
    "JSON:"
)

# A structured-state request asks the API for a JSON object, as 0.1.0 does.
JSON_RESPONSE_FORMAT = {"type": "json_object"}
# CompactBench's CompletionRequest defaults, used where models.toml leaves them unset.
REQUEST_DEFAULTS = {"temperature": 0.0, "max_tokens": 2048}


def render_turns(turns: tuple[Turn, ...] | list[Turn]) -> str:
    """Turns as compactor input: "ROLE: content" blocks (tags are never rendered)."""
    return "\n\n".join(f"{t.role.upper()}: {t.content}" for t in turns)


def prompts_hash() -> str:
    texts = (EVALUATION, CONTINUATION, NAIVE_SUMMARY, STRUCTURED_STATE, NAIVE_SUMMARY_UPDATE,
             STRUCTURED_STATE_UPDATE)
    return hashlib.blake2b("\x00".join(texts).encode(), digest_size=6).hexdigest()

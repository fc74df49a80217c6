"""Holding a model to the answers a prompt asks for: the wire forms of one constraint.

A choice question's answers are a short list of values ("A".."D", or option
names). With `answer_constraint` set, the provider sends them as:

- ``grammar``: a GBNF grammar in the request's ``grammar`` field (llama.cpp's
  server and llama-cpp-python's); the reply is the bare value ("B") or, for
  several answers, distinct values in the listed order joined by ", " (a
  "none of these" value only alone);
- ``json_schema``: OpenAI structured outputs (``response_format`` with a strict
  JSON schema; also vLLM, SGLang, llama.cpp's native server) or Gemini's
  ``responseSchema``; the reply is ``{"answer": "B"}`` / ``{"answer": ["A", "C"]}``
  (OpenAI's schema keeps "none of these" alone with a nested anyOf; Gemini's is a
  plain enum array, where it can still come with other values and is then
  unparseable, as in free text).

Benchmark extraction reads both forms. Free-text items carry no answer space
and are sent unconstrained.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class AnswerSpace(Protocol):
    values: Sequence[str]
    multi: bool
    alone: str | None  # multi: a value only allowed on its own ("None of these")


def _gbnf_literal(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def gbnf(space: AnswerSpace) -> str:
    """A GBNF grammar whose sentences are exactly the allowed answers."""
    if not space.multi:
        return "root ::= " + " | ".join(_gbnf_literal(v) for v in space.values)
    # Distinct values in the listed order: rule s<i> is value i, optionally followed by
    # ", " and a later rule. Every sentence is finite, so the model cannot loop to max_tokens.
    # The `alone` value stands outside the chain: "None of these" with a label contradicts itself.
    lits = [_gbnf_literal(v) for v in space.values if v != space.alone]
    n = len(lits)
    alone = [_gbnf_literal(space.alone)] if space.alone is not None else []
    rules = ["root ::= " + " | ".join([f"s{i}" for i in range(n)] + alone)]
    for i, lit in enumerate(lits):
        later = " | ".join(f"s{j}" for j in range(i + 1, n))
        rules.append(f"s{i} ::= {lit}" + (f' (", " ({later}))?' if later else ""))
    return "\n".join(rules)


def answer_schema(space: AnswerSpace) -> dict[str, Any]:
    """A JSON schema (OpenAI strict-mode subset) for ``{"answer": value or [values]}``.

    Several answers with an `alone` value: an array of the others, or that value by itself
    (strict mode allows a nested anyOf).
    """
    if not space.multi:
        answer: dict[str, Any] = {"type": "string", "enum": list(space.values)}
    else:
        others = [v for v in space.values if v != space.alone]
        answer = {"type": "array", "items": {"type": "string", "enum": others}}
        if space.alone is not None:
            answer = {"anyOf": [answer, {"type": "string", "enum": [space.alone]}]}
    return {"type": "object", "properties": {"answer": answer}, "required": ["answer"],
            "additionalProperties": False}


def openai_response_format(space: AnswerSpace) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": "answer", "strict": True, "schema": answer_schema(space)}}


def gemini_schema(space: AnswerSpace) -> dict[str, Any]:
    """Gemini's OpenAPI-subset Schema (upper-case types; no additionalProperties)."""
    one = {"type": "STRING", "enum": list(space.values)}
    answer = {"type": "ARRAY", "items": one} if space.multi else one
    return {"type": "OBJECT", "properties": {"answer": answer}, "required": ["answer"]}

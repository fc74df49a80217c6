"""Structured outputs in the simulator: validate a response schema as the vendor does, and obey it.

OpenAI (`response_format` json_schema, strict mode) and Gemini (`responseSchema`
with `responseMimeType: application/json`). The simulator understands one shape,
an object with an `answer` string or array of strings (what the engine sends,
providers/constrain.py), and answers it with the JSON the real API would
produce: its usual answer when that is allowed, else the first allowed value.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class SchemaError(ValueError):
    """A schema the real API refuses; the message is the API's wording."""


def check_openai_format(fmt: Any) -> dict | None:
    """The JSON schema of a `response_format`, None for plain text; SchemaError if OpenAI would refuse it."""
    if not isinstance(fmt, dict) or fmt.get("type") not in ("text", "json_object", "json_schema"):
        raise SchemaError("Invalid value for 'response_format.type': expected one of 'text', 'json_object' "
                          "or 'json_schema'.")
    if fmt["type"] != "json_schema":
        return None
    spec = fmt.get("json_schema")
    if not isinstance(spec, dict) or "name" not in spec:
        raise SchemaError("Missing required parameter: 'response_format.json_schema.name'.")
    if not _NAME.match(str(spec["name"])):
        raise SchemaError("Invalid 'response_format.json_schema.name': string does not match pattern.")
    schema = spec.get("schema")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise SchemaError(f"Invalid schema for response_format '{spec['name']}': schema must be a JSON Schema "
                          "of 'type: \"object\"'.")
    if spec.get("strict"):
        props = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            raise SchemaError(f"Invalid schema for response_format '{spec['name']}': In context=(), "
                              "'additionalProperties' is required to be supplied and to be false.")
        if sorted(schema.get("required") or []) != sorted(props):
            raise SchemaError(f"Invalid schema for response_format '{spec['name']}': In context=(), 'required' "
                              "is required to be supplied and to be an array including every key in properties.")
    return schema


def check_gemini_schema(config: dict) -> dict | None:
    """The responseSchema in a generationConfig, None when absent; SchemaError if Gemini would refuse it."""
    schema = config.get("responseSchema")
    if schema is None:
        return None
    if config.get("responseMimeType") != "application/json" and config.get("responseMimeType") != "text/x.enum":
        raise SchemaError("* GenerateContentRequest.generation_config.response_schema: only supported when "
                          "response_mime_type is application/json or text/x.enum")
    if not isinstance(schema, dict) or "additionalProperties" in schema:
        raise SchemaError('Invalid JSON payload received. Unknown name "additionalProperties" at '
                          "'generation_config.response_schema': Cannot find field.")
    return schema


def _branch(spec: dict) -> tuple[bool, list]:
    """(an array of values?, the allowed values) of one answer schema."""
    many = str(spec.get("type", "")).lower() == "array"
    return many, list((spec.get("items") if many else spec).get("enum") or [])


def obey(answer: str, schema: dict) -> str:
    """The reply under the schema: ``{"answer": ...}`` holding the usual answer if allowed."""
    spec = (schema.get("properties") or {}).get("answer")
    if not isinstance(spec, dict):
        return orjson.dumps({}).decode()
    wanted = [w.strip() for w in answer.removeprefix("Answer:").split(",") if w.strip()]
    # anyOf: the first branch the usual answer fits, else the first branch.
    branches = [_branch(b) for b in spec.get("anyOf") or [spec]]
    many, allowed = next((b for b in branches if all(w in b[1] for w in wanted) and (b[0] or len(wanted) == 1)),
                         branches[0])
    chosen = [w for w in wanted if w in allowed] or allowed[:1]
    return orjson.dumps({"answer": chosen if many else chosen[0] if chosen else ""}).decode()

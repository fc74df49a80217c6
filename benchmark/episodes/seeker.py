"""The user simulator's side: the seeker's prompt and the lenient reader of its reply.

The simulator answers one JSON object ``{"reply": str, "emotion": int 0-100, "reason": str,
"end": bool}``. ``SEEKER_SCHEMA`` is that object as a JSON schema, for providers with a
structured-output option; ``read_seeker_reply`` reads it leniently from plain text otherwise
(code fences, prose around it, an emotion given as "70/100"), and returns None when it cannot.
"""

from __future__ import annotations

from typing import Any

import msgspec

SEEKER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reply": {"type": "string"},
        "emotion": {"type": "integer", "minimum": 0, "maximum": 100},
        "reason": {"type": "string"},
        "end": {"type": "boolean"},
    },
    "required": ["reply", "emotion", "reason", "end"],
    "additionalProperties": False,
}


class SeekerReply(msgspec.Struct, frozen=True):
    reply: str
    emotion: int  # 0-100, clipped
    reason: str = ""
    end: bool = False

"""Which model ids are OpenAI's reasoning models (o1, o3, o4-mini, gpt-5...): their requests carry no
sampling parameters. Apart from the adapter, so a command that plans requests without making any does
not import the HTTP client."""

from __future__ import annotations

import re

# Optionally behind a host prefix like "openai/".
_REASONING = re.compile(r"^(?:.*/)?(?:o[1-9](?:$|-)|gpt-5)")
# Parameters the reasoning models refuse ("Unsupported parameter" / "Only the default (1) value is supported").
NOT_FOR_REASONING = ("temperature", "top_p", "stop")


def is_reasoning_model(model: str) -> bool:
    return bool(_REASONING.match(model))

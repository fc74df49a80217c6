"""The provider seam: one chat call, one result, or one classified error."""

from __future__ import annotations

from typing import Any, Protocol, Sequence

import msgspec


class ChatResult(msgspec.Struct):
    text: str
    model_version: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish_reason: str | None = None
    attempts: int = 1
    latency_ms: float = 0.0


class Provider(Protocol):
    """A wire API. ``chat`` returns a result or raises ``ProviderError``."""

    async def chat(self, messages: Sequence[Any]) -> ChatResult: ...

    async def aclose(self) -> None: ...

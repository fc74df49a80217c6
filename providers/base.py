"""The provider seam: one chat call, one result, or one classified error."""

from __future__ import annotations

from typing import Any, Protocol, Sequence

import msgspec

DEFAULT_MAX_OUTPUT = 256  # output tokens assumed by estimates when max_tokens is not set


class ChatResult(msgspec.Struct):
    text: str
    model_version: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish_reason: str | None = None
    attempts: int = 1
    latency_ms: float = 0.0
    # Set when the model or the vendor's filter declined to answer: 'refusal',
    # 'content_filter', 'prompt:SAFETY', 'SAFETY', 'sensitive' ... The text is
    # then empty. An answer, not an error: it is stored (status 'ok'), scored
    # like any unparseable answer, and never retried.
    blocked: str | None = None


class CallOptions(msgspec.Struct, frozen=True):
    """What one call adds to the adapter's fixed request (an episode's calls, engine/lanes/episode.py):
    body fields a wire takes where its API has them (OpenAI's ``seed``, ``user``, ``response_format``;
    a wire without them drops them) and request headers."""

    body: dict[str, Any] = {}
    headers: dict[str, str] = {}


class Provider(Protocol):
    """A wire API. ``chat`` returns a result or raises ``ProviderError``.

    ``answer`` (see providers.constrain) lists the answers the prompt asks for; a
    provider configured with an answer constraint holds the model to them.
    """

    async def chat(self, messages: Sequence[Any], answer: Any = None, *, call: CallOptions | None = None) -> ChatResult: ...

    async def aclose(self) -> None: ...

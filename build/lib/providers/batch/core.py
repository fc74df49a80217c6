"""The batch seam: many chat requests answered later, at the provider's batch price.

A ``BatchAPI`` wraps one synchronous adapter (providers/openai.py, anthropic.py,
gemini.py): each request's body is exactly the body ``adapter.request_body``
would send (same model, generation settings, constraint), and each answer is
read by the same ``adapter.parse``, so a batched item becomes the same row as
a synchronous one. The engine owns what is durable (which batch carries which
item, stored before it waits); this seam only speaks to the provider.

``label`` is the engine's own key for a batch, given at submission and written
into the batch where the API allows it (OpenAI metadata, Gemini display name),
so a batch created just before a crash, whose id was never stored, can be found
again with ``find`` instead of being submitted twice. Where the API keeps no label
(Anthropic), ``find`` matches what the engine recorded (``LostCreate``) instead.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from typing import Protocol

import msgspec

from providers.base import ChatResult
from providers.errors import ProviderError

# Engine-level states. ``state`` of a BatchStatus is one of these; the provider's
# own word (OpenAI 'finalizing', Anthropic 'canceling', Gemini 'BATCH_STATE_RUNNING')
# is kept in ``provider_status`` for progress and `engine batches`.
RUNNING = "running"  # accepted, not ended: validating / in progress / finalizing / cancelling
ENDED = "ended"  # results can be read (some requests may have failed individually)
FAILED = "failed"  # the whole batch failed (validation error ...): no results, resubmit its items
EXPIRED = "expired"  # the window passed; results of the finished requests can still be read
CANCELLED = "cancelled"  # cancelled; results of the finished requests can still be read
TERMINAL = (ENDED, FAILED, EXPIRED, CANCELLED)


# A custom_id every provider accepts: Anthropic's rule (^[a-zA-Z0-9_-]{1,64}$) is the
# strictest (OpenAI takes any string, Gemini's metadata key any string).
CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def check_requests(requests: Sequence[BatchRequest], pattern: re.Pattern[str] | None = CUSTOM_ID) -> None:
    """Refuse a batch the provider would refuse whole: empty, a custom_id twice, or one
    the provider does not accept. A ValueError: the caller's mistake, not the provider's."""
    if not requests:
        raise ValueError("a batch needs at least one request")
    seen: set[str] = set()
    for r in requests:
        if r.custom_id in seen:
            raise ValueError(f"custom_id {r.custom_id!r} twice in one batch")
        if pattern is not None and not pattern.fullmatch(r.custom_id):
            raise ValueError(f"custom_id {r.custom_id!r} does not match {pattern.pattern}")
        seen.add(r.custom_id)


class BatchRequest(msgspec.Struct, frozen=True):
    custom_id: str  # unique within the batch; the engine's key of the item
    body: bytes  # the synchronous request body (adapter.request_body)


class BatchStatus(msgspec.Struct, frozen=True):
    state: str  # RUNNING | ENDED | FAILED | EXPIRED | CANCELLED
    provider_status: str  # the provider's own status word
    total: int = 0
    succeeded: int = 0
    failed: int = 0  # errored + expired + cancelled requests, as the provider counts them
    message: str | None = None  # why a batch failed (the provider's errors), keys redacted


class BatchOutcome(msgspec.Struct):
    """One request's answer: a result or a classified error (never both).

    A request the batch never answered (expired, cancelled, or missing from the
    output) is a retryable ``ProviderError`` (ErrorClass.TRANSIENT): asked again.
    """

    custom_id: str
    result: ChatResult | None = None
    error: ProviderError | None = None


class LostCreate(msgspec.Struct, frozen=True):
    """What the engine recorded of a batch whose create answer was lost, for ``find`` where the API
    keeps no label (Anthropic): its requests' custom_ids, when it was recorded (unix seconds, just
    before the create), and the provider ids the engine already holds (other batches: never this one)."""

    custom_ids: tuple[str, ...]
    since: float
    known: frozenset[str] = frozenset()


class BatchAPI(Protocol):
    provider: str  # "openai" | "anthropic" | "gemini"
    max_requests: int  # requests per batch, as documented
    max_bytes: int  # bytes per batch (file or inline payload), as documented

    def request_size(self, request: BatchRequest) -> int:
        """Bytes this request adds to a batch (to split a workload within ``max_bytes``)."""
        ...

    async def submit(self, requests: Sequence[BatchRequest], *, label: str) -> str:
        """Create one batch; returns the provider's batch id. Raises ProviderError."""
        ...

    async def find(self, label: str, hint: LostCreate | None = None) -> str | None:
        """The id of a batch submitted with ``label``, if the API can tell; else None. ``hint``: what the
        engine recorded of it, for an API without labels (this object remembers its own submissions).
        Raises ProviderError when it cannot tell (several batches could be it): ask again later."""
        ...

    async def status(self, batch_id: str) -> BatchStatus: ...

    def results(self, batch_id: str) -> AsyncIterator[BatchOutcome]:
        """Every request's outcome of an ended (or expired / cancelled) batch."""
        ...

    async def cancel(self, batch_id: str) -> None: ...

    async def discard(self, batch_id: str) -> None:
        """Delete what the batch left at the provider (uploaded input, result files), once its outcomes
        are stored: results cannot be read after this."""
        ...

    async def aclose(self) -> None: ...

"""Anthropic Message Batches, built on an ``AnthropicChat`` adapter.

Documented flow: ``POST /v1/messages/batches {"requests": [{"custom_id",
"params"}]}`` where ``params`` is a Messages request (the adapter's body);
poll ``GET /v1/messages/batches/{id}`` (``processing_status`` in_progress,
canceling, ended; ``request_counts`` processing, succeeded, errored, canceled,
expired); once ended, read the JSONL at ``results_url`` (one ``{"custom_id",
"result": {"type": succeeded | errored | canceled | expired}}`` a line, in any
order; streamed). At most 100,000 requests and 256 MB a batch; ``custom_id``
must match ``^[a-zA-Z0-9_-]{1,64}$``. Nothing is uploaded, so nothing is left
to delete.

A batch carries no metadata or name, so a batch whose create answer was lost
cannot be found by its label. ``find`` recognises it instead among the
batches ``GET /v1/messages/batches`` lists (newest first), from what was
recorded before the create (``LostCreate``; this object remembers its own):

- created within [recorded - SKEW_S, recorded + WINDOW_S];
- as many requests (the sum of ``request_counts``) as the lost one;
- not a batch the engine (or this process) already holds by id: the engine's
  other batches, of this or any model, are never taken for it;
- once ended, its results (the first VERIFY_LINES lines) carry only the lost
  batch's custom_ids; one still running cannot be checked that way.

One candidate is the batch; none means it was not created (the engine
submits its items again); several (another process submitting batches of the
same size at the same time) is a ProviderError: the engine leaves the batch
``submitting`` and looks again later, when the candidates have ended and
their results tell them apart.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Any

import orjson
from yarl import URL

from providers.anthropic import AnthropicChat
from providers.batch.core import (CANCELLED, CUSTOM_ID, ENDED, EXPIRED, RUNNING, BatchOutcome, BatchRequest,
                             BatchStatus, LostCreate)
from providers.batch.http import BatchHttp, json_line, redacted
from providers.errors import ErrorClass, ProviderError, anthropic_request_error

SKEW_S = 300.0  # our clock and the provider's may disagree this much
WINDOW_S = 3600.0  # a create lands this long after it was recorded, at most
VERIFY_LINES = 100  # result lines read to check a candidate's custom_ids
FIND_PAGES = 10  # pages of 100 batches, newest first
# (endpoint, id) of the batches this process created, whatever the lane: never another lane's lost one.
_CREATED: set[tuple[str, str]] = set()


class AnthropicBatch(BatchHttp):
    provider = "anthropic"
    max_requests = 100_000
    max_bytes = 256 * 1024 * 1024

    def __init__(self, adapter: AnthropicChat, **kw: Any):
        super().__init__(adapter, **kw)
        self._batches = adapter.url.removesuffix("/messages") + "/messages/batches"
        self._lost: dict[str, LostCreate] = {}  # label -> what find needs, should the create's answer be lost

    @staticmethod
    def _item(r: BatchRequest) -> bytes:
        return b'{"custom_id":' + orjson.dumps(r.custom_id) + b',"params":' + r.body + b"}"

    def request_size(self, request: BatchRequest) -> int:
        return len(self._item(request)) + 1  # and its comma

    @redacted
    async def submit(self, requests: Sequence[BatchRequest], *, label: str) -> str:
        self._check(requests, CUSTOM_ID)  # the API refuses the whole batch otherwise
        payload = b'{"requests":[' + b",".join(map(self._item, requests)) + b"]}"
        self._lost[label] = LostCreate(tuple(r.custom_id for r in requests), time.time())
        batch_id = await self._create(self._batches, payload, label, lambda doc: str(doc["id"]))
        _CREATED.add((self._batches, batch_id))
        del self._lost[label]  # created, its id known: nothing to look for
        return self._remember(batch_id, requests)

    @redacted
    async def find(self, label: str, hint: LostCreate | None = None) -> str | None:
        """The batch recorded as ``hint`` (or submitted here with ``label``), by the module's heuristic."""
        hint = hint or self._lost.get(label)
        if hint is None:
            return None  # nothing to recognise it by
        ours = set(hint.custom_ids)
        known = hint.known | {batch_id for url, batch_id in _CREATED if url == self._batches}
        found = []
        async for doc in self._listed(hint.since - SKEW_S):
            created = _unix(doc.get("created_at"))
            counts = doc.get("request_counts") or {}
            if (str(doc.get("id")) in known or created is None
                    or not hint.since - SKEW_S <= created <= hint.since + WINDOW_S
                    or sum(int(v or 0) for v in counts.values()) != len(ours)):
                continue
            if doc.get("processing_status") == "ended" and not await self._carries(doc, ours):
                continue
            found.append(str(doc["id"]))
        if len(found) > 1:
            raise ProviderError(ErrorClass.TRANSIENT, f"{len(found)} batches could be the one whose create answer "
                                "was lost; looked for again once they have ended")
        return found[0] if found else None

    async def _listed(self, oldest: float) -> AsyncIterator[dict[str, Any]]:
        """The listed batches, newest first, down to the first created before ``oldest``."""
        after: str | None = None
        for _ in range(FIND_PAGES):
            page = await self._json("GET", self._batches, params={"limit": "100", **({"after_id": after} if after else {})})
            data = page.get("data") or []
            for doc in data:
                if (_unix(doc.get("created_at")) or oldest) < oldest:
                    return
                yield doc
            if not page.get("has_more") or not data:
                return
            after = str(page.get("last_id") or data[-1]["id"])

    async def _carries(self, doc: dict[str, Any], ours: set[str]) -> bool:
        """Do the first VERIFY_LINES results of this ended batch name only ``ours``?"""
        n = 0
        async for raw in self._lines(self._results_url(doc)):
            line = json_line(raw)
            if line is None:
                continue
            if line.get("custom_id") not in ours:
                return False
            n += 1
            if n >= VERIFY_LINES:
                break
        return n > 0

    async def _batch(self, batch_id: str) -> dict[str, Any]:
        return await self._json("GET", f"{self._batches}/{batch_id}")

    @redacted
    async def status(self, batch_id: str) -> BatchStatus:
        doc = await self._batch(batch_id)
        word = str(doc.get("processing_status"))
        counts = {k: int(v or 0) for k, v in (doc.get("request_counts") or {}).items()}
        state = RUNNING
        if word == "ended":
            # The batch ends either way; say why when some requests were never attempted.
            state = CANCELLED if doc.get("cancel_initiated_at") else EXPIRED if counts.get("expired") else ENDED
        return BatchStatus(state, word, sum(counts.values()), counts.get("succeeded", 0),
                           counts.get("errored", 0) + counts.get("canceled", 0) + counts.get("expired", 0))

    def _results_url(self, doc: dict[str, Any]) -> str:
        # The documented advice is to follow results_url, not to build the path; the key is only
        # sent to the host it was configured for, though.
        url = str(doc.get("results_url") or "")
        if not url or URL(url).host != URL(self._batches).host:
            url = f"{self._batches}/{doc.get('id')}/results"
        return url

    async def _outcomes(self, batch_id: str) -> AsyncIterator[BatchOutcome]:
        async for raw in self._lines(self._results_url(await self._batch(batch_id))):
            line = json_line(raw) or {}
            custom_id, result = line.get("custom_id"), line.get("result") or {}
            if not isinstance(custom_id, str) or not isinstance(result, dict):
                continue
            kind = result.get("type")
            if kind == "succeeded":
                yield self.answered(custom_id, 200, orjson.dumps(result.get("message")))
            elif kind == "errored":
                yield self.failed(custom_id, anthropic_request_error(result.get("error") or {}))
            else:  # canceled, expired
                yield self.missing(custom_id, str(kind))

    @redacted
    async def cancel(self, batch_id: str) -> None:
        await self._json("POST", f"{self._batches}/{batch_id}/cancel")


def _unix(stamp: Any) -> float | None:
    """An RFC 3339 time (``2024-09-24T18:37:24.100435Z``) in unix seconds; None if it is not one."""
    try:
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None

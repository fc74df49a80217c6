"""Anthropic Message Batches, built on an ``AnthropicChat`` adapter.

Documented flow: ``POST /v1/messages/batches {"requests": [{"custom_id",
"params"}]}`` where ``params`` is a Messages request (the adapter's body);
poll ``GET /v1/messages/batches/{id}`` (``processing_status`` in_progress,
canceling, ended; ``request_counts`` processing, succeeded, errored, canceled,
expired); once ended, read the JSONL at ``results_url`` (one ``{"custom_id",
"result": {"type": succeeded | errored | canceled | expired}}`` a line, in any
order; streamed). At most 100,000 requests and 256 MB a batch; ``custom_id`` must match
``^[a-zA-Z0-9_-]{1,64}$``. A batch carries no metadata: ``find`` cannot
recover a batch whose id was lost, it returns None.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import orjson
from yarl import URL

from providers.anthropic import AnthropicChat
from providers.batch import (CANCELLED, CUSTOM_ID, ENDED, EXPIRED, RUNNING, BatchOutcome, BatchRequest,
                             BatchStatus)
from providers.batch_http import BatchHttp, json_line, redacted
from providers.errors import anthropic_request_error


class AnthropicBatch(BatchHttp):
    provider = "anthropic"
    max_requests = 100_000
    max_bytes = 256 * 1024 * 1024

    def __init__(self, adapter: AnthropicChat, **kw: Any):
        super().__init__(adapter, **kw)
        self._batches = adapter.url.removesuffix("/messages") + "/messages/batches"

    @staticmethod
    def _item(r: BatchRequest) -> bytes:
        return b'{"custom_id":' + orjson.dumps(r.custom_id) + b',"params":' + r.body + b"}"

    def request_size(self, request: BatchRequest) -> int:
        return len(self._item(request)) + 1  # and its comma

    @redacted
    async def submit(self, requests: Sequence[BatchRequest], *, label: str) -> str:
        self._check(requests, CUSTOM_ID)  # the API refuses the whole batch otherwise
        payload = b'{"requests":[' + b",".join(map(self._item, requests)) + b"]}"
        batch_id = await self._create(self._batches, payload, label, lambda doc: str(doc["id"]))
        return self._remember(batch_id, requests)

    async def find(self, label: str) -> str | None:
        return None  # a Message Batch has no metadata or name to find it by

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

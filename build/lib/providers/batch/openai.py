"""OpenAI Batch API for chat completions, built on an ``OpenAIChat`` adapter.

Documented flow: upload a JSONL file (one ``{"custom_id", "method": "POST",
"url": "/v1/chat/completions", "body"}`` a line) to ``POST /v1/files`` with
``purpose=batch``; ``POST /v1/batches {input_file_id, endpoint,
completion_window: "24h", metadata}``; poll ``GET /v1/batches/{id}``
(validating, in_progress, finalizing, completed, failed, expired, cancelling,
cancelled); read ``output_file_id`` and ``error_file_id`` through
``GET /v1/files/{id}/content`` (streamed). Once collected, ``DELETE /v1/files/{id}``
removes the three files (OpenAI keeps them until then). At most 50,000 requests
and 200 MB a file.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import aiohttp
import orjson

from providers.batch.core import (CANCELLED, ENDED, EXPIRED, FAILED, RUNNING, BatchOutcome, BatchRequest, BatchStatus,
                             LostCreate)
from providers.batch.http import BatchHttp, json_line, redacted
from providers.errors import batch_request_error
from providers.openai import OpenAIChat

ENDPOINT = "/v1/chat/completions"
STATES = {"validating": RUNNING, "in_progress": RUNNING, "finalizing": RUNNING, "cancelling": RUNNING,
          "completed": ENDED, "failed": FAILED, "expired": EXPIRED, "cancelled": CANCELLED}
LABEL_KEY = "label"  # the metadata key carrying the engine's label
FIND_PAGES = 10  # find() reads at most this many pages of 100 batches, newest first


class OpenAIBatch(BatchHttp):
    provider = "openai"
    max_requests = 50_000
    max_bytes = 200 * 1024 * 1024

    def __init__(self, adapter: OpenAIChat, **kw: Any):
        super().__init__(adapter, **kw)
        self._root = adapter.url.removesuffix("/chat/completions")  # base_url, with its /v1

    @staticmethod
    def _line(r: BatchRequest) -> bytes:
        # The body is embedded as the adapter made it: not parsed and dumped again.
        return (b'{"custom_id":' + orjson.dumps(r.custom_id) + b',"method":"POST","url":"' + ENDPOINT.encode()
                + b'","body":' + r.body + b"}\n")

    def request_size(self, request: BatchRequest) -> int:
        return len(self._line(request))

    @redacted
    async def submit(self, requests: Sequence[BatchRequest], *, label: str) -> str:
        self._check(requests)
        data = b"".join(map(self._line, requests))

        def form() -> aiohttp.FormData:  # a FormData is spent once sent: a fresh one for each attempt
            fd = aiohttp.FormData()
            fd.add_field("purpose", "batch")
            fd.add_field("file", data, filename=f"{label}.jsonl", content_type="application/jsonl")
            return fd

        raw, _ = await self._call("POST", f"{self._root}/files", body=form)
        file_id = orjson.loads(raw)["id"]
        payload = orjson.dumps({"input_file_id": file_id, "endpoint": ENDPOINT, "completion_window": "24h",
                                "metadata": {LABEL_KEY: label}})
        batch_id = await self._create(f"{self._root}/batches", payload, label, lambda doc: str(doc["id"]))
        return self._remember(batch_id, requests)

    @redacted
    async def find(self, label: str, hint: LostCreate | None = None) -> str | None:
        after: str | None = None
        for _ in range(FIND_PAGES):
            params = {"limit": "100", **({"after": after} if after else {})}
            page = await self._json("GET", f"{self._root}/batches", params=params)
            data = page.get("data") or []
            for batch in data:  # newest first: the latest batch of that label
                if (batch.get("metadata") or {}).get(LABEL_KEY) == label:
                    return str(batch["id"])
            if not page.get("has_more") or not data:
                return None
            after = page.get("last_id") or data[-1]["id"]
        return None

    async def _batch(self, batch_id: str) -> dict[str, Any]:
        return await self._json("GET", f"{self._root}/batches/{batch_id}")

    @redacted
    async def status(self, batch_id: str) -> BatchStatus:
        doc = await self._batch(batch_id)
        word = str(doc.get("status"))
        counts = doc.get("request_counts") or {}
        errors = (doc.get("errors") or {}).get("data") or []
        message = "; ".join(f"{e.get('code')}: {e.get('message')}" + (f" (line {e['line']})" if e.get("line") else "")
                            for e in errors[:5]) or None
        return BatchStatus(STATES.get(word, RUNNING), word, int(counts.get("total") or 0),
                           int(counts.get("completed") or 0), int(counts.get("failed") or 0), self.text(message))

    async def _outcomes(self, batch_id: str) -> AsyncIterator[BatchOutcome]:
        doc = await self._batch(batch_id)
        for file_id in filter(None, (doc.get("output_file_id"), doc.get("error_file_id"))):
            async for line in self._lines(f"{self._root}/files/{file_id}/content"):
                outcome = self._outcome(json_line(line) or {})
                if outcome is not None:
                    yield outcome

    def _outcome(self, line: dict[str, Any]) -> BatchOutcome | None:
        custom_id = line.get("custom_id")
        if not isinstance(custom_id, str):
            return None
        response = line.get("response")
        if isinstance(response, dict) and response.get("status_code"):
            return self.answered(custom_id, int(response["status_code"]), orjson.dumps(response.get("body")))
        error = line.get("error") or {}
        return self.failed(custom_id, batch_request_error(None, str(error.get("message") or "no response"),
                                                          str(error.get("code") or "") or None))

    @redacted
    async def cancel(self, batch_id: str) -> None:
        await self._json("POST", f"{self._root}/batches/{batch_id}/cancel")

    @redacted
    async def discard(self, batch_id: str) -> None:
        """DELETE /v1/files/{id} for its input, output and error files (they stay otherwise)."""
        doc = await self._batch(batch_id)
        for file_id in filter(None, (doc.get(k) for k in ("input_file_id", "output_file_id", "error_file_id"))):
            await self._delete(f"{self._root}/files/{file_id}")

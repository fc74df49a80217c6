"""Gemini Batch Mode, built on a ``GeminiChat`` adapter.

Documented flow: ``POST /v1beta/models/{model}:batchGenerateContent`` with
``{"batch": {"display_name", "input_config": ...}}``. Under 20 MB the requests
are inlined (``input_config.requests.requests = [{"request", "metadata":
{"key"}}]``); larger ones are uploaded as JSONL (``{"key", "request"}`` a line)
through the Files API's resumable upload and named by ``input_config.file_name``.
The answer is a long-running operation named ``batches/{id}``; ``GET
/v1beta/batches/{id}`` reports ``metadata.state`` (BATCH_STATE_PENDING,
RUNNING, SUCCEEDED, FAILED, CANCELLED, EXPIRED; older JOB_STATE_* read alike)
and, when done, ``response.inlinedResponses`` (a response or an error per
request, in request order) or ``response.responsesFile`` (JSONL, downloaded
from ``/download/v1beta/{file}:download?alt=media``, streamed). Cancel: ``:cancel``.
Once collected, the Files API's ``DELETE /v1beta/files/{id}`` removes the uploaded
input (``metadata.inputConfig.fileName``) and the responses file.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import orjson

from providers.batch.core import (CANCELLED, ENDED, EXPIRED, FAILED, RUNNING, BatchOutcome, BatchRequest, BatchStatus,
                             LostCreate)
from providers.batch.http import BatchHttp, json_line, redacted
from providers.errors import grpc_request_error
from providers.gemini import GeminiChat

INLINE_MAX_BYTES = 20 * 1024 * 1024  # "total request size under 20 MB" for inlined requests
STATES = {"SUCCEEDED": ENDED, "FAILED": FAILED, "CANCELLED": CANCELLED, "EXPIRED": EXPIRED}
FIND_PAGES = 10


class GeminiBatch(BatchHttp):
    provider = "gemini"
    # The documentation names no request count; a 2 GB input file is the Files API's limit.
    max_requests = 50_000
    max_bytes = 2 * 1024 * 1024 * 1024

    def __init__(self, adapter: GeminiChat, **kw: Any):
        super().__init__(adapter, **kw)
        url = adapter.url  # {root}/v1beta/models/{model}:generateContent
        self._create_url = url.removesuffix(":generateContent") + ":batchGenerateContent"
        self._root = url.split("/v1beta/", 1)[0]

    @staticmethod
    def _inline(r: BatchRequest) -> bytes:
        return b'{"request":' + r.body + b',"metadata":{"key":' + orjson.dumps(r.custom_id) + b"}}"

    @staticmethod
    def _line(r: BatchRequest) -> bytes:
        return b'{"key":' + orjson.dumps(r.custom_id) + b',"request":' + r.body + b"}\n"

    def request_size(self, request: BatchRequest) -> int:
        return len(self._line(request))

    @redacted
    async def submit(self, requests: Sequence[BatchRequest], *, label: str) -> str:
        self._check(requests)
        items = [self._inline(r) for r in requests]
        if sum(map(len, items)) + len(items) + 200 < INLINE_MAX_BYTES:
            source = b'{"requests":{"requests":[' + b",".join(items) + b"]}}"
        else:
            source = b'{"file_name":' + orjson.dumps(await self._upload(requests, label)) + b"}"
        payload = b'{"batch":{"display_name":' + orjson.dumps(label) + b',"input_config":' + source + b"}}"
        batch_id = await self._create(self._create_url, payload, label,
                                      lambda doc: str(doc.get("name") or doc["metadata"]["name"]))
        return self._remember(batch_id, requests)

    async def _upload(self, requests: Sequence[BatchRequest], label: str) -> str:
        """The Files API's resumable upload: start (metadata), then the bytes; returns ``files/...``."""
        data = b"".join(map(self._line, requests))
        start = {"X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
                 "X-Goog-Upload-Header-Content-Length": str(len(data)),
                 "X-Goog-Upload-Header-Content-Type": "application/jsonl", "Content-Type": "application/json"}
        _, headers = await self._call("POST", f"{self._root}/upload/v1beta/files", headers=start,
                                      body=orjson.dumps({"file": {"display_name": label}}))
        upload_url = headers.get("X-Goog-Upload-URL") or headers.get("x-goog-upload-url")
        if not upload_url:
            raise ValueError("the Files API answered the upload start without X-Goog-Upload-URL")
        raw, _ = await self._call("POST", upload_url, body=data, headers={
            "X-Goog-Upload-Offset": "0", "X-Goog-Upload-Command": "upload, finalize"})
        return str(orjson.loads(raw)["file"]["name"])

    @redacted
    async def find(self, label: str, hint: LostCreate | None = None) -> str | None:
        token: str | None = None
        for _ in range(FIND_PAGES):
            params = {"pageSize": "100", **({"pageToken": token} if token else {})}
            page = await self._json("GET", f"{self._root}/v1beta/batches", params=params)
            for op in page.get("operations") or []:
                meta = op.get("metadata") or op
                if meta.get("displayName", meta.get("display_name")) == label:
                    return str(op.get("name") or meta.get("name"))
            token = page.get("nextPageToken")
            if not token:
                return None
        return None

    async def _batch(self, batch_id: str) -> dict[str, Any]:
        return await self._json("GET", f"{self._root}/v1beta/{batch_id}")

    @redacted
    async def status(self, batch_id: str) -> BatchStatus:
        doc = await self._batch(batch_id)
        meta = doc.get("metadata") or doc
        word = str(meta.get("state"))
        stats = meta.get("batchStats") or {}
        total, ok, bad = (int(stats.get(k) or 0) for k in
                          ("requestCount", "successfulRequestCount", "failedRequestCount"))
        error = doc.get("error") or {}
        state = STATES.get(word.rsplit("_", 1)[-1], RUNNING)  # BATCH_STATE_X and JOB_STATE_X alike
        return BatchStatus(state, word, total, ok, bad, self.text(error.get("message")))

    async def _outcomes(self, batch_id: str) -> AsyncIterator[BatchOutcome]:
        doc = await self._batch(batch_id)
        output = _output(doc)
        inlined = output.get("inlinedResponses")
        if isinstance(inlined, dict):
            inlined = inlined.get("inlinedResponses")
        if inlined is None and output.get("responsesFile"):
            async for raw in self._lines(f"{self._root}/download/v1beta/{output['responsesFile']}:download",
                                         params={"alt": "media"}):
                line = json_line(raw)
                if line is not None:
                    outcome = self._outcome(line)
                    if outcome is not None:
                        yield outcome
            return
        # In request order, their metadata not always with them (a known gap of the API): then
        # matched by position, when this object submitted the batch.
        keys = self._submitted.get(batch_id, [])
        for i, item in enumerate(inlined or []):
            key = (item.get("metadata") or {}).get("key") or (keys[i] if i < len(keys) else None)
            outcome = self._outcome({**item, "key": key})
            if outcome is not None:
                yield outcome

    def _outcome(self, line: dict[str, Any]) -> BatchOutcome | None:
        key = line.get("key")
        if not isinstance(key, str):
            return None  # an answer that cannot be matched: its request counts as not answered
        if "response" in line:
            return self.answered(key, 200, orjson.dumps(line["response"]))
        return self.failed(key, grpc_request_error(line.get("error") or line.get("status") or {}))

    @redacted
    async def cancel(self, batch_id: str) -> None:
        await self._json("POST", f"{self._root}/v1beta/{batch_id}:cancel")

    @redacted
    async def discard(self, batch_id: str) -> None:
        """Delete its uploaded input file and its responses file (Files API ``DELETE /v1beta/files/{id}``;
        they would stay 48 hours otherwise). Inlined requests and responses leave no file."""
        doc = await self._batch(batch_id)
        meta = doc.get("metadata") or {}
        source = meta.get("inputConfig") or meta.get("input_config") or {}
        for name in filter(None, (source.get("fileName") or source.get("file_name"), _output(doc).get("responsesFile"))):
            await self._delete(f"{self._root}/v1beta/{name}")


def _output(doc: dict[str, Any]) -> dict[str, Any]:
    """A done operation's output: ``response`` (``metadata.output`` in some versions)."""
    meta = doc.get("metadata") or {}
    output = doc.get("response") or meta.get("output") or doc.get("output") or {}
    return output if isinstance(output, dict) else {}

"""Gemini Batch Mode and the Files API it reads, simulated (simulator/batches.py holds the machinery).

``POST /v1beta/models/{model}:batchGenerateContent`` with ``{"batch":
{"display_name", "input_config": {"requests": {"requests": [{"request",
"metadata": {"key"}}]}} | {"file_name"}}}`` (inline payloads up to 20 MB) returns
an operation ``batches/{id}``; ``GET /v1beta/batches/{id}`` (``metadata.state``
BATCH_STATE_*, and once done ``response.inlinedResponses`` or
``response.responsesFile``), ``GET /v1beta/batches``, ``POST
/v1beta/batches/{id}:cancel``. Files: the resumable upload at
``/upload/v1beta/files`` (start, then "upload, finalize"),
``GET /download/v1beta/files/{id}:download?alt=media``, ``GET /v1beta/files``
(``pageSize`` / ``pageToken``), ``GET`` and ``DELETE /v1beta/files/{id}``. A
file-fed batch names its input in ``metadata.inputConfig.fileName``.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import orjson
from aiohttp import web

from simulator.batches import (CANCELLED, COMPLETED, ENDED, EXPIRED, FAILED, QUEUED, BatchStore, SimBatch,
                               guarded, json_response)
from simulator.gemini import MODEL_METHODS, GoogleError, _unknown, batch_answer, check_key, error_response
from simulator.openai import STATE

INLINE_MAX_BYTES = 20 * 1024 * 1024
_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1main."
_ENDED = {COMPLETED: "BATCH_STATE_SUCCEEDED", EXPIRED: "BATCH_STATE_EXPIRED", CANCELLED: "BATCH_STATE_CANCELLED",
          FAILED: "BATCH_STATE_FAILED"}
_GRPC = {"INVALID_ARGUMENT": 3, "NOT_FOUND": 5, "PERMISSION_DENIED": 7, "RESOURCE_EXHAUSTED": 8, "INTERNAL": 13,
         "UNAVAILABLE": 14}
_SERVER_ERROR = {"code": 13, "message": "An internal error has occurred. Please retry."}


_guarded = guarded(check_key, GoogleError,
                   lambda err: error_response(err.status, err.google_status, err.message, err.details))


def _field(obj: dict[str, Any], snake: str, camel: str) -> Any:
    return obj.get(snake, obj.get(camel))


def _check_names(obj: dict[str, Any], allowed: set[str], where: str) -> None:
    for key in obj:
        if key not in allowed:
            raise _unknown(key, where)


def _inline(source: Any) -> list[tuple[str, Any]]:
    items = source.get("requests") if isinstance(source, dict) else None
    if not isinstance(items, list) or not items:
        raise GoogleError(400, "* BatchGenerateContentRequest.batch.input_config.requests.requests: must not be empty")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("request"), dict):
            raise GoogleError(400, f"* BatchGenerateContentRequest.batch.input_config.requests.requests[{i}].request: "
                              "Field required")
        _check_names(item, {"request", "metadata"}, f"batch.input_config.requests.requests[{i}]")
        key = (item.get("metadata") or {}).get("key")
        out.append((str(key) if key is not None else str(i), item["request"]))
    return out


def _from_file(store: BatchStore, name: Any) -> list[tuple[str, Any]]:
    f = store.files.get(str(name).removeprefix("files/"))
    if f is None or f.owner != "gemini":
        raise GoogleError(404, f"File {name} not found.", "NOT_FOUND")
    out = []
    for n, raw in enumerate(ln for ln in f.data.splitlines() if ln.strip()):
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise GoogleError(400, f"Invalid JSON in input file {name}, line {n + 1}.") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("request"), dict):
            raise GoogleError(400, f"Input file {name}, line {n + 1}: 'request' is required.")
        out.append((str(doc.get("key", n)), doc["request"]))
    if not out:
        raise GoogleError(400, f"Input file {name} is empty.")
    return out


async def create_batch(request: web.Request, store: BatchStore) -> web.Response:
    """POST /v1beta/models/{model}:batchGenerateContent."""
    model = request.match_info["target"].partition(":")[0]
    raw = await request.read()
    if len(raw) > INLINE_MAX_BYTES:
        raise GoogleError(400, f"Request payload size exceeds the limit: {INLINE_MAX_BYTES} bytes.")
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise GoogleError(400, "Invalid JSON payload received.") from None
    if not isinstance(body, dict) or not isinstance(body.get("batch"), dict):
        raise GoogleError(400, "* BatchGenerateContentRequest.batch: Field required")
    _check_names(body, {"batch"}, "")
    batch = body["batch"]
    _check_names(batch, {"display_name", "displayName", "input_config", "inputConfig", "priority", "model"}, "batch")
    label = _field(batch, "display_name", "displayName")
    if not isinstance(label, str) or not label:
        raise GoogleError(400, "* BatchGenerateContentRequest.batch.display_name: Field required")
    config = _field(batch, "input_config", "inputConfig")
    if not isinstance(config, dict):
        raise GoogleError(400, "* BatchGenerateContentRequest.batch.input_config: Field required")
    _check_names(config, {"requests", "file_name", "fileName"}, "batch.input_config")
    file_name = _field(config, "file_name", "fileName")
    if ("requests" in config) == (file_name is not None):
        raise GoogleError(400, "* BatchGenerateContentRequest.batch.input_config: exactly one of requests or "
                          "file_name is required")
    requests = _from_file(store, file_name) if file_name is not None else _inline(config["requests"])
    state = request.app[STATE]
    created = store.create("gemini", "sim", requests, lambda b: batch_answer(state, model, b), lambda _: model,
                           extra={"model": model, "display_name": label, "inline": file_name is None,
                                  "file_name": file_name})
    return json_response(_operation(store, created))


def _error_status(raw: bytes | None) -> dict[str, Any]:
    """A per-request google.rpc.Status from the synchronous error body (or the injected 500)."""
    if raw is None:
        return _SERVER_ERROR
    err = orjson.loads(raw)["error"]
    return {"code": _GRPC.get(err.get("status"), 2), "message": err.get("message", "")}


def _outputs(store: BatchStore, batch: SimBatch) -> dict[str, Any]:
    lines = []
    for r in batch.results or []:
        if r.kind in ("expired", CANCELLED):
            continue  # never attempted: no response at all
        out: dict[str, Any] = ({"response": orjson.loads(r.body)} if r.kind == "ok" and r.status == 200 else
                               {"error": _error_status(r.body if r.kind == "ok" else None)})
        lines.append((r.custom_id, out))
    if batch.extra["inline"]:
        items = [{**out, "metadata": {"key": key}} for key, out in lines]
        return {"@type": _TYPE + "GenerateContentBatchOutput", "inlinedResponses": {"inlinedResponses": items}}
    if "responses_file" not in batch.extra:
        data = b"".join(orjson.dumps({"key": key, **out}) + b"\n" for key, out in lines)
        batch.extra["responses_file"] = store.add_file(data, "batch_output", "responses.jsonl", "batch-out-",
                                                        "gemini").id
    return {"@type": _TYPE + "GenerateContentBatchOutput", "responsesFile": "files/" + batch.extra["responses_file"]}


def _operation(store: BatchStore, batch: SimBatch) -> dict[str, Any]:
    phase = store.phase(batch)
    state = _ENDED[batch.ended_as] if phase == ENDED and batch.ended_as else \
        "BATCH_STATE_PENDING" if phase == QUEUED else "BATCH_STATE_RUNNING"
    counts = store.counts(batch)
    stats = {"requestCount": str(len(batch.requests)), "successfulRequestCount": str(counts["succeeded"]),
             "failedRequestCount": str(counts["errored"]), "pendingRequestCount": str(counts["processing"])}
    meta = {"@type": _TYPE + "GenerateContentBatch", "model": "models/" + batch.extra["model"],
            "displayName": batch.extra["display_name"], "name": "batches/" + batch.id, "state": state,
            "batchStats": stats}
    if batch.extra["file_name"] is not None:  # inlined requests are not echoed (they may be 20 MB)
        meta["inputConfig"] = {"fileName": batch.extra["file_name"]}
    doc: dict[str, Any] = {"name": "batches/" + batch.id, "metadata": meta}
    if phase == ENDED:
        doc["done"] = True
        if batch.ended_as == FAILED:
            doc["error"] = {"code": 3, "message": "The batch failed validation."}
        else:
            doc["response"] = _outputs(store, batch)
    return doc


def _batch(store: BatchStore, batch_id: str) -> SimBatch:
    batch = store.get(batch_id)
    if batch is None or batch.provider != "gemini":
        raise GoogleError(404, f"Batch batches/{batch_id} not found.", "NOT_FOUND")
    return batch


async def batch_target(request: web.Request, store: BatchStore) -> web.Response:
    """GET /v1beta/batches/{id}; POST /v1beta/batches/{id}:cancel."""
    batch_id, _, method = request.match_info["target"].partition(":")
    batch = _batch(store, batch_id)
    if request.method == "GET" and not method:
        return json_response(_operation(store, batch))
    if request.method == "POST" and method == "cancel":
        store.cancel(batch)
        return json_response({})
    raise GoogleError(404, f"Method not found: {method or '(none)'}", "NOT_FOUND")


async def list_batches(request: web.Request, store: BatchStore) -> web.Response:
    """GET /v1beta/batches?pageSize=&pageToken= (the token is the index of the next batch)."""
    size = min(1000, max(1, int(request.query.get("pageSize", "50"))))
    start = int(request.query.get("pageToken") or 0)
    batches = store.listed("gemini")
    doc: dict[str, Any] = {"operations": [_operation(store, b) for b in batches[start:start + size]]}
    if start + size < len(batches):
        doc["nextPageToken"] = str(start + size)
    return json_response(doc)


async def upload(request: web.Request, store: BatchStore) -> web.Response:
    """POST /upload/v1beta/files: the resumable protocol's start, then its "upload, finalize"."""
    command = request.headers.get("X-Goog-Upload-Command", "")
    upload_id = request.query.get("upload_id")
    if upload_id is None:
        if request.headers.get("X-Goog-Upload-Protocol") != "resumable" or command != "start":
            raise GoogleError(400, "Upload requests must use X-Goog-Upload-Protocol: resumable and start.")
        meta = (orjson.loads(await request.read() or b"{}").get("file") or {})
        pending = store.add_file(b"", "pending", str(_field(meta, "display_name", "displayName") or ""), "upload-",
                                 "gemini")
        url = f"{request.scheme}://{request.host}/upload/v1beta/files?upload_id={pending.id}"
        return json_response({}, {"X-Goog-Upload-URL": url, "X-Goog-Upload-Status": "active"})
    started = store.files.get(upload_id)
    if started is None or started.purpose != "pending":
        raise GoogleError(404, f"Upload {upload_id} not found.", "NOT_FOUND")
    if "upload" not in command or "finalize" not in command or request.headers.get("X-Goog-Upload-Offset") != "0":
        raise GoogleError(400, "The simulator takes the whole file in one 'upload, finalize' at offset 0.")
    data = await request.read()
    del store.files[upload_id]
    stored = store.add_file(data, "batch", started.filename, "", "gemini")
    return json_response({"file": {"name": "files/" + stored.id, "displayName": stored.filename, "mimeType": "application/jsonl",
                           "sizeBytes": str(len(data)), "state": "ACTIVE", "uri": f"files/{stored.id}"}})


def _file(store: BatchStore, file_id: str) -> Any:
    f = store.files.get(file_id)
    if f is None or f.owner != "gemini" or f.purpose == "pending":
        raise GoogleError(404, f"File files/{file_id} not found.", "NOT_FOUND")
    return f


def _file_resource(f: Any) -> dict[str, Any]:
    made = datetime.fromtimestamp(f.created, timezone.utc).isoformat().replace("+00:00", "Z")
    gone = datetime.fromtimestamp(f.created + 48 * 3600, timezone.utc).isoformat().replace("+00:00", "Z")
    return {"name": "files/" + f.id, "displayName": f.filename, "mimeType": "application/jsonl",
            "sizeBytes": str(len(f.data)), "createTime": made, "updateTime": made, "expirationTime": gone,
            "uri": f"files/{f.id}", "state": "ACTIVE",
            "source": "GENERATED" if f.purpose == "batch_output" else "UPLOADED"}


async def download(request: web.Request, store: BatchStore) -> web.Response:
    """GET /download/v1beta/files/{id}:download?alt=media."""
    file_id, _, method = request.match_info["target"].partition(":")
    f = _file(store, file_id)
    if method != "download" or request.query.get("alt") != "media":
        raise GoogleError(404, f"File files/{file_id} not found.", "NOT_FOUND")
    return web.Response(body=f.data, content_type="application/jsonl")


async def file_target(request: web.Request, store: BatchStore) -> web.Response:
    """GET /v1beta/files/{id} (the File); DELETE /v1beta/files/{id} (an empty answer)."""
    f = _file(store, request.match_info["id"])
    if request.method == "DELETE":
        del store.files[f.id]
        return json_response({})
    return json_response(_file_resource(f))


async def list_files(request: web.Request, store: BatchStore) -> web.Response:
    """GET /v1beta/files?pageSize=&pageToken= (at most 100 a page; the token is the next index)."""
    size = min(100, max(1, int(request.query.get("pageSize", "10"))))
    start = int(request.query.get("pageToken") or 0)
    files = store.listed_files("gemini")
    doc: dict[str, Any] = {"files": [_file_resource(f) for f in files[start:start + size]]}
    if start + size < len(files):
        doc["nextPageToken"] = str(start + size)
    return json_response(doc)


def add_routes(app: web.Application) -> None:
    app[MODEL_METHODS]["batchGenerateContent"] = _guarded(create_batch)
    app.router.add_get("/v1beta/batches", _guarded(list_batches))
    app.router.add_route("*", "/v1beta/batches/{target}", _guarded(batch_target))
    app.router.add_post("/upload/v1beta/files", _guarded(upload))
    app.router.add_get("/download/v1beta/files/{target}", _guarded(download))
    app.router.add_get("/v1beta/files", _guarded(list_files))
    app.router.add_route("GET", "/v1beta/files/{id}", _guarded(file_target))
    app.router.add_route("DELETE", "/v1beta/files/{id}", _guarded(file_target))

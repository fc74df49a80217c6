"""OpenAI Files + Batch API for chat completions, simulated (simulator/batches.py holds the machinery).

``POST /v1/files`` (multipart: ``purpose``, ``file``), ``GET /v1/files`` (newest
first, ``purpose`` / ``limit`` / ``order`` / ``after``), ``GET /v1/files/{id}`` and
``/content``, ``DELETE /v1/files/{id}``; ``POST /v1/batches``, ``GET /v1/batches`` (newest first,
``limit`` / ``after``), ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``.
As strict as the real API where a client can get it wrong: the purpose, the
endpoint, the completion window, metadata limits, and the input file's lines
(a bad file makes the batch fail validation, with the API's error codes).
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from simulator.batches import (CANCELLED, CANCELLING, COMPLETED, ENDED, EXPIRED, FAILED, FINALIZING,
                               QUEUED, RUNNING, BatchStore, SimBatch, after, guarded, json_response)
from simulator.openai import STATE, RequestError, _authorized, _unauthorized, batch_answer, error_response

PURPOSES = ("assistants", "batch", "fine-tune", "vision", "user_data", "evals")
ENDPOINTS = ("/v1/responses", "/v1/chat/completions", "/v1/embeddings", "/v1/completions", "/v1/moderations")
MAX_REQUESTS, MAX_FILE_BYTES = 50_000, 200 * 1024 * 1024
_WORDS = {QUEUED: "validating", RUNNING: "in_progress", FINALIZING: "finalizing", CANCELLING: "cancelling",
          COMPLETED: "completed", EXPIRED: "expired", CANCELLED: "cancelled", FAILED: "failed"}
_SERVER_ERROR = orjson.dumps({"error": {"message": "The server had an error while processing your request. "
                                        "Sorry about that!", "type": "server_error", "param": None, "code": None}})
_NOT_RUN = {"expired": ("batch_expired", "This request could not be executed before the completion window expired."),
            "cancelled": ("batch_cancelled", "This request was not executed because the batch was cancelled.")}


def _file_object(f: Any) -> dict[str, Any]:
    return {"id": f.id, "object": "file", "bytes": len(f.data), "created_at": f.created, "filename": f.filename,
            "purpose": f.purpose, "status": "processed"}


_guarded = guarded(lambda request, state: None if _authorized(request, state) else _unauthorized(), RequestError,
                   lambda err: error_response(err.status, err.message, err.type, err.param, err.code))


async def upload_file(request: web.Request, store: BatchStore) -> web.Response:
    """POST /v1/files."""
    if not request.content_type.startswith("multipart/"):
        raise RequestError(400, "Invalid request: expected multipart/form-data.")
    form = await request.post()
    purpose = form.get("purpose")
    upload = form.get("file")
    if purpose is not None and not isinstance(purpose, str):
        raise RequestError(400, "Invalid type for 'purpose': expected a string.", "purpose", "invalid_type")
    if purpose is None:
        raise RequestError(400, "Missing required parameter: 'purpose'.", "purpose", "missing_required_parameter")
    if purpose not in PURPOSES:
        allowed = ", ".join(f"'{p}'" for p in PURPOSES)
        raise RequestError(400, f"Invalid value: '{purpose}'. Supported values are: {allowed}.", "purpose",
                           "invalid_value")
    if not isinstance(upload, web.FileField):
        raise RequestError(400, "Missing required parameter: 'file'.", "file", "missing_required_parameter")
    data = upload.file.read()
    if purpose == "batch" and len(data) > MAX_FILE_BYTES:
        raise RequestError(400, f"File is too large: {len(data)} bytes; a batch file can be up to 200 MB.", "file")
    stored = store.add_file(data, str(purpose), upload.filename, "file-sim", "openai")
    return json_response(_file_object(stored))


def _stored(store: BatchStore, file_id: str) -> Any:
    f = store.files.get(file_id)
    if f is None or f.owner != "openai":
        raise RequestError(404, f"No such File object: {file_id}", "id", None)
    return f


async def file_content(request: web.Request, store: BatchStore) -> web.Response:
    """GET /v1/files/{id}/content."""
    return web.Response(body=_stored(store, request.match_info["id"]).data, content_type="application/octet-stream")


async def file_object(request: web.Request, store: BatchStore) -> web.Response:
    """GET /v1/files/{id}."""
    return json_response(_file_object(_stored(store, request.match_info["id"])))


async def delete_file(request: web.Request, store: BatchStore) -> web.Response:
    """DELETE /v1/files/{id}."""
    f = _stored(store, request.match_info["id"])
    del store.files[f.id]
    return json_response({"id": f.id, "object": "file", "deleted": True})


async def list_files(request: web.Request, store: BatchStore) -> web.Response:
    """GET /v1/files?purpose=&limit=&order=&after= (newest first unless order=asc)."""
    limit = min(10_000, max(1, int(request.query.get("limit", "10000"))))
    purpose = request.query.get("purpose")
    files = [f for f in store.listed_files("openai") if purpose is None or f.purpose == purpose]
    if request.query.get("order") == "asc":
        files.reverse()
    after_id = request.query.get("after")
    if after_id:
        ids = [f.id for f in files]
        files = files[ids.index(after_id) + 1:] if after_id in ids else []
    data = [_file_object(f) for f in files[:limit]]
    return json_response({"object": "list", "data": data, "first_id": data[0]["id"] if data else None,
                          "last_id": data[-1]["id"] if data else None, "has_more": len(files) > limit})


def _check_metadata(metadata: Any) -> None:
    if metadata is None:
        return
    if not isinstance(metadata, dict) or len(metadata) > 16:
        raise RequestError(400, "Invalid 'metadata': expected an object with at most 16 keys.", "metadata",
                           "invalid_value")
    for k, v in metadata.items():
        if len(k) > 64 or not isinstance(v, str) or len(v) > 512:
            raise RequestError(400, "Invalid 'metadata': keys are strings of at most 64 characters and values "
                               "strings of at most 512.", "metadata", "invalid_value")


def _read_lines(data: bytes, endpoint: str) -> tuple[list[tuple[str, Any]], list[dict[str, Any]]]:
    """(requests, validation errors) of an input file, with the API's error codes."""
    requests: list[tuple[str, Any]] = []
    errors: list[dict[str, Any]] = []
    seen: set[str] = set()
    models: set[str] = set()

    def error(code: str, message: str, line: int | None) -> None:
        errors.append({"code": code, "message": message, "param": None, "line": line})

    lines = [ln for ln in data.splitlines() if ln.strip()]
    if not lines:
        error("empty_file", "The input file is empty.", None)
    if len(lines) > MAX_REQUESTS:
        error("too_many_requests", f"The input file has {len(lines)} requests; at most {MAX_REQUESTS}.", None)
    for n, raw in enumerate(lines, 1):
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError:
            error("invalid_json_line", "This line is not parseable as valid JSON.", n)
            continue
        custom_id = doc.get("custom_id") if isinstance(doc, dict) else None
        if not isinstance(custom_id, str) or not custom_id:
            error("missing_required_parameter", "Missing required parameter: 'custom_id'.", n)
            continue
        if custom_id in seen:
            error("duplicate_custom_id", f"The custom_id '{custom_id}' is not unique within the input file.", n)
        if doc.get("method") != "POST":
            error("invalid_method", "The method must be 'POST'.", n)
        if doc.get("url") != endpoint:
            error("mismatched_endpoint", f"The url '{doc.get('url')}' does not match the batch's endpoint "
                  f"'{endpoint}'.", n)
        body = doc.get("body")
        if not isinstance(body, dict):
            error("missing_required_parameter", "Missing required parameter: 'body'.", n)
            continue
        models.add(str(body.get("model")))
        seen.add(custom_id)
        requests.append((custom_id, body))
    if len(models) > 1:
        error("mismatched_model", "All requests in a batch must use the same model.", None)
    return requests, errors


async def create_batch(request: web.Request, store: BatchStore) -> web.Response:
    """POST /v1/batches."""
    try:
        body = orjson.loads(await request.read())
    except orjson.JSONDecodeError:
        raise RequestError(400, "We could not parse the JSON body of your request.") from None
    if not isinstance(body, dict):
        raise RequestError(400, "Invalid request body: expected a JSON object.")
    for key in ("input_file_id", "endpoint", "completion_window"):
        if key not in body:
            raise RequestError(400, f"Missing required parameter: '{key}'.", key, "missing_required_parameter")
    endpoint, window = body["endpoint"], body["completion_window"]
    if endpoint not in ENDPOINTS:
        allowed = ", ".join(f"'{e}'" for e in ENDPOINTS)
        raise RequestError(400, f"Invalid value: '{endpoint}'. Supported values are: {allowed}.", "endpoint",
                           "invalid_value")
    if endpoint != "/v1/chat/completions":
        raise RequestError(400, f"The simulator batches /v1/chat/completions only, not '{endpoint}'.", "endpoint",
                           "invalid_value")
    if window != "24h":
        raise RequestError(400, f"Invalid value: '{window}'. Supported values are: '24h'.", "completion_window",
                           "invalid_value")
    _check_metadata(body.get("metadata"))
    f = _stored(store, str(body["input_file_id"]))
    if f.purpose != "batch":
        raise RequestError(400, f"The input file {f.id} must have purpose 'batch', not '{f.purpose}'.",
                           "input_file_id", "invalid_value")
    requests, errors = _read_lines(f.data, endpoint)
    state = request.app[STATE]
    batch = store.create("openai", "batch_sim", [] if errors else requests, lambda b: batch_answer(state, b),
                         lambda b: str(b.get("model")),
                         extra={"input_file_id": f.id, "metadata": body.get("metadata"), "endpoint": endpoint},
                         errors=errors)
    return json_response(_batch_object(store, batch))


def _result_files(store: BatchStore, batch: SimBatch) -> tuple[str | None, str | None]:
    """The output and error files of an ended batch, written once."""
    if "output_file_id" not in batch.extra:
        out: list[bytes] = []
        err: list[bytes] = []
        for r in batch.results or []:
            line: dict[str, Any] = {"id": f"batch_req_{batch.id}_{r.custom_id}", "custom_id": r.custom_id}
            if r.kind in _NOT_RUN:
                code, message = _NOT_RUN[r.kind]
                line.update(response=None, error={"code": code, "message": message})
            else:
                body = orjson.loads(r.body if r.kind == "ok" else _SERVER_ERROR)
                line.update(response={"status_code": r.status, "request_id": f"req_{r.custom_id}", "body": body},
                            error=None)
            (out if r.status == 200 else err).append(orjson.dumps(line) + b"\n")
        batch.extra["output_file_id"] = store.add_file(b"".join(out), "batch_output", "output.jsonl",
                                                       "file-sim", "openai").id if out else None
        batch.extra["error_file_id"] = store.add_file(b"".join(err), "batch_output", "errors.jsonl",
                                                      "file-sim", "openai").id if err else None
    return batch.extra["output_file_id"], batch.extra["error_file_id"]


def _batch_object(store: BatchStore, batch: SimBatch) -> dict[str, Any]:
    phase = store.phase(batch)
    word = _WORDS[batch.ended_as if phase == ENDED else phase]  # type: ignore[index]
    counts = store.counts(batch)
    out_id, err_id = _result_files(store, batch) if phase == ENDED else (None, None)
    ended = batch.ended_at if phase == ENDED else None
    return {
        "id": batch.id, "object": "batch", "endpoint": batch.extra["endpoint"],
        "errors": {"object": "list", "data": batch.errors} if batch.errors else None,
        "input_file_id": batch.extra["input_file_id"], "completion_window": "24h", "status": word,
        "output_file_id": out_id, "error_file_id": err_id, "created_at": batch.created_at,
        "in_progress_at": batch.created_at if word != "validating" else None,
        "expires_at": batch.created_at + 86400, "completed_at": ended if word == "completed" else None,
        "failed_at": ended if word == "failed" else None, "expired_at": ended if word == "expired" else None,
        "cancelling_at": batch.created_at if batch.cancel_at is not None else None,
        "cancelled_at": ended if word == "cancelled" else None,
        "request_counts": {"total": len(batch.requests), "completed": counts["succeeded"],
                           "failed": sum(counts.values()) - counts["succeeded"] - counts["processing"]},
        "metadata": batch.extra.get("metadata"),
    }


def _batch(store: BatchStore, batch_id: str) -> SimBatch:
    batch = store.get(batch_id)
    if batch is None or batch.provider != "openai":
        raise RequestError(404, f"No batch found with id '{batch_id}'.", None, "not_found", "invalid_request_error")
    return batch


async def get_batch(request: web.Request, store: BatchStore) -> web.Response:
    """GET /v1/batches/{id}."""
    return json_response(_batch_object(store, _batch(store, request.match_info["id"])))


async def cancel_batch(request: web.Request, store: BatchStore) -> web.Response:
    """POST /v1/batches/{id}/cancel."""
    batch = _batch(store, request.match_info["id"])
    if not store.cancel(batch):
        raise RequestError(409, f"Cannot cancel a batch with status '{_WORDS[batch.ended_as or COMPLETED]}'.")
    return json_response(_batch_object(store, batch))


async def list_batches(request: web.Request, store: BatchStore) -> web.Response:
    """GET /v1/batches?limit=&after=."""
    limit = min(100, max(1, int(request.query.get("limit", "20"))))
    batches = after(store.listed("openai"), request.query.get("after"))
    page = batches[:limit]
    data = [_batch_object(store, b) for b in page]
    return json_response({"object": "list", "data": data, "first_id": data[0]["id"] if data else None,
                  "last_id": data[-1]["id"] if data else None, "has_more": len(batches) > limit})


def add_routes(app: web.Application) -> None:
    app.router.add_post("/v1/files", _guarded(upload_file))
    app.router.add_get("/v1/files", _guarded(list_files))
    app.router.add_delete("/v1/files/{id}", _guarded(delete_file))
    app.router.add_get("/v1/files/{id}", _guarded(file_object))
    app.router.add_get("/v1/files/{id}/content", _guarded(file_content))
    app.router.add_post("/v1/batches", _guarded(create_batch))
    app.router.add_get("/v1/batches", _guarded(list_batches))
    app.router.add_get("/v1/batches/{id}", _guarded(get_batch))
    app.router.add_post("/v1/batches/{id}/cancel", _guarded(cancel_batch))

"""Anthropic Message Batches, simulated (simulator/batches.py holds the machinery).

``POST /v1/messages/batches {"requests": [{"custom_id", "params"}]}``, ``GET
/v1/messages/batches`` (newest first), ``GET /v1/messages/batches/{id}``,
``POST .../{id}/cancel``, ``GET .../{id}/results`` (JSONL, once ended). The
batch itself is checked at creation (1 to 100,000 requests, ``custom_id``
matching ``^[a-zA-Z0-9_-]{1,64}$`` and unique, nothing but ``custom_id`` and
``params``); each request's ``params`` only when it is processed, as the real
API does, so a bad one is an ``errored`` result.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

import orjson
from aiohttp import web

from simulator.anthropic import AnthropicError, batch_answer, check_headers, error_response
from simulator.batches import CANCELLED, CANCELLING, ENDED, BatchStore, SimBatch, after, guarded, json_response
from simulator.openai import STATE

MAX_REQUESTS = 100_000
CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_SERVER_ERROR = {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}


def _iso(unix: float | None) -> str | None:
    if unix is None:
        return None
    return datetime.fromtimestamp(unix, timezone.utc).isoformat().replace("+00:00", "Z")


_guarded = guarded(check_headers, AnthropicError, lambda err: error_response(err.status, err.type, err.message))


def _requests(body: Any) -> list[tuple[str, Any]]:
    if not isinstance(body, dict):
        raise AnthropicError(400, "Input should be a valid dictionary")
    for key in body:
        if key != "requests":
            raise AnthropicError(400, f"{key}: Extra inputs are not permitted")
    items = body.get("requests")
    if not isinstance(items, list):
        raise AnthropicError(400, "requests: Field required")
    if not 1 <= len(items) <= MAX_REQUESTS:
        raise AnthropicError(400, f"requests: List should have at least 1 item and at most {MAX_REQUESTS} items")
    out, seen = [], set()
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise AnthropicError(400, f"requests.{i}: Input should be a valid dictionary")
        for key in item:
            if key not in ("custom_id", "params"):
                raise AnthropicError(400, f"requests.{i}.{key}: Extra inputs are not permitted")
        for key in ("custom_id", "params"):
            if key not in item:
                raise AnthropicError(400, f"requests.{i}.{key}: Field required")
        custom_id = item["custom_id"]
        if not isinstance(custom_id, str) or not CUSTOM_ID.fullmatch(custom_id):
            raise AnthropicError(400, f"requests.{i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")
        if custom_id in seen:
            raise AnthropicError(400, f"Duplicate custom_id '{custom_id}': each request's custom_id must be unique "
                                 "within the Message Batch.")
        if not isinstance(item["params"], dict):
            raise AnthropicError(400, f"requests.{i}.params: Input should be a valid dictionary")
        seen.add(custom_id)
        out.append((custom_id, item["params"]))
    return out


async def create_batch(request: web.Request, store: BatchStore) -> web.Response:
    """POST /v1/messages/batches."""
    try:
        body = orjson.loads(await request.read())
    except orjson.JSONDecodeError:
        raise AnthropicError(400, "There was an issue with your request body: invalid JSON") from None
    state = request.app[STATE]
    batch = store.create("anthropic", "msgbatch_sim", _requests(body), lambda params: batch_answer(state, params),
                         lambda params: str(params.get("model")))
    return json_response(_batch_object(request, store, batch))


def _batch_object(request: web.Request, store: BatchStore, batch: SimBatch) -> dict[str, Any]:
    phase = store.phase(batch)
    counts = store.counts(batch)
    word = "ended" if phase == ENDED else "canceling" if phase == CANCELLING else "in_progress"
    root = f"{request.scheme}://{request.host}"
    return {
        "id": batch.id, "type": "message_batch", "processing_status": word,
        "request_counts": {"processing": counts["processing"], "succeeded": counts["succeeded"],
                           "errored": counts["errored"], "canceled": counts[CANCELLED],
                           "expired": counts["expired"]},
        "ended_at": _iso(batch.ended_at), "created_at": _iso(batch.created_at),
        "expires_at": _iso(batch.created_at + 86400), "archived_at": None,
        "cancel_initiated_at": _iso(batch.created_at) if batch.cancel_at is not None else None,
        "results_url": f"{root}/v1/messages/batches/{batch.id}/results" if phase == ENDED else None,
    }


def _batch(store: BatchStore, batch_id: str) -> SimBatch:
    batch = store.get(batch_id)
    if batch is None or batch.provider != "anthropic":
        raise AnthropicError(404, f"message_batch_id: no Message Batch {batch_id!r}", "not_found_error")
    return batch


async def get_batch(request: web.Request, store: BatchStore) -> web.Response:
    """GET /v1/messages/batches/{id}."""
    return json_response(_batch_object(request, store, _batch(store, request.match_info["id"])))


async def cancel_batch(request: web.Request, store: BatchStore) -> web.Response:
    """POST /v1/messages/batches/{id}/cancel (a no-op on an ended batch, which it reports as is)."""
    batch = _batch(store, request.match_info["id"])
    store.cancel(batch)
    return json_response(_batch_object(request, store, batch))


async def batch_results(request: web.Request, store: BatchStore) -> web.Response:
    """GET /v1/messages/batches/{id}/results: one JSON line per request."""
    batch = _batch(store, request.match_info["id"])
    if store.phase(batch) != ENDED:
        raise AnthropicError(400, f"Message Batch {batch.id} has not ended: its results are not available yet.")
    lines = []
    for r in batch.results or []:
        result: dict[str, Any]
        if r.kind == "ok" and r.status == 200:
            result = {"type": "succeeded", "message": orjson.loads(r.body)}
        elif r.kind in ("ok", "error"):
            result = {"type": "errored", "error": orjson.loads(r.body) if r.kind == "ok" else _SERVER_ERROR}
        else:
            result = {"type": "canceled" if r.kind == CANCELLED else "expired"}
        lines.append(orjson.dumps({"custom_id": r.custom_id, "result": result}) + b"\n")
    return web.Response(body=b"".join(lines), content_type="application/binary")


async def list_batches(request: web.Request, store: BatchStore) -> web.Response:
    """GET /v1/messages/batches?limit=&after_id=."""
    limit = min(1000, max(1, int(request.query.get("limit", "20"))))
    batches = after(store.listed("anthropic"), request.query.get("after_id"))
    data = [_batch_object(request, store, b) for b in batches[:limit]]
    return json_response({"data": data, "has_more": len(batches) > limit, "first_id": data[0]["id"] if data else None,
                  "last_id": data[-1]["id"] if data else None})


def add_routes(app: web.Application) -> None:
    app.router.add_post("/v1/messages/batches", _guarded(create_batch))
    app.router.add_get("/v1/messages/batches", _guarded(list_batches))
    app.router.add_get("/v1/messages/batches/{id}", _guarded(get_batch))
    app.router.add_post("/v1/messages/batches/{id}/cancel", _guarded(cancel_batch))
    app.router.add_get("/v1/messages/batches/{id}/results", _guarded(batch_results))

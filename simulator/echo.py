"""Echo mode (``echo_key``): a careless gateway that sends the caller's key back.

Every JSON answer, 200 or error, gets the key appended to its text-like
fields (the answer, the model name, the error message), whole, in part
(characters 4-16) and upper-cased; the response also carries it in a header.
Basic credentials (a base_url's ``user:password@``) are echoed as ``user:password``.
A client must keep all of it out of what it stores and prints.
"""

from __future__ import annotations

import base64
import contextlib
from typing import Any

import orjson
from aiohttp import web

ECHO_HEADER = "x-echo-key"
# Fields a client reads as text; structural fields (types, roles, finish reasons) are left alone
# so that the wire stays parseable.
_TEXT_FIELDS = {"content", "text", "message", "model", "modelVersion", "id"}


def presented_key(request: web.Request) -> str | None:
    """The caller's key, or its Basic credentials as ``user:password`` (what a careless proxy prints)."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme == "Basic":
        with contextlib.suppress(ValueError):
            token = base64.b64decode(token, validate=True).decode("latin-1")
    return (token if scheme in ("Bearer", "Basic") else None) or request.headers.get("x-api-key") \
        or request.headers.get("x-goog-api-key") or request.query.get("key")


def echo(key: str) -> str:
    return f" [key {key} part {key[4:16]} upper {key.upper()}]"


def _inject(node: Any, suffix: str) -> Any:
    if isinstance(node, dict):
        return {k: v + suffix if k in _TEXT_FIELDS and isinstance(v, str) else _inject(v, suffix)
                for k, v in node.items()}
    if isinstance(node, list):
        return [_inject(v, suffix) for v in node]
    return node


@web.middleware
async def echo_key_middleware(request: web.Request, handler: Any) -> web.StreamResponse:
    resp = await handler(request)
    key = presented_key(request)
    if not key or not isinstance(resp, web.Response) or resp.body is None:
        return resp
    try:
        doc = orjson.loads(resp.body)  # type: ignore[arg-type]
    except (orjson.JSONDecodeError, TypeError):
        return resp
    headers = {k: v for k, v in resp.headers.items() if k.lower() not in ("content-length", "content-type")}
    headers[ECHO_HEADER] = key
    return web.Response(status=resp.status, body=orjson.dumps(_inject(doc, echo(key))),
                        content_type="application/json", headers=headers)

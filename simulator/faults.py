"""The faults every simulated wire renders alike: a dropped connection and a cut-off 200 body."""

from __future__ import annotations

import asyncio

from aiohttp import web

from simulator.core import SimState


def transport_fault(request: web.Request, state: SimState, model: str, kind: str, malformed: bytes,
                    headers: dict[str, str]) -> web.Response | None:
    """The response for a "drop" or "malformed" decision (None for any other kind)."""
    if kind == "drop":
        state.record(model, "dropped")
        # Close the socket with nothing written, then abort the handler: the
        # client sees a server disconnect, as with a crashed proxy.
        if request.transport is not None:
            request.transport.close()
        raise asyncio.CancelledError
    if kind == "malformed":
        state.record(model, 200)
        return web.Response(body=malformed, headers=headers)
    return None

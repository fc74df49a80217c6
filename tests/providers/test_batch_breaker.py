"""A dead batch endpoint costs a bounded time, as a synchronous one does: the batch wire goes through
the endpoint's circuit breaker (the adapter's, shared with its synchronous calls) and raises
Unreachable, so the lane stops with its items unasked and the sweep exits 3."""

import socket

import anyio
import pytest

from providers.breaker import Breaker
from providers.errors import Unreachable
from providers.limits import Limits
from providers.registry import make_batch_api, make_provider
from tests.providers.batch_helpers import GEN, KEY, requests


def dead_root() -> str:
    """A loopback URL nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
async def test_a_dead_batch_endpoint_raises_unreachable_through_the_shared_breaker(provider):
    root = dead_root()
    base = root + "/v1" if provider == "openai" else root
    breaker = Breaker(base, unreachable_after_s=0.5)
    adapter = make_provider(provider, base_url=base, model="m1", api_key=KEY, generation=GEN, limits=Limits(),
                            timeout_s=5, max_retries=2, max_connections=4, backoff_base_s=0.01, breaker=breaker)
    batch = make_batch_api(provider, adapter)
    try:
        with anyio.fail_after(15):
            with pytest.raises(Unreachable):
                await batch.submit(requests(adapter, [0, 1]), label="dead")
            with pytest.raises(Unreachable):  # every later call at once
                await batch.status("any")
    finally:
        await batch.aclose()
        await adapter.aclose()
    assert breaker.given_up  # what the sweep reads for its exit status

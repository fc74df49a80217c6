"""Creating a batch is never retried blindly: a create whose answer was lost may have created the
batch, and a second one would be paid and answered twice. The wire finds it by its label instead
(OpenAI, Gemini) or reports the failure (Anthropic, which cannot find a batch)."""

import asyncio

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from providers.errors import ErrorClass, ProviderError
from simulator.core import config_from_knobs
from simulator.openai import STATE
from simulator.server import build_app
from tests.providers.batch_helpers import KEY, requests, wires

CREATE = {"openai": "/v1/batches", "anthropic": "/v1/messages/batches", "gemini": ":batchGenerateContent"}


class Root:
    """What ``wires`` needs of a simulator: its URLs."""

    def __init__(self, root: str):
        self.root_url, self.base_url = root, root + "/v1"


@pytest.fixture
async def lossy():
    """start(provider) -> (server, its state): the first create of a batch is carried out, and its
    answer lost (the connection closes before a byte is written)."""
    servers = []

    async def start(provider):
        dropped = []

        @web.middleware
        async def lose_first_create(request, handler):
            resp = await handler(request)
            if request.method == "POST" and request.path.endswith(CREATE[provider]) and not dropped:
                dropped.append(request.path)
                request.transport.close()
                raise asyncio.CancelledError
            return resp

        app = build_app(config_from_knobs(mode="gold", api_key=KEY, batch_latency_s=0.2),
                        middlewares=[lose_first_create])
        server = TestServer(app)
        await server.start_server()
        servers.append(server)
        return Root(str(server.make_url("")).rstrip("/")), app[STATE]

    yield start
    for server in servers:
        await server.close()


@pytest.mark.parametrize("provider", ["openai", "gemini"])
async def test_a_lost_create_answer_is_found_by_label(lossy, provider):
    sim, state = await lossy(provider)
    async with wires(sim, provider) as (adapter, batch):
        batch_id = await batch.submit(requests(adapter, [0, 1]), label="lost-answer")
        assert await batch.find("lost-answer") == batch_id
    assert state.stats.batches_created == {provider: 1}


async def test_anthropic_reports_a_lost_create_answer_and_does_not_retry(lossy):
    sim, state = await lossy("anthropic")
    async with wires(sim, "anthropic") as (adapter, batch):
        with pytest.raises(ProviderError) as e:
            await batch.submit(requests(adapter, [0, 1]), label="lost-answer")
    assert e.value.klass is ErrorClass.TRANSIENT and e.value.status is None
    assert state.stats.batches_created == {"anthropic": 1}

"""Creating a batch is never retried blindly: a create whose answer was lost may have created the
batch, and a second one would be paid and answered twice. The wire finds it by its label instead
(OpenAI, Gemini), or among the recent batches by its size, creation time and custom_ids (Anthropic,
whose batches carry no label)."""

import asyncio
import time

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from providers.batch.core import LostCreate
from providers.batch.anthropic import WINDOW_S
from providers.errors import ProviderError
from simulator.core import config_from_knobs
from simulator.openai import STATE
from simulator.process import SimServerProcess
from simulator.server import build_app
from tests.providers.batch_helpers import KEY, http, requests, wait, wires

HEADERS = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}

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


@pytest.fixture(scope="module")
def sim():
    with SimServerProcess(mode="gold", api_key=KEY, batch_latency_s=0.3) as s:
        yield s


@pytest.mark.parametrize("provider", ["openai", "gemini"])
async def test_a_lost_create_answer_is_found_by_label(lossy, provider):
    sim, state = await lossy(provider)
    async with wires(sim, provider) as (adapter, batch):
        batch_id = await batch.submit(requests(adapter, [0, 1]), label="lost-answer")
        assert await batch.find("lost-answer") == batch_id
    assert state.stats.batches_created == {provider: 1}


async def test_an_anthropic_lost_create_answer_is_found_among_recent_batches(lossy):
    """It raised, and the engine submitted the items again: paid and answered twice."""
    sim, state = await lossy("anthropic")
    async with wires(sim, "anthropic") as (adapter, batch):
        batch_id = await batch.submit(requests(adapter, [0, 1]), label="lost-answer")
        assert batch_id.startswith("msgbatch_")
    assert state.stats.batches_created == {"anthropic": 1}


async def raw_create(sim, custom_ids):
    """A Message Batch created behind the wire's back (as by a run whose create answer was lost)."""
    body = {"requests": [{"custom_id": c, "params": {"model": "m1", "max_tokens": 8,
                                                      "messages": [{"role": "user", "content": f"Q {c}"}]}}
                         for c in custom_ids]}
    status, doc = await http("POST", sim.root_url + "/v1/messages/batches", headers=HEADERS, body=body)
    assert status == 200
    return doc["id"]


async def test_after_a_restart_an_anthropic_batch_is_recognised_by_what_the_engine_recorded(sim):
    since = time.time()
    lost = await raw_create(sim, ["c-0", "c-1"])
    other = await raw_create(sim, ["x-0", "x-1"])  # same size, same minute: its results tell it apart
    await raw_create(sim, ["c-0", "c-1", "c-2"])  # another size
    async with wires(sim, "anthropic") as (_, batch):  # a new process: it submitted nothing itself
        for b in (lost, other):
            await wait(batch, b)
        hint = LostCreate(("c-0", "c-1"), since)
        assert await batch.find("eng-label", hint) == lost
        assert await batch.find("eng-label", LostCreate(("c-0", "c-1"), since, frozenset({lost}))) is None
        assert await batch.find("eng-label", LostCreate(("c-0", "c-1"), since + 2 * WINDOW_S)) is None
        assert await batch.find("eng-label") is None  # nothing recorded: nothing to recognise it by


async def test_an_anthropic_lost_create_is_not_guessed_among_running_look_alikes():
    with SimServerProcess(mode="gold", api_key=KEY, batch_latency_s=30) as slow:
        since = time.time()
        await raw_create(slow, ["c-0", "c-1"])
        await raw_create(slow, ["x-0", "x-1"])  # running: its custom_ids cannot be read yet
        async with wires(slow, "anthropic") as (_, batch):
            with pytest.raises(ProviderError, match="2 batches could be the one"):
                await batch.find("eng-label", LostCreate(("c-0", "c-1"), since))

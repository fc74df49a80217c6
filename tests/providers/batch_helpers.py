"""Shared by the batch-wire tests: adapters on a simulator process, polling, collecting outcomes."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import aiohttp
import orjson

from benchmark.dataset import Message
from providers.base import ChatResult
from providers.batch.core import TERMINAL, BatchOutcome, BatchRequest, BatchStatus
from providers.errors import ErrorClass
from providers.limits import Limits
from providers.registry import make_batch_api, make_provider
from simulator.process import SimServerProcess

KEY = "sk-batch-test-" + "k" * 24
GEN = {"temperature": 0.0, "max_tokens": 16}


def question(i: int) -> tuple[Message, ...]:
    return (Message("system", "Be brief."), Message("user", f"Q{i}?\nA. yes\nB. no\nC. maybe\n[[gold:{'ABC'[i % 3]}]]"))


@contextlib.asynccontextmanager
async def wires(sim: Any, provider: str, model: str = "m1", **batch_options: Any):
    """(synchronous adapter, its batch API) on the simulator process ``sim``, closed afterwards."""
    base = sim.base_url if provider == "openai" else sim.root_url
    adapter = make_provider(provider, base_url=base, model=model, api_key=KEY, generation=GEN, limits=Limits(),
                            timeout_s=10, max_retries=2, max_connections=8, backoff_base_s=0.01)
    batch = make_batch_api(provider, adapter, **batch_options)
    try:
        yield adapter, batch
    finally:
        await batch.aclose()
        await adapter.aclose()


def requests(adapter: Any, ids: list[int], prefix: str = "item") -> list[BatchRequest]:
    return [BatchRequest(f"{prefix}-{i}", adapter.request_body(question(i))) for i in ids]


async def wait(batch: Any, batch_id: str, limit_s: float = 20.0) -> tuple[BatchStatus, list[str]]:
    """Poll until the batch ends: (last status, the provider's words seen in order, without repeats)."""
    words: list[str] = []
    for _ in range(int(limit_s / 0.05)):
        status = await batch.status(batch_id)
        if not words or words[-1] != status.provider_status:
            words.append(status.provider_status)
        if status.state in TERMINAL:
            return status, words
        await asyncio.sleep(0.05)
    raise AssertionError(f"batch {batch_id} still {words[-1]} after {limit_s} s")


async def outcomes(batch: Any, batch_id: str) -> dict[str, BatchOutcome]:
    out: dict[str, BatchOutcome] = {}
    async for o in batch.results(batch_id):
        assert o.custom_id not in out, f"{o.custom_id} reported twice"
        assert (o.result is None) != (o.error is None)
        out[o.custom_id] = o
    return out


async def run(batch: Any, reqs: list[BatchRequest], label: str = "run") -> tuple[BatchStatus, dict[str, BatchOutcome]]:
    batch_id = await batch.submit(reqs, label=label)
    status, _ = await wait(batch, batch_id)
    return status, await outcomes(batch, batch_id)


def comparable(r: ChatResult) -> ChatResult:
    """A result without what differs between two calls of one request (timing, retries)."""
    r.latency_ms, r.attempts = 0.0, 1
    return r


async def http(method: str, url: str, *, headers: dict[str, str], body: Any = None,
               data: Any = None) -> tuple[int, Any]:
    """A raw call to the simulator: (status, JSON document or bytes)."""
    async with aiohttp.ClientSession() as s:
        payload = orjson.dumps(body) if body is not None else data
        async with s.request(method, url, data=payload, headers=headers) as r:
            raw = await r.read()
            try:
                return r.status, orjson.loads(raw)
            except orjson.JSONDecodeError:
                return r.status, raw


async def same_as_sync(sim: Any, provider: str, model: str) -> ChatResult:
    """Ask one question synchronously and in a batch; both must read the same. Returns the result."""
    async with wires(sim, provider, model=model) as (adapter, batch):
        sync = comparable(await adapter.chat(question(4)))
        _, got = await run(batch, requests(adapter, [4]))
        assert comparable(got["item-4"].result) == sync
    return sync


async def expire_some(provider: str) -> tuple[BatchStatus, dict[str, BatchOutcome], set[str]]:
    """Ten requests, about half left unanswered by the simulator: (status, outcomes, the unanswered)."""
    with SimServerProcess(mode="gold", api_key=KEY, batch_latency_s=0.2, batch_expire_rate=0.5) as sim:
        async with wires(sim, provider) as (adapter, batch):
            status, got = await run(batch, requests(adapter, list(range(10))))
            unanswered = {key.rsplit("/", 1)[1] for key in sim.stats()["batch_unanswered"]}  # model/custom_id
    assert len(got) == 10 and 0 < len(unanswered) < 10
    assert all(got[c].result is not None for c in got if c not in unanswered)
    return status, got, unanswered


async def cancel_at_once(provider: str) -> tuple[BatchStatus, str, dict[str, BatchOutcome]]:
    """A slow batch of two, cancelled as soon as made: (final status, the status word right after
    the cancel, outcomes)."""
    with SimServerProcess(mode="gold", api_key=KEY, batch_latency_s=4.0) as sim:
        async with wires(sim, provider) as (adapter, batch):
            batch_id = await batch.submit(requests(adapter, [0, 1]), label="to-cancel")
            await batch.cancel(batch_id)
            cancelling = (await batch.status(batch_id)).provider_status
            status, _ = await wait(batch, batch_id)
            return status, cancelling, await outcomes(batch, batch_id)


async def all_failing(provider: str) -> tuple[BatchStatus, dict[str, BatchOutcome]]:
    """Two requests on a simulator whose batch requests all fail with a 500."""
    with SimServerProcess(mode="gold", api_key=KEY, batch_latency_s=0.2, batch_error_rate=1.0) as sim:
        async with wires(sim, provider) as (adapter, batch):
            status, got = await run(batch, requests(adapter, [0, 1]))
    assert (status.succeeded, status.failed) == (0, 2)
    assert {(o.error.klass, o.error.status) for o in got.values()} == {(ErrorClass.TRANSIENT, 500)}
    return status, got

"""The OpenAI Batch wire (providers/batch/openai.py) against the simulator, run as a real process."""

import aiohttp
import orjson
import pytest

from benchmark.dataset import Message
from providers.batch.core import CANCELLED, ENDED, EXPIRED, FAILED, BatchRequest
from providers.errors import ErrorClass, ProviderError
from simulator.process import SimServerProcess
from tests.providers.batch_helpers import (KEY, all_failing, cancel_at_once, expire_some, http, outcomes,
                                           requests, run, same_as_sync, wait, wires)

AUTH = {"Authorization": f"Bearer {KEY}"}
PROFILES = {"m-refuse": {"faults": {"refusal": 1.0}}}


@pytest.fixture(scope="module")
def sim():
    with SimServerProcess(mode="gold", api_key=KEY, batch_latency_s=0.4, profiles=PROFILES) as s:
        yield s


async def upload(sim, data: bytes, purpose: str = "batch") -> tuple[int, dict]:
    form = aiohttp.FormData()
    form.add_field("purpose", purpose)
    form.add_field("file", data, filename="in.jsonl", content_type="application/jsonl")
    return await http("POST", sim.base_url + "/files", headers=AUTH, data=form)


async def test_wire_shapes_states_and_answers(sim):
    async with wires(sim, "openai") as (adapter, batch):
        reqs = requests(adapter, [0, 1, 2])
        batch_id = await batch.submit(reqs, label="shapes")
        status, doc = await http("GET", f"{sim.base_url}/batches/{batch_id}", headers=AUTH)
        assert status == 200 and doc["endpoint"] == "/v1/chat/completions" and doc["completion_window"] == "24h"
        assert doc["metadata"] == {"label": "shapes"}
        _, content = await http("GET", f"{sim.base_url}/files/{doc['input_file_id']}/content", headers=AUTH)
        lines = content.splitlines()
        # Each line carries the synchronous body byte for byte.
        assert [orjson.loads(ln)["custom_id"] for ln in lines] == ["item-0", "item-1", "item-2"]
        assert all(orjson.loads(ln)["method"] == "POST" and orjson.loads(ln)["url"] == "/v1/chat/completions"
                   for ln in lines)
        assert lines[1].endswith(b'"body":' + reqs[1].body + b"}")
        final, words = await wait(batch, batch_id)
        assert words == ["validating", "in_progress", "finalizing", "completed"]
        assert (final.state, final.total, final.succeeded, final.failed) == (ENDED, 3, 3, 0)
        got = await outcomes(batch, batch_id)
        assert {k: o.result.text for k, o in got.items()} == {"item-0": "Answer: A", "item-1": "Answer: B",
                                                              "item-2": "Answer: C"}


@pytest.mark.parametrize("model", ["m1", "m-refuse"])
async def test_a_batched_answer_is_the_synchronous_one(sim, model):
    sync = await same_as_sync(sim, "openai", model)
    assert (sync.blocked == "refusal") == (model == "m-refuse")


async def test_request_errors_are_classified():
    status, _ = await all_failing("openai")
    assert status.state == ENDED


async def test_an_invalid_request_is_permanent(sim):
    async with wires(sim, "openai") as (_, batch):
        bad = BatchRequest("bad", orjson.dumps({"model": "m1", "messages": [], "max_tokens": 5}))
        _, got = await run(batch, [bad])
    err = got["bad"].error
    assert err.klass is ErrorClass.PERMANENT and err.status == 400 and "empty array" in str(err)


async def test_failed_requests_retried_in_a_new_batch_are_answered_once():
    with SimServerProcess(mode="gold", api_key=KEY, batch_latency_s=0.2, batch_error_rate=0.5) as sim:
        async with wires(sim, "openai") as (adapter, batch):
            pending, rounds = list(range(12)), 0
            while pending and rounds < 10:
                _, got = await run(batch, requests(adapter, pending), label=f"round-{rounds}")
                assert set(got) == {f"item-{i}" for i in pending}
                pending = [i for i in pending if got[f"item-{i}"].error is not None]
                rounds += 1
            stats = sim.stats()
    assert not pending and rounds > 1  # some failed the first time, and every one got through
    assert stats["batch_answered"] == {f"m1/item-{i}": 1 for i in range(12)}
    assert stats["batches_created"] == {"openai": rounds} and stats["by_model"] == {}  # no synchronous call


async def test_answers_are_counted_per_model_and_custom_id():
    with SimServerProcess(mode="gold", api_key=KEY, batch_latency_s=0.2) as sim:
        for model in ("m1", "m2"):  # the engine's custom_ids name the item, not the model
            async with wires(sim, "openai", model=model) as (adapter, batch):
                await run(batch, requests(adapter, [0, 1]), label=model)
        stats = sim.stats()
    assert stats["batch_answered"] == {"m1/item-0": 1, "m1/item-1": 1, "m2/item-0": 1, "m2/item-1": 1}
    assert stats["batch_requests"] == {"openai": 4}


async def test_expiry_leaves_requests_unanswered_and_retryable():
    status, got, unanswered = await expire_some("openai")
    assert status.state == EXPIRED and status.provider_status == "expired"
    for cid in unanswered:
        assert got[cid].error.klass is ErrorClass.TRANSIENT and "batch_expired" in str(got[cid].error)


async def test_cancel():
    status, cancelling, got = await cancel_at_once("openai")
    assert status.state == CANCELLED and cancelling == "cancelling"
    assert {c: o.error.klass for c, o in got.items()} == {"item-0": ErrorClass.TRANSIENT,
                                                          "item-1": ErrorClass.TRANSIENT}


async def test_find_by_label(sim):
    async with wires(sim, "openai") as (adapter, batch):
        first = await batch.submit(requests(adapter, [0]), label="find-a")
        second = await batch.submit(requests(adapter, [1]), label="find-b")
        assert await batch.find("find-a") == first and await batch.find("find-b") == second
        assert await batch.find("never-submitted") is None


async def test_malformed_batches_are_refused_as_the_api_does(sim):
    line = b'{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"m1","messages":[]}}\n'
    status, doc = await upload(sim, line, purpose="invoices")
    assert status == 400 and doc["error"]["param"] == "purpose"
    _, wrong = await upload(sim, line, purpose="assistants")
    status, doc = await http("POST", sim.base_url + "/batches", headers=AUTH, body={
        "input_file_id": wrong["id"], "endpoint": "/v1/chat/completions", "completion_window": "24h"})
    assert status == 400 and "purpose 'batch'" in doc["error"]["message"]
    _, ok = await upload(sim, line)
    for field, value in (("endpoint", "/v1/chat"), ("completion_window", "1h")):
        body = {"input_file_id": ok["id"], "endpoint": "/v1/chat/completions", "completion_window": "24h", field: value}
        status, doc = await http("POST", sim.base_url + "/batches", headers=AUTH, body=body)
        assert status == 400 and doc["error"]["param"] == field
    # Bad lines make the batch fail validation, with the API's codes.
    async with wires(sim, "openai") as (_, batch):
        for data, code in ((line + line, "duplicate_custom_id"), (line.replace(b'"custom_id":"a",', b""),
                                                                  "missing_required_parameter"),
                           (line.replace(b'/v1/chat/completions"', b'/v1/embeddings"'), "mismatched_endpoint")):
            _, f = await upload(sim, data)
            _, doc = await http("POST", sim.base_url + "/batches", headers=AUTH, body={
                "input_file_id": f["id"], "endpoint": "/v1/chat/completions", "completion_window": "24h"})
            status, _ = await wait(batch, doc["id"])
            assert status.state == FAILED and code in status.message


async def test_a_duplicate_custom_id_is_refused_before_sending(sim):
    async with wires(sim, "openai") as (adapter, batch):
        reqs = requests(adapter, [0])
        with pytest.raises(ValueError, match="twice"):
            await batch.submit(reqs + reqs, label="dup")


async def test_keys_never_leave_the_batch_wire():
    with SimServerProcess(mode="echo", api_key=KEY, batch_latency_s=0.2) as sim:
        async with wires(sim, "openai") as (adapter, batch):
            leaky = BatchRequest("leaky", adapter.request_body([Message("user", f"my key {KEY}")]))
            _, got = await run(batch, [leaky])
            with pytest.raises(ProviderError) as e:
                await batch.status("batch_" + KEY)
    # An answer holding the key is refused whole, never stored altered.
    assert got["leaky"].result is None and got["leaky"].error.klass is ErrorClass.PERMANENT
    assert "API key" in str(got["leaky"].error) and KEY[:12] not in str(got["leaky"].error)
    assert e.value.status == 404 and KEY[:12] not in str(e.value)

"""The Anthropic Message Batches wire (providers/batch/anthropic.py) against the simulator, run as a real process."""

import orjson
import pytest

from providers.batch.core import CANCELLED, ENDED, EXPIRED, BatchRequest
from providers.errors import ErrorClass
from simulator.process import SimServerProcess
from tests.providers.batch_helpers import (KEY, all_failing, cancel_at_once, expire_some, http, outcomes,
                                           question, requests, run, same_as_sync, wait, wires)

HEADERS = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
PROFILES = {"m-refuse": {"faults": {"refusal": 1.0}}}


@pytest.fixture(scope="module")
def sim():
    with SimServerProcess(mode="gold", api_key=KEY, batch_latency_s=0.4, profiles=PROFILES) as s:
        yield s


async def test_wire_shapes_states_and_answers(sim):
    async with wires(sim, "anthropic") as (adapter, batch):
        reqs = requests(adapter, [0, 1, 2])
        batch_id = await batch.submit(reqs, label="shapes")
        status, doc = await http("GET", f"{sim.root_url}/v1/messages/batches/{batch_id}", headers=HEADERS)
        assert status == 200 and doc["type"] == "message_batch" and doc["processing_status"] == "in_progress"
        assert doc["request_counts"]["processing"] == 3 and doc["results_url"] is None
        final, words = await wait(batch, batch_id)
        assert words == ["in_progress", "ended"]
        assert (final.state, final.total, final.succeeded, final.failed) == (ENDED, 3, 3, 0)
        _, doc = await http("GET", f"{sim.root_url}/v1/messages/batches/{batch_id}", headers=HEADERS)
        _, raw = await http("GET", doc["results_url"], headers=HEADERS)
        lines = [orjson.loads(x) for x in raw.splitlines()]
        assert {x["result"]["type"] for x in lines} == {"succeeded"}
        got = await outcomes(batch, batch_id)
        assert {k: o.result.text for k, o in got.items()} == {"item-0": "Answer: A", "item-1": "Answer: B",
                                                              "item-2": "Answer: C"}


@pytest.mark.parametrize("model", ["m1", "m-refuse"])
async def test_a_batched_answer_is_the_synchronous_one(sim, model):
    sync = await same_as_sync(sim, "anthropic", model)
    assert (sync.blocked == "refusal") == (model == "m-refuse")


async def test_request_errors_are_classified(sim):
    # params are checked when the request is processed: an errored result, never retried.
    async with wires(sim, "anthropic") as (_, batch):
        bad = BatchRequest("bad", orjson.dumps({"model": "m1", "max_tokens": 5, "seed": 1,
                                                "messages": [{"role": "user", "content": "x"}]}))
        status, got = await run(batch, [bad])
    assert status.state == ENDED and status.failed == 1
    assert got["bad"].error.klass is ErrorClass.PERMANENT and "seed: Extra inputs" in str(got["bad"].error)
    await all_failing("anthropic")


async def test_expiry_and_cancel_leave_requests_retryable():
    status, got, unanswered = await expire_some("anthropic")
    assert status.state == EXPIRED and status.provider_status == "ended"
    assert all(got[c].error.klass is ErrorClass.TRANSIENT and "expired" in str(got[c].error) for c in unanswered)
    status, cancelling, got = await cancel_at_once("anthropic")
    assert status.state == CANCELLED and cancelling == "canceling"
    assert {o.error.klass for o in got.values()} == {ErrorClass.TRANSIENT}


async def test_find_never_takes_a_batch_this_process_holds(sim):
    async with wires(sim, "anthropic") as (adapter, batch):
        await batch.submit(requests(adapter, [0]), label="held")
        assert await batch.find("held") is None  # its create was answered: not a lost one


@pytest.mark.parametrize("requests_, fragment", [
    ([{"params": {}}], "requests.0.custom_id: Field required"),
    ([{"custom_id": "a b", "params": {}}], "String should match pattern"),
    ([{"custom_id": "x" * 65, "params": {}}], "String should match pattern"),
    ([{"custom_id": "a", "params": {}}, {"custom_id": "a", "params": {}}], "Duplicate custom_id"),
    ([{"custom_id": "a", "params": {}, "label": "x"}], "requests.0.label: Extra inputs are not permitted"),
    ([], "at least 1 item"),
])
async def test_malformed_batches_are_refused_as_the_api_does(sim, requests_, fragment):
    status, doc = await http("POST", f"{sim.root_url}/v1/messages/batches", headers=HEADERS,
                             body={"requests": requests_})
    assert status == 400 and doc["error"]["type"] == "invalid_request_error" and fragment in doc["error"]["message"]


async def test_custom_ids_are_checked_before_sending(sim):
    async with wires(sim, "anthropic") as (adapter, batch):
        with pytest.raises(ValueError, match="does not match"):
            await batch.submit([BatchRequest("item 1", adapter.request_body(question(0)))], label="bad-id")

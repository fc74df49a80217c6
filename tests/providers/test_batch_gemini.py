"""The Gemini Batch Mode wire (providers/batch/gemini.py) against the simulator, run as a real process."""

import orjson
import pytest

from providers.batch import gemini as batch_gemini
from providers.batch.core import CANCELLED, ENDED, EXPIRED, BatchRequest
from providers.errors import ErrorClass
from simulator.process import SimServerProcess
from tests.providers.batch_helpers import (KEY, all_failing, cancel_at_once, expire_some, http, outcomes,
                                           requests, run, same_as_sync, wait, wires)

HEADERS = {"x-goog-api-key": KEY}
PROFILES = {"m-refuse": {"faults": {"blocked": 1.0}}}


@pytest.fixture(scope="module")
def sim():
    with SimServerProcess(mode="gold", api_key=KEY, batch_latency_s=0.4, profiles=PROFILES) as s:
        yield s


@pytest.mark.parametrize("inline", [True, False])
async def test_wire_shapes_states_and_answers(sim, inline, monkeypatch):
    if not inline:  # a workload too large to inline goes through the Files API
        monkeypatch.setattr(batch_gemini, "INLINE_MAX_BYTES", 10)
    async with wires(sim, "gemini") as (adapter, batch):
        batch_id = await batch.submit(requests(adapter, [0, 1, 2]), label=f"shapes-{inline}")
        assert batch_id.startswith("batches/")
        final, words = await wait(batch, batch_id)
        assert words == ["BATCH_STATE_PENDING", "BATCH_STATE_RUNNING", "BATCH_STATE_SUCCEEDED"]
        assert (final.state, final.total, final.succeeded, final.failed) == (ENDED, 3, 3, 0)
        status, doc = await http("GET", f"{sim.root_url}/v1beta/{batch_id}", headers=HEADERS)
        assert status == 200 and doc["done"] and doc["metadata"]["displayName"] == f"shapes-{inline}"
        assert ("inlinedResponses" in doc["response"]) == inline and ("responsesFile" in doc["response"]) != inline
        got = await outcomes(batch, batch_id)
        assert {k: o.result.text for k, o in got.items()} == {"item-0": "Answer: A", "item-1": "Answer: B",
                                                              "item-2": "Answer: C"}


@pytest.mark.parametrize("model", ["m1", "m-refuse"])
async def test_a_batched_answer_is_the_synchronous_one(sim, model):
    sync = await same_as_sync(sim, "gemini", model)
    assert (sync.blocked == "SAFETY") == (model == "m-refuse")


async def test_request_errors_are_classified(sim):
    async with wires(sim, "gemini") as (_, batch):
        bad = BatchRequest("bad", orjson.dumps({"contents": [{"role": "assistant", "parts": [{"text": "x"}]}]}))
        status, got = await run(batch, [bad])
    assert status.state == ENDED and status.failed == 1
    assert got["bad"].error.klass is ErrorClass.PERMANENT and "valid role" in str(got["bad"].error)
    await all_failing("gemini")


async def test_expiry_and_cancel_leave_requests_retryable():
    # Gemini returns no response for an unattempted request: reported missing, asked again.
    status, got, unanswered = await expire_some("gemini")
    assert status.state == EXPIRED and status.provider_status == "BATCH_STATE_EXPIRED"
    assert all(got[c].error.klass is ErrorClass.TRANSIENT and "not answered" in str(got[c].error) for c in unanswered)
    status, cancelling, got = await cancel_at_once("gemini")
    assert status.state == CANCELLED and cancelling == "BATCH_STATE_RUNNING"
    assert {o.error.klass for o in got.values()} == {ErrorClass.TRANSIENT}


async def test_find_by_display_name(sim):
    async with wires(sim, "gemini") as (adapter, batch):
        first = await batch.submit(requests(adapter, [0]), label="find-a")
        second = await batch.submit(requests(adapter, [1]), label="find-b")
        assert await batch.find("find-a") == first and await batch.find("find-b") == second
        assert await batch.find("never-submitted") is None


REQ = {"request": {"contents": [{"role": "user", "parts": [{"text": "x"}]}]}, "metadata": {"key": "a"}}


@pytest.mark.parametrize("batch_, fragment", [
    ({"input_config": {"requests": {"requests": [REQ]}}}, "display_name: Field required"),
    ({"display_name": "x", "input_config": {"requests": {"requests": [REQ]}, "file_name": "files/f"}},
     "exactly one of requests or file_name"),
    ({"display_name": "x", "input_config": {"requests": {"requests": []}}}, "must not be empty"),
    ({"display_name": "x", "input_config": {"requests": {"requests": [{"metadata": {"key": "a"}}]}}},
     "request: Field required"),
    ({"display_name": "x", "input_config": {"requests": {"requests": [REQ]}}, "labels": {}}, 'Unknown name "labels"'),
])
async def test_malformed_batches_are_refused_as_the_api_does(sim, batch_, fragment):
    status, doc = await http("POST", f"{sim.root_url}/v1beta/models/m1:batchGenerateContent", headers=HEADERS,
                             body={"batch": batch_})
    assert status == 400 and doc["error"]["status"] == "INVALID_ARGUMENT" and fragment in doc["error"]["message"]


async def test_an_unknown_input_file_is_not_found(sim):
    status, doc = await http("POST", f"{sim.root_url}/v1beta/models/m1:batchGenerateContent", headers=HEADERS,
                             body={"batch": {"display_name": "x", "input_config": {"file_name": "files/nope"}}})
    assert status == 404 and doc["error"]["status"] == "NOT_FOUND"

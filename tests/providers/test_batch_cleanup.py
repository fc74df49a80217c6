"""Files a batch leaves at the provider (uploaded input, results) are deleted once it is collected,
through the Files APIs as documented; the simulator lists and deletes them the same way."""

import pytest

from providers.batch import gemini as batch_gemini
from simulator.process import SimServerProcess
from tests.providers.batch_helpers import KEY, http, outcomes, requests, wait, wires

LIST = {"openai": ("/v1/files", {"Authorization": f"Bearer {KEY}"}, "data"),
        "gemini": ("/v1beta/files", {"x-goog-api-key": KEY}, "files")}


async def listed(sim, provider):
    path, headers, field = LIST[provider]
    status, doc = await http("GET", sim.root_url + path, headers=headers)
    assert status == 200
    return doc[field]


@pytest.mark.parametrize("provider", ["openai", "gemini"])
async def test_discard_deletes_the_input_and_result_files(provider, monkeypatch):
    monkeypatch.setattr(batch_gemini, "INLINE_MAX_BYTES", 10)  # Gemini through the Files API too
    with SimServerProcess(mode="gold", api_key=KEY, batch_latency_s=0.2, batch_error_rate=0.5, seed=2) as sim:
        async with wires(sim, provider) as (adapter, batch):
            batch_id = await batch.submit(requests(adapter, list(range(6))), label="tidy")
            await wait(batch, batch_id)
            got = await outcomes(batch, batch_id)
            assert len(got) == 6 and any(o.error for o in got.values()) and any(o.result for o in got.values())
            # input + output (+ OpenAI's error file): all there until the batch is collected
            assert len(await listed(sim, provider)) == (3 if provider == "openai" else 2)
            await batch.discard(batch_id)
            assert await listed(sim, provider) == []
            await batch.discard(batch_id)  # twice (a rerun after a crash): already gone is fine


async def test_the_simulated_files_apis_page_and_refuse_unknown_files():
    with SimServerProcess(api_key=KEY) as sim:
        oa = {"Authorization": f"Bearer {KEY}"}
        status, doc = await http("DELETE", sim.root_url + "/v1/files/file-nope", headers=oa)
        assert status == 404 and "No such File object" in doc["error"]["message"]
        goog = {"x-goog-api-key": KEY}
        status, doc = await http("DELETE", sim.root_url + "/v1beta/files/nope", headers=goog)
        assert status == 404 and doc["error"]["status"] == "NOT_FOUND"
        status, doc = await http("GET", sim.root_url + "/v1beta/files?pageSize=5", headers=goog)
        assert status == 200 and doc == {"files": []}

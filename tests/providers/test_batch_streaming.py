"""Batch results are read as they arrive, line by line, never whole: the first outcome is handed on
while the provider is still sending, and a download cut short starts again without repeating any."""

import anyio
import orjson
from aiohttp import web
from aiohttp.test_utils import TestServer

from providers.limits import Limits
from providers.registry import make_batch_api, make_provider
from tests.providers.batch_helpers import GEN, KEY


def line(custom_id: str) -> bytes:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m1",
               "content": [{"type": "text", "text": f"answer {custom_id}"}], "stop_reason": "end_turn",
               "usage": {"input_tokens": 3, "output_tokens": 2}}
    return orjson.dumps({"custom_id": custom_id, "result": {"type": "succeeded", "message": message}}) + b"\n"


async def anthropic_results_server(results):
    """A Message Batches endpoint whose one ended batch's results are written by ``results(response)``."""

    async def get_batch(request):
        return web.json_response({"id": "b1", "type": "message_batch", "processing_status": "ended",
                                  "request_counts": {"succeeded": 2}, "results_url": None})

    async def get_results(request):
        resp = web.StreamResponse()
        await resp.prepare(request)
        await results(request, resp)
        return resp

    app = web.Application()
    app.router.add_get("/v1/messages/batches/b1", get_batch)
    app.router.add_get("/v1/messages/batches/b1/results", get_results)
    server = TestServer(app)
    await server.start_server()
    return server


def wire(server):
    root = str(server.make_url("")).rstrip("/")
    adapter = make_provider("anthropic", base_url=root, model="m1", api_key=KEY, generation=GEN, limits=Limits(),
                            timeout_s=5, max_retries=2, max_connections=4, backoff_base_s=0.01)
    return adapter, make_batch_api("anthropic", adapter)


async def test_outcomes_are_handed_on_while_the_results_still_arrive():
    first_read = anyio.Event()

    async def results(request, resp):
        await resp.write(line("a"))
        await first_read.wait()  # the rest only once the client has the first: read whole, it never would
        await resp.write(line("b"))
        await resp.write_eof()

    server = await anthropic_results_server(results)
    adapter, batch = wire(server)
    got = []
    try:
        with anyio.fail_after(10):
            async for outcome in batch.results("b1"):
                got.append(outcome.result.text)
                first_read.set()
    finally:
        await batch.aclose()
        await adapter.aclose()
        await server.close()
    assert got == ["answer a", "answer b"]


async def test_a_download_cut_short_starts_again_without_repeating_outcomes():
    calls = []

    async def results(request, resp):
        calls.append(1)
        await resp.write(line("a"))
        if len(calls) == 1:
            request.transport.close()  # the connection drops after the first line
            return
        await resp.write(line("b"))
        await resp.write_eof()

    server = await anthropic_results_server(results)
    adapter, batch = wire(server)
    try:
        with anyio.fail_after(10):
            got = [o.custom_id async for o in batch.results("b1")]
    finally:
        await batch.aclose()
        await adapter.aclose()
        await server.close()
    assert got == ["a", "b"] and len(calls) == 2

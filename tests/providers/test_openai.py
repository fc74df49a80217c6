"""The OpenAI-compatible adapter against the project's simulated server (strict wire format)."""

import orjson
import pytest

from simulator.server import SimServerProcess
from benchmark.dataset import Message
from providers.errors import ErrorClass, ProviderError
from providers.limits import Limits, RateLimit
from providers.openai import OpenAIChat, is_reasoning_model

MSGS = (Message("system", "Be brief."), Message("user", "Pick one.\nA. yes\nB. no\n[[gold:B]]"))
KEY = "sk-test-" + "x" * 24


def adapter(url, **kw):
    args = dict(base_url=url, model="m", api_key=KEY, generation={"temperature": 0.0, "max_tokens": 8},
                max_retries=3, backoff_base_s=0.01, timeout_s=5)
    args.update(kw)
    return OpenAIChat(**args)


async def test_wire_format_and_usage():
    async with SimServerProcess(mode="gold", api_key=KEY) as sim:
        a = adapter(sim.base_url)
        try:
            r = await a.chat(MSGS)
        finally:
            await a.aclose()
    assert r.text == "Answer: B"
    assert r.model_version == "m-sim-2024"
    assert r.input_tokens > 0 and r.output_tokens > 0
    assert r.finish_reason == "stop" and r.attempts == 1


async def test_bad_key_is_permanent_and_redacted():
    async with SimServerProcess(api_key="the-right-key") as sim:
        a = adapter(sim.base_url)
        try:
            with pytest.raises(ProviderError) as e:
                await a.chat(MSGS)
        finally:
            await a.aclose()
        assert sim.stats()["total"] == 1  # not retried
    assert e.value.klass is ErrorClass.PERMANENT and e.value.status == 401
    assert KEY not in str(e.value)


async def test_invalid_request_is_not_retried():
    async with SimServerProcess() as sim:
        a = adapter(sim.base_url)
        try:
            with pytest.raises(ProviderError) as e:
                await a.chat((Message("wizard", "hi"),))
        finally:
            await a.aclose()
        assert sim.stats()["total"] == 1
    assert e.value.status == 400 and e.value.klass is ErrorClass.PERMANENT


@pytest.mark.parametrize("fault", ["500", "503", "malformed", "drop", "429"])
async def test_transient_faults_are_retried_until_success(fault):
    async with SimServerProcess(faults={fault: 0.5}, seed=7, mode="gold") as sim:
        a = adapter(sim.base_url, max_retries=12)
        try:
            results = [await a.chat((Message("user", f"q{i}\n[[gold:A]]"),)) for i in range(12)]
        finally:
            await a.aclose()
        stats = sim.stats()
    assert all(r.text == "Answer: A" for r in results)
    assert sum(r.attempts for r in results) == stats["total"] > 12  # some were retried


async def test_fail_first_counts_attempts():
    async with SimServerProcess(fail_first=2) as sim:
        a = adapter(sim.base_url)
        try:
            r = await a.chat(MSGS)
        finally:
            await a.aclose()
    assert r.attempts == 3


async def test_quota_is_not_retried():
    async with SimServerProcess(faults={"quota": 1.0}) as sim:
        a = adapter(sim.base_url)
        try:
            with pytest.raises(ProviderError) as e:
                await a.chat(MSGS)
        finally:
            await a.aclose()
        assert sim.stats()["total"] == 1
    assert e.value.klass is ErrorClass.PERMANENT and "insufficient_quota" in str(e.value)


async def test_gives_up_and_reports_attempts():
    async with SimServerProcess(faults={"503": 1.0}) as sim:
        a = adapter(sim.base_url, max_retries=2)
        try:
            with pytest.raises(ProviderError) as e:
                await a.chat(MSGS)
        finally:
            await a.aclose()
    assert e.value.klass is ErrorClass.TRANSIENT and e.value.attempts == 3


async def test_retry_after_from_rpm_cap_is_honoured():
    async with SimServerProcess(rpm=2, rpm_window_s=1.0, mode="gold") as sim:
        a = adapter(sim.base_url, max_retries=6)
        try:
            rs = [await a.chat((Message("user", f"q{i}\n[[gold:C]]"),)) for i in range(4)]
        finally:
            await a.aclose()
        assert sim.stats()["by_status"].get("429", 0) >= 1
    assert [r.text for r in rs] == ["Answer: C"] * 4


async def test_timeout_is_transient():
    async with SimServerProcess(latency_ms=2000) as sim:
        a = adapter(sim.base_url, timeout_s=0.2, max_retries=1)
        try:
            with pytest.raises(ProviderError) as e:
                await a.chat(MSGS)
        finally:
            await a.aclose()
    assert e.value.klass is ErrorClass.TRANSIENT and "timed out" in str(e.value)


async def test_client_side_rate_limit_keeps_under_server_cap():
    # The server allows 3 requests per 1 s window; a client limit of 2/s must never trip it.
    async with SimServerProcess(rpm=3, rpm_window_s=1.0) as sim:
        a = adapter(sim.base_url, limits=Limits(RateLimit(rpm=120)), max_retries=0)
        try:
            for i in range(6):
                await a.chat((Message("user", f"q{i}"),))
        finally:
            await a.aclose()
        assert sim.stats()["by_status"].get("429", 0) == 0


# --- reasoning models, refusals, rate-limit headers (in-process server: the `sim` fixture)


def test_reasoning_models_are_detected_by_name():
    assert all(map(is_reasoning_model, ["o1", "o1-mini", "o3-mini", "o4-mini", "gpt-5", "gpt-5-nano-2025-08-07",
                                        "openai/gpt-5-mini"]))
    assert not any(map(is_reasoning_model, ["gpt-4o", "gpt-4.1-2025-04-14", "gpt-4o-mini", "omni", "o"]))


async def test_reasoning_model_gets_max_completion_tokens_and_no_sampling_knobs(sim):
    root, _state = await sim(mode="gold")
    gen = {"temperature": 0.0, "top_p": 0.5, "max_tokens": 8, "stop": ["\n"], "seed": 1}
    a = adapter(root + "/v1", model="gpt-5-mini-2025-08-07", generation=gen)
    try:
        body = orjson.loads(a.request_body(MSGS))
        r = await a.chat(MSGS)
    finally:
        await a.aclose()
    assert body["max_completion_tokens"] == 8 and not {"max_tokens", "temperature", "top_p", "stop"} & set(body)
    assert r.text == "Answer: B"
    # Sent as a plain chat model, the (strict) server refuses it like the real API: permanent, not retried.
    a = adapter(root + "/v1", model="gpt-5-mini-2025-08-07", generation=gen, reasoning=False)
    try:
        with pytest.raises(ProviderError) as e:
            await a.chat(MSGS)
    finally:
        await a.aclose()
    assert e.value.status == 400 and "max_completion_tokens" in str(e.value)


@pytest.mark.parametrize("fault, blocked, finish", [("refusal", "refusal", "stop"),
                                                    ("blocked", "content_filter", "content_filter")])
async def test_refusal_and_content_filter_are_answers(sim, fault, blocked, finish):
    root, state = await sim(faults={fault: 1.0})
    a = adapter(root + "/v1")
    try:
        r = await a.chat(MSGS)
    finally:
        await a.aclose()
    assert (r.text, r.blocked, r.finish_reason, r.attempts) == ("", blocked, finish, 1)
    assert state.stats.total == 1


async def test_vendor_safety_errors_are_blocked_answers():
    from providers.errors import safety_block

    dashscope = '{"error":{"code":"data_inspection_failed","message":"Input data may contain inappropriate content.","type":"data_inspection_failed"}}'
    glm = '{"contentFilter":[{"level":1,"role":"user"}],"error":{"code":"1301","message":"..."}}'
    ark = '{"error":{"code":"InputTextSensitiveContentDetected","message":"...","type":"BadRequest"}}'
    assert [safety_block(400, b) for b in (dashscope, glm, ark)] == ["data_inspection_failed", "sensitive", "sensitive"]
    assert safety_block(400, '{"error":{"code":"invalid_value"}}') is None
    assert safety_block(500, dashscope) is None


async def test_remaining_zero_header_pauses_the_model(sim):
    root, _state = await sim(rpm=2, rpm_window_s=1.0)
    limits = Limits()
    a = adapter(root + "/v1", limits=limits)
    try:
        await a.chat(MSGS)
        assert limits._resume_at == 0.0
        await a.chat(MSGS)  # x-ratelimit-remaining-requests: 0
    finally:
        await a.aclose()
    import time as _time
    assert limits._resume_at > _time.monotonic()

"""The Anthropic Messages adapter against the simulated server speaking that wire format (strict)."""

import aiohttp
import orjson
import pytest

from benchmark.dataset import Message
from providers.anthropic import AnthropicChat
from providers.errors import ErrorClass, ProviderError
from tests.providers.helpers import ask_once

KEY = "sk-ant-test-" + "k" * 24
MSGS = (Message("system", "Be brief."), Message("user", "Pick one.\nA. yes\nB. no\n[[gold:B]]"))


def adapter(root, **kw):
    args = dict(base_url=root, model="claude-x", api_key=KEY, generation={"temperature": 0.0, "max_tokens": 16},
                max_retries=4, backoff_base_s=0.01, timeout_s=5)
    args.update(kw)
    return AnthropicChat(**args)


async def ask(root, messages=MSGS, **kw):
    return await ask_once(adapter, root, messages, **kw)


async def raw_post(root, body, headers):
    async with aiohttp.ClientSession() as s:
        async with s.post(root + "/v1/messages", data=orjson.dumps(body), headers=headers) as r:
            return r.status, orjson.loads(await r.read())


async def test_wire_format_usage_and_model_version(sim):
    root, _state = await sim(mode="gold", api_key=KEY)
    r = await ask(root)
    assert r.text == "Answer: B" and r.model_version == "claude-x-sim-2024"
    assert r.finish_reason == "end_turn" and r.blocked is None and r.attempts == 1
    assert r.input_tokens > 0 and r.output_tokens > 0


async def test_turns_are_merged_to_alternate_and_seed_is_not_sent(sim):
    # The server refuses a system role in messages, two user turns in a row, and unknown fields (seed).
    root, _ = await sim(mode="gold", api_key=KEY)
    msgs = (Message("system", "s1"), Message("user", "u1"), Message("user", "u2\n[[gold:C]]"),
            Message("system", "s2"))
    r = await ask(root, msgs, generation={"temperature": 0.5, "max_tokens": 8, "seed": 3, "stop": ["\n\n"]})
    assert r.text == "Answer: C"


@pytest.mark.parametrize("body, headers, fragment", [
    ({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}, {"x-api-key": KEY},
     "anthropic-version: header is required"),
    ({"model": "m", "messages": [{"role": "user", "content": "hi"}]}, None, "max_tokens: Field required"),
    ({"model": "m", "max_tokens": 5, "messages": [{"role": "system", "content": "hi"}]}, None,
     "messages.0.role: Input should be 'user' or 'assistant'"),
    ({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]},
     None, "roles must alternate"),
    ({"model": "m", "max_tokens": 5, "messages": [{"role": "assistant", "content": "a"}]}, None,
     'first message must use the "user" role'),
    ({"model": "m", "max_tokens": 5, "seed": 1, "messages": [{"role": "user", "content": "a"}]}, None,
     "seed: Extra inputs are not permitted"),
    ({"model": "m", "max_tokens": 5, "temperature": 1.5, "messages": [{"role": "user", "content": "a"}]}, None,
     "temperature: Input should be less than or equal to 1"),
])
async def test_server_is_as_strict_as_the_real_api(sim, body, headers, fragment):
    root, _ = await sim(api_key=KEY)
    status, doc = await raw_post(root, body, headers or {"x-api-key": KEY, "anthropic-version": "2023-06-01"})
    assert status == 400 and doc["type"] == "error" and doc["error"]["type"] == "invalid_request_error"
    assert fragment in doc["error"]["message"]


async def test_missing_or_bad_key_is_permanent_not_retried_and_not_echoed(sim):
    root, state = await sim(api_key="the-right-key")
    status, doc = await raw_post(root, {}, {"anthropic-version": "2023-06-01"})
    assert status == 401 and doc["error"]["message"] == "x-api-key header is required"
    with pytest.raises(ProviderError) as e:
        await ask(root)
    assert e.value.klass is ErrorClass.PERMANENT and e.value.status == 401
    assert KEY not in str(e.value) and "authentication_error" in str(e.value)
    assert state.stats.total == 2  # the raw post and one adapter attempt


async def test_overloaded_529_is_transient(sim):
    root, _ = await sim(faults={"overloaded": 1.0})
    with pytest.raises(ProviderError) as e:
        await ask(root, max_retries=1)
    assert e.value.status == 529 and e.value.klass is ErrorClass.TRANSIENT and "overloaded_error" in str(e.value)


async def test_low_credit_is_permanent(sim):
    root, state = await sim(faults={"quota": 1.0})
    with pytest.raises(ProviderError) as e:
        await ask(root)
    assert e.value.klass is ErrorClass.PERMANENT and "credit balance" in str(e.value)
    assert state.stats.total == 1


async def test_refusal_is_an_answer_not_an_error(sim):
    root, state = await sim(faults={"refusal": 1.0})
    r = await ask(root)
    assert (r.text, r.blocked, r.finish_reason, r.attempts) == ("", "refusal", "refusal", 1)
    assert state.stats.total == 1  # not retried


async def test_rate_limit_headers_and_retry_after(sim):
    root, _state = await sim(rpm=2, rpm_window_s=1.0, mode="gold")
    a = adapter(root, max_retries=6)
    try:
        rs = [await a.chat((Message("user", f"q{i}\n[[gold:A]]"),)) for i in range(4)]
    finally:
        await a.aclose()
    assert [r.text for r in rs] == ["Answer: A"] * 4
    # After the second request the headers said 0 left: the adapter paused the model.
    assert a._limits._resume_at > 0

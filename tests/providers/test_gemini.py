"""The Gemini generateContent adapter against the simulated server speaking that wire format (strict)."""

import time

import aiohttp
import orjson
import pytest

from benchmark.dataset import Message
from providers.errors import ErrorClass, ProviderError
from providers.gemini import GeminiChat
from tests.providers.helpers import ask_once

KEY = "AIza-test-" + "g" * 28
MSGS = (Message("system", "Be brief."), Message("user", "Pick one.\nA. yes\nB. no\n[[gold:B]]"),
        Message("assistant", "Answer: B"), Message("user", "Again.\n[[gold:A]]"))


def adapter(root, **kw):
    args = dict(base_url=root, model="gemini-x", api_key=KEY,
                generation={"temperature": 0.0, "max_tokens": 16, "top_p": 0.9, "seed": 1, "stop": ["\n\n"]},
                max_retries=4, backoff_base_s=0.01, timeout_s=5)
    args.update(kw)
    return GeminiChat(**args)


async def ask(root, messages=MSGS, **kw):
    return await ask_once(adapter, root, messages, **kw)


async def raw_post(root, body, key=KEY, model="gemini-x"):
    headers = {"x-goog-api-key": key} if key else {}
    async with aiohttp.ClientSession() as s:
        async with s.post(f"{root}/v1beta/models/{model}:generateContent", data=orjson.dumps(body),
                          headers=headers) as r:
            return r.status, orjson.loads(await r.read())


async def test_wire_format_roles_system_instruction_and_usage(sim):
    root, _state = await sim(mode="gold", api_key=KEY)
    r = await ask(root)
    assert r.text == "Answer: A" and r.model_version == "gemini-x-sim-2024"
    assert r.finish_reason == "STOP" and r.blocked is None
    assert r.input_tokens > 0 and r.output_tokens > 0


@pytest.mark.parametrize("body, fragment", [
    ({"contents": [{"role": "assistant", "parts": [{"text": "x"}]}]}, "Please use a valid role: user, model."),
    ({"messages": []}, 'Unknown name "messages"'),
    ({"contents": [{"role": "user", "parts": [{"text": "x"}]}], "generationConfig": {"max_tokens": 5}},
     'Unknown name "max_tokens" at \'generation_config\''),
    ({"contents": []}, "contents is not specified"),
    ({"contents": [{"role": "user", "parts": []}]}, "contents.parts must not be empty"),
])
async def test_server_is_as_strict_as_the_real_api(sim, body, fragment):
    root, _ = await sim(api_key=KEY)
    status, doc = await raw_post(root, body)
    assert status == 400 and doc["error"]["status"] == "INVALID_ARGUMENT" and doc["error"]["code"] == 400
    assert fragment in doc["error"]["message"]


async def test_missing_key_403_and_bad_key_400_are_permanent(sim):
    root, state = await sim(api_key="the-right-key")
    status, doc = await raw_post(root, {"contents": []}, key=None)
    assert status == 403 and doc["error"]["status"] == "PERMISSION_DENIED"
    with pytest.raises(ProviderError) as e:
        await ask(root)
    assert e.value.klass is ErrorClass.PERMANENT and e.value.status == 400 and "API key not valid" in str(e.value)
    assert KEY not in str(e.value)
    assert state.stats.total == 2


async def test_prompt_block_and_answer_block_are_answers(sim):
    root, state = await sim(faults={"refusal": 1.0})
    r = await ask(root)
    assert (r.text, r.blocked, r.finish_reason, r.attempts) == ("", "prompt:SAFETY", "prompt_blocked", 1)
    assert r.input_tokens > 0
    root, state = await sim(faults={"blocked": 1.0})
    r = await ask(root)
    assert (r.text, r.blocked, r.finish_reason) == ("", "SAFETY", "SAFETY")
    assert state.stats.total == 1


async def test_daily_quota_is_permanent(sim):
    root, state = await sim(faults={"quota": 1.0})
    with pytest.raises(ProviderError) as e:
        await ask(root)
    assert e.value.klass is ErrorClass.PERMANENT and e.value.status == 429 and "RESOURCE_EXHAUSTED" in str(e.value)
    assert state.stats.total == 1


async def test_resource_exhausted_honours_the_retry_info_delay(sim):
    root, state = await sim(rpm=1, rpm_window_s=0.5, mode="gold")
    t0 = time.monotonic()
    a = adapter(root, max_retries=5, backoff_base_s=5.0)  # a backoff this long would blow the bound below
    try:
        rs = [await a.chat((Message("user", f"q{i}\n[[gold:B]]"),)) for i in range(3)]
    finally:
        await a.aclose()
    assert [r.text for r in rs] == ["Answer: B"] * 3
    assert state.stats.by_status["429"] >= 1
    assert time.monotonic() - t0 < 3.0


def test_model_path_and_key_header():
    a = GeminiChat(base_url="https://generativelanguage.googleapis.com/", model="models/gemini-2.0-flash",
                   api_key="k", generation={})
    assert a._url == "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent"
    assert a._headers["x-goog-api-key"] == "k" and "k" not in a._url

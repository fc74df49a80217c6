"""The simulated provider: wire format, validation, auth, limits, faults, process."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import aiohttp
import orjson
import pytest
from aiohttp.test_utils import TestServer

from simulator.core import config_from_knobs, fingerprint, go_duration
from simulator.server import SimServerProcess, _parser, build_app, knobs_from_args

REPO = Path(__file__).resolve().parents[2]
QUESTION = "Which colour is the sky?\nA. green\nB. blue\nC. red\nD. black"


def msgs(text: str = QUESTION, system: str | None = None) -> list[dict]:
    out = [{"role": "system", "content": system}] if system else []
    return out + [{"role": "user", "content": text}]


@pytest.fixture
async def session():
    async with aiohttp.ClientSession() as s:
        yield s


@pytest.fixture
async def sim():
    """start(**knobs) -> base URL of an in-process server (fast; no subprocess)."""
    servers: list[TestServer] = []

    async def start(**knobs) -> str:
        server = TestServer(build_app(config_from_knobs(**knobs)))
        await server.start_server()
        servers.append(server)
        return str(server.make_url("/v1"))

    yield start
    for server in servers:
        await server.close()


async def chat(session, base, body=None, *, raw: bytes | None = None, key: str | None = None,
               **fields):
    """POST a chat completion; (status, headers, body bytes)."""
    if body is None:
        body = {"model": "m1", "messages": msgs(), **fields}
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = raw if raw is not None else orjson.dumps(body)
    async with session.post(base + "/chat/completions", data=data, headers=headers) as resp:
        return resp.status, resp.headers, await resp.read()


async def answer(session, base, text: str) -> str:
    status, _, body = await chat(session, base, {"model": "m1", "messages": msgs(text)})
    assert status == 200
    return orjson.loads(body)["choices"][0]["message"]["content"]


# ----------------------------------------------------------------- wire format


async def test_response_has_openai_shape(sim, session):
    base = await sim()
    status, headers, body = await chat(session, base)
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    data = orjson.loads(body)
    assert set(data) == {"id", "object", "created", "model", "choices", "usage"}
    assert data["object"] == "chat.completion" and data["id"].startswith("chatcmpl-")
    assert data["model"] == "m1-sim-2024" and isinstance(data["created"], int)
    (choice,) = data["choices"]
    assert choice["index"] == 0 and choice["finish_reason"] == "stop"
    assert choice["message"]["role"] == "assistant"
    content = choice["message"]["content"]
    assert content in {"Answer: A", "Answer: B", "Answer: C", "Answer: D"}
    usage = data["usage"]
    assert usage["prompt_tokens"] == len(QUESTION) // 4
    assert usage["completion_tokens"] == len(content) // 4 + 1
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert "x-ratelimit-limit-requests" not in headers  # only when an rpm is set


@pytest.mark.parametrize("options, allowed", [
    ("A. one\nB. two\nC. three", "ABC"),
    ("(A) one\n(B) two\n(C) three\n(D) four\n(E) five", "ABCDE"),
    ("A) one\nB) two", "AB"),
    ("no options at all", "AB"),
])
async def test_letter_mode_picks_a_listed_option_deterministically(sim, session, options, allowed):
    base = await sim()
    texts = [f"Question {i}?\n{options}" for i in range(12)]
    first = [await answer(session, base, t) for t in texts]
    assert all(a.removeprefix("Answer: ") in allowed for a in first)
    assert first == [await answer(session, base, t) for t in texts]


async def test_answer_modes(sim, session):
    assert await answer(session, await sim(mode="echo"), "say this") == "say this"
    assert await answer(session, await sim(mode="fixed:I refuse"), QUESTION) == "I refuse"
    gold = await sim(mode="gold")
    assert await answer(session, gold, QUESTION + "\n[[gold:B]]") == "Answer: B"
    assert await answer(session, gold, "[[gold:joy, anger]]\n" + QUESTION) == "Answer: joy, anger"
    assert (await answer(session, gold, QUESTION)).removeprefix("Answer: ") in "ABCD"


async def test_max_tokens_truncates_with_finish_reason_length(sim, session):
    base = await sim(mode="fixed:" + "x" * 100)
    status, _, body = await chat(session, base, max_tokens=5)
    choice = orjson.loads(body)["choices"][0]
    assert choice["finish_reason"] == "length" and choice["message"]["content"] == "x" * 20


@pytest.mark.parametrize("body, param, code", [
    ({"messages": msgs()}, None, None),
    ({"model": "m1"}, "messages", "missing_required_parameter"),
    ({"model": "m1", "messages": "hi"}, "messages", "invalid_type"),
    ({"model": "m1", "messages": []}, "messages", "empty_array"),
    ({"model": "m1", "messages": ["hi"]}, "messages[0]", "invalid_type"),
    ({"model": "m1", "messages": [{"role": "wizard", "content": "x"}]},
     "messages[0].role", "invalid_value"),
    ({"model": "m1", "messages": [{"role": "user"}]},
     "messages[0].content", "missing_required_parameter"),
    ({"model": "m1", "messages": msgs(), "temperature": 3}, "temperature", "invalid_value"),
    ({"model": "m1", "messages": msgs(), "max_tokens": "5"}, "max_tokens", "invalid_type"),
])
async def test_invalid_requests_get_400_with_openai_error_body(sim, session, body, param, code):
    status, _, raw = await chat(session, await sim(), body)
    assert status == 400
    error = orjson.loads(raw)["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error" and error["message"]
    assert (error["param"], error["code"]) == (param, code)


async def test_unparseable_json_is_400(sim, session):
    status, _, raw = await chat(session, await sim(), raw=b"{not json")
    assert status == 400 and orjson.loads(raw)["error"]["type"] == "invalid_request_error"


async def test_all_documented_roles_are_accepted(sim, session):
    messages = [{"role": r, "content": "x"} for r in
                ("developer", "system", "assistant", "tool")] + msgs()
    status, _, _ = await chat(session, await sim(), {"model": "m1", "messages": messages})
    assert status == 200


async def test_api_key_is_required_when_configured(sim, session):
    base = await sim(api_key="sekret")
    for key in (None, "wrong"):
        status, _, raw = await chat(session, base, key=key)
        error = orjson.loads(raw)["error"]
        assert status == 401 and error["code"] == "invalid_api_key"
        assert "wrong" not in error["message"]  # the presented key is never echoed
    assert (await chat(session, base, key="sekret"))[0] == 200
    async with session.get(base + "/models") as resp:
        assert resp.status == 401


async def test_models_listing_and_strict_models(sim, session):
    base = await sim(models=["m1"], profiles={"fast": {"latency_ms": 0}}, strict_models=True)
    async with session.get(base + "/models") as resp:
        listing = orjson.loads(await resp.read())
    assert listing["object"] == "list"
    assert [m["id"] for m in listing["data"]] == ["fast", "m1"]
    status, _, raw = await chat(session, base, {"model": "nope", "messages": msgs()})
    assert status == 404 and orjson.loads(raw)["error"]["code"] == "model_not_found"


# ----------------------------------------------------------------- limits and latency


async def test_rpm_cap_gives_429_with_retry_after_per_model(sim, session):
    base = await sim(rpm=2)
    seen = [await chat(session, base, {"model": "m1", "messages": msgs(f"q{i}")})
            for i in range(3)]
    assert [s for s, _, _ in seen] == [200, 200, 429]
    assert [h["x-ratelimit-remaining-requests"] for _, h, _ in seen] == ["1", "0", "0"]
    assert all(h["x-ratelimit-limit-requests"] == "2" for _, h, _ in seen)
    assert seen[0][1]["x-ratelimit-reset-requests"].endswith("s")
    headers, error = seen[2][1], orjson.loads(seen[2][2])["error"]
    assert 1 <= int(headers["Retry-After"]) <= 60
    assert (error["type"], error["code"]) == ("requests", "rate_limit_exceeded")
    # The window is per model: another model still has its own budget.
    assert (await chat(session, base, {"model": "m2", "messages": msgs()}))[0] == 200


async def test_rpm_window_slides_and_profile_overrides(sim, session):
    base = await sim(rpm_window_s=0.2, profiles={"tight": {"rpm": 1}})
    tight = {"model": "tight", "messages": msgs()}
    assert (await chat(session, base, tight))[0] == 200
    assert (await chat(session, base, tight))[0] == 429
    status, headers, _ = await chat(session, base)  # default model: no rpm at all
    assert status == 200 and "x-ratelimit-limit-requests" not in headers
    await asyncio.sleep(0.25)
    assert (await chat(session, base, tight))[0] == 200


async def test_latency_and_profile_latency(sim, session):
    base = await sim(latency_ms=150, jitter_ms=10, profiles={"fast": {"latency_ms": 0}})
    start = time.perf_counter()
    await chat(session, base)
    assert time.perf_counter() - start >= 0.13
    start = time.perf_counter()
    await chat(session, base, {"model": "fast", "messages": msgs()})
    assert time.perf_counter() - start < 0.1


# ----------------------------------------------------------------- faults


@pytest.mark.parametrize("kind, status, code", [
    ("429", 429, "rate_limit_exceeded"),
    ("quota", 429, "insufficient_quota"),
    ("500", 500, None),
    ("503", 503, None),
])
async def test_error_faults(sim, session, kind, status, code):
    got, _, raw = await chat(session, await sim(faults={kind: 1.0}))
    assert got == status and orjson.loads(raw)["error"]["code"] == code


async def test_malformed_fault_is_200_with_invalid_json(sim, session):
    status, _, raw = await chat(session, await sim(faults="malformed=1"))
    assert status == 200
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(raw)


async def test_drop_fault_is_a_client_connection_error(sim, session):
    base = await sim(faults={"drop": 1.0})
    with pytest.raises(aiohttp.ClientConnectionError):
        await chat(session, base)


async def test_faults_are_deterministic_per_seed(sim, session):
    async def pattern(seed: int) -> list[int]:
        base = await sim(faults={"500": 0.5}, seed=seed)
        return [(await chat(session, base, {"model": "m1", "messages": msgs(f"q{i}")}))[0]
                for i in range(40)]

    first = await pattern(1)
    assert first == await pattern(1)
    assert first != await pattern(2)
    assert 8 <= first.count(500) <= 32


async def test_fail_first_then_success_per_prompt(sim, session):
    base = await sim(fail_first=2)
    one = {"model": "m1", "messages": msgs("one")}
    assert [(await chat(session, base, one))[0] for _ in range(3)] == [503, 503, 200]
    assert (await chat(session, base, {"model": "m1", "messages": msgs("two")}))[0] == 503


# ----------------------------------------------------------------- stats


async def test_stats_count_and_reset(sim, session):
    base = await sim(fail_first=1)
    root = base.removesuffix("/v1")
    for _ in range(2):
        await chat(session, base)
    await chat(session, base, {"model": "m2", "messages": msgs()})
    await chat(session, base, {"model": "m1"})  # invalid: counted, no fingerprint
    async with session.get(root + "/_stats") as resp:
        stats = orjson.loads(await resp.read())
    fp = fingerprint("m1", msgs())
    assert stats["total"] == 4
    assert stats["by_model"] == {"m1": 3, "m2": 1}
    assert stats["by_status"] == {"503": 2, "200": 1, "400": 1}
    assert stats["by_prompt"][fp] == 2 and stats["by_prompt_ok"] == {fp: 1}
    assert stats["by_fault"] == {"fail_first": 2}
    async with session.post(root + "/_reset") as resp:
        assert resp.status == 200
    async with session.get(root + "/_stats") as resp:
        stats = orjson.loads(await resp.read())
    assert stats["total"] == 0 and stats["by_prompt"] == {}
    assert (await chat(session, base))[0] == 503  # fail-first counts restart too


# ----------------------------------------------------------------- config and CLI


def test_bad_knobs_fail_fast():
    for knobs in ({"faults": {"teapot": 0.1}}, {"faults": "500=0.7,503=0.7"},
                  {"mode": "clever"}, {"profiles": {"m": {"colour": "red"}}}):
        with pytest.raises(ValueError):
            SimServerProcess(**knobs)


def test_cli_flags_map_to_knobs():
    args = _parser().parse_args([
        "--latency-ms", "200", "--jitter-ms", "20", "--rpm", "600",
        "--fault", "429=0.05,500=0.02,malformed=0.01,drop=0.01",
        "--profile", "fast:latency_ms=50,rpm=120,fault.quota=0.5,mode=gold",
        "--mode", "letter", "--seed", "1", "--api-key", "K", "--fail-first", "2"])
    config = config_from_knobs(**knobs_from_args(args))
    assert config.default.rpm == 600 and config.default.fail_first == 2
    assert [k for k, _ in config.default.faults] == ["429", "500", "malformed", "drop"]
    fast = config.behaviour("fast")
    assert (fast.latency_ms, fast.rpm, fast.mode, fast.jitter_ms) == (50, 120, "gold", 20)
    assert fast.faults == (("quota", 0.5),)
    assert config.api_key == "K" and config.seed == 1


def test_go_duration():
    assert [go_duration(s) for s in (0.25, 1.5, 59.978, 360)] == ["250ms", "1.5s", "59.978s",
                                                                 "6m0s"]


def test_cli_prints_one_ready_line_and_stops_on_sigterm():
    proc = subprocess.Popen([sys.executable, "-m", "simulator.server", "--port", "0",
                             "--profile", "m9:latency_ms=1"], cwd=REPO,
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("READY http://127.0.0.1:") and line.endswith("/v1")
        with urllib.request.urlopen(line.split()[1] + "/models", timeout=5) as resp:
            assert orjson.loads(resp.read())["data"][0]["id"] == "m9"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0
        assert proc.stdout.read() == ""
    finally:
        proc.kill()
        proc.wait()


# ----------------------------------------------------------------- subprocess helper


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_process_sync_context_manager():
    with SimServerProcess(mode="echo", models=["m1"]) as sim:
        pid = sim.pid
        assert sim.base_url.startswith("http://127.0.0.1:") and sim.base_url.endswith("/v1")
        req = urllib.request.Request(sim.base_url + "/chat/completions",
                                     data=orjson.dumps({"model": "m1", "messages": msgs("hey")}))
        with urllib.request.urlopen(req, timeout=5) as resp:
            assert orjson.loads(resp.read())["choices"][0]["message"]["content"] == "hey"
        assert sim.stats()["total"] == 1
        sim.reset()
        assert sim.stats()["total"] == 0
    assert _gone(pid)


async def test_process_async_context_manager_kills_on_exception(session):
    pid = None
    with pytest.raises(RuntimeError, match="boom"):
        async with SimServerProcess(fail_first=1) as sim:
            pid = sim.pid
            assert (await chat(session, sim.base_url))[0] == 503
            assert (await sim.astats())["by_status"] == {"503": 1}
            raise RuntimeError("boom")
    assert pid is not None and _gone(pid)


def test_child_exits_when_parent_pipe_closes():
    # Simulates the parent dying by SIGKILL: its end of the stdin pipe closes.
    sim = SimServerProcess().start()
    try:
        sim.proc.stdin.close()
        assert sim.proc.wait(timeout=5) == 0
    finally:
        sim.stop()

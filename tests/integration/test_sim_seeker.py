"""The simulated server's scripted seeker (answer mode ``seeker[:malformed]``), over HTTP, on real seeker prompts."""

from __future__ import annotations

import zlib

import aiohttp
import orjson
import pytest
from aiohttp.test_utils import TestServer

from benchmark.dataset import Message
from benchmark.episodes.scenario import Probe, Scenario
from benchmark.episodes.seeker import read_seeker_reply, seeker_messages
from simulator.core import config_from_knobs
from simulator.server import build_app

EN = Scenario(id="s", language="en", seeker="a student", situation="I failed an exam.", emotion="sadness",
              start_emotion=30)
ZH = Scenario(id="z", language="zh", seeker="一位学生", situation="考试没考好。", emotion="悲伤", start_emotion=30)


@pytest.fixture
async def ask():
    servers: list[TestServer] = []
    session = aiohttp.ClientSession()

    async def call(mode: str, messages: tuple[Message, ...]) -> str:
        server = TestServer(build_app(config_from_knobs(mode=mode)))
        await server.start_server()
        servers.append(server)
        body = {"model": "m", "messages": [{"role": m.role, "content": m.content} for m in messages]}
        async with session.post(str(server.make_url("/v1/chat/completions")), data=orjson.dumps(body)) as resp:
            assert resp.status == 200
            return str(orjson.loads(await resp.read())["choices"][0]["message"]["content"])

    yield call
    await session.close()
    for server in servers:
        await server.close()


def expected_emotion(start: int, companion: list[str]) -> int:
    e = start
    for c in companion:  # the documented rule, recomputed here independently
        e = max(0, min(100, e + zlib.crc32(c.encode()) % 31 - 10))
    return e


async def test_opening_then_emotion_follows_the_companion(ask):
    opening = read_seeker_reply(await ask("seeker", seeker_messages(EN, 0, ())))
    assert opening is not None and opening.emotion == 30 and not opening.end and opening.reply

    companion = ["That sounds painful.\nTell me more.", "You should just study harder.", "I'm here for you."]
    history: list[Message] = [Message("user", opening.reply)]
    for n, said in enumerate(companion, 1):
        history.append(Message("assistant", said))
        got = read_seeker_reply(await ask("seeker", seeker_messages(EN, 0, history)))
        assert got is not None
        assert got.emotion == expected_emotion(30, companion[:n])
        assert got.end == (got.emotion >= 85)
        history.append(Message("user", got.reply))


async def test_end_once_the_goal_is_met_and_probes_are_asked(ask):
    # find companion lines that lift a start of 80 over the goal, and ones that do not
    up = next(f"line {i}" for i in range(100) if zlib.crc32(f"line {i}".encode()) % 31 - 10 >= 10)
    down = next(f"line {i}" for i in range(100) if zlib.crc32(f"line {i}".encode()) % 31 - 10 < 0)
    high = Scenario(id="h", language="en", seeker="x", situation="y", emotion="calm", start_emotion=80)
    for said, ends in ((up, True), (down, False)):
        got = read_seeker_reply(await ask("seeker", seeker_messages(high, 0, (Message("user", "hi"),
                                                                            Message("assistant", said)))))
        assert got is not None and got.end is ends
    probe = Probe(1, "Do you remember what my dog is called?", "Max")
    got = read_seeker_reply(await ask("seeker", seeker_messages(EN, 1, (), probe=probe,
                                                                earlier=((Message("user", "My dog Max"),),))))
    assert got is not None and got.reply == probe.question
    assert got.emotion == 30  # earlier sessions' companion turns do not count in this one


async def test_chinese_prompt_gets_a_chinese_reply_and_companions_get_free_text(ask):
    got = read_seeker_reply(await ask("seeker", seeker_messages(ZH, 0, ())))
    assert got is not None and "你好" in got.reply
    free = await ask("seeker", (Message("system", "You are a companion."), Message("user", "I feel sad.")))
    assert read_seeker_reply(free) is None and len(free) > 10


async def test_a_malformed_share_is_unreadable_and_recomputable(ask):
    from simulator.judge import draw

    prompts = [seeker_messages(EN, 0, (Message("user", "hi"), Message("assistant", f"reply {i}"))) for i in range(20)]
    unreadable = [read_seeker_reply(await ask("seeker:0.5", p)) is None for p in prompts]
    assert unreadable == [draw(p[-1].content) < 0.5 for p in prompts]
    assert 0 < sum(unreadable) < 20

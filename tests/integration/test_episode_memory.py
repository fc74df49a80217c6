"""`memory` of a companion over real HTTP: a recorder on loopback keeps every request the sweep sends.

`memory = "endpoint"`: each companion request carries OpenAI's `user` field and the X-Conversation-Id header,
one stable id per episode (the same in another run), and only its own session's messages; `"context"`: no id,
and a later session's requests carry the earlier session's messages. The simulator's requests carry no id."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from aiohttp import web

from tests.integration.helpers import query, run_cli
from tests.integration.test_episodes import sweep_args


class Recorder:
    """An OpenAI-compatible server on a thread: a numbered sentence for the companion, the seeker's JSON
    for model "seeker" (never ending, emotion 60), and every request's body and headers kept."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, Any], dict[str, str], str]] = []  # body, headers, what it answered
        self.n = 0
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    async def chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.n += 1
        if body["model"] == "seeker":
            text = json.dumps({"reply": f"Seeker message #{self.n}.", "emotion": 60, "reason": "ok", "end": False})
        else:
            text = f"Companion reply #{self.n}."
        self.requests.append((body, dict(request.headers), text))
        return web.json_response({
            "id": f"c{self.n}", "object": "chat.completion", "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.chat)
        self.runner = web.AppRunner(app, access_log=None)
        self.loop.run_until_complete(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.ready.set()
        self.loop.run_forever()

    def __enter__(self) -> "Recorder":
        self.thread.start()
        assert self.ready.wait(10)
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def _models(path: Path, url: str, memory: str) -> Path:
    path.write_text(
        f'[[models]]\nname = "m1"\nprovider = "openai"\nbase_url = "{url}"\nmodel = "m1"\nmemory = "{memory}"\n'
        "max_concurrency = 2\nmax_retries = 0\n\n"
        f'[user_simulator]\nprovider = "openai"\nbase_url = "{url}"\nmodel = "seeker"\nmax_concurrency = 2\n'
        "max_retries = 0\n")
    return path


def _sweep(tmp_path: Path, memory: str, db: Path) -> Recorder:
    with Recorder() as rec:
        r = run_cli(*sweep_args(_models(tmp_path / "models.toml", rec.base_url, memory), db, 6, 2))
        assert r.returncode == 0, r.stderr
    return rec


def _sessions(db: Path) -> dict[str, set[tuple[str, int]]]:
    """Every stored message's text -> the (item, session)s it was said in (a scenario's own opening words may
    open more than one episode; the recorder's replies are numbered, so each is said once)."""
    out: dict[str, set[tuple[str, int]]] = {}
    for i, s, c in query(db, "SELECT item_id, session, content FROM turns"):
        out.setdefault(c, set()).add((i, s))
    return out


def _where(said: dict[str, set[tuple[str, int]]], answer: str) -> tuple[str, int]:
    (one,) = said[answer]
    return one


def _companion(rec: Recorder) -> list[tuple[dict[str, Any], dict[str, str], str]]:
    return [r for r in rec.requests if r[0]["model"] == "m1"]


def test_endpoint_memory_sends_a_stable_conversation_id_and_only_the_new_session(tmp_path):
    db = tmp_path / "a.duckdb"
    rec = _sweep(tmp_path, "endpoint", db)
    said = _sessions(db)
    by_item: dict[str, set[str]] = {}
    second_sessions = 0
    for body, headers, answer in _companion(rec):
        item, session = _where(said, answer)
        # OpenAI's `user` field and the header: the same id, one per episode.
        assert body["user"] == headers["X-Conversation-Id"]
        by_item.setdefault(item, set()).add(body["user"])
        dialogue = [m["content"] for m in body["messages"] if m["role"] != "system"]
        assert dialogue and all((item, session) in said[c] for c in dialogue)  # this session's messages only
        assert not any("earlier conversation" in m["content"] for m in body["messages"])
        second_sessions += session == 1
    assert len(by_item) == 6 and all(len(ids) == 1 for ids in by_item.values())
    assert len({next(iter(ids)) for ids in by_item.values()}) == 6  # distinct between episodes
    assert second_sessions > 0, "no two-session scenario in the sample: the test proves nothing about memory"
    episode_ids = set().union(*by_item.values())
    for body, headers, _ in rec.requests:
        if body["model"] == "seeker":
            # The simulator gets the episode's id as a header only (its server's log tells episodes apart);
            # `user` is the companion's memory key and never the simulator's.
            assert "user" not in body and headers["X-Conversation-Id"] in episode_ids
    # Stable: another run (a new file) sends each episode the same id.
    again = tmp_path / "b.duckdb"
    rec2 = _sweep(tmp_path, "endpoint", again)
    said2 = _sessions(again)
    ids2 = {_where(said2, answer)[0]: body["user"] for body, _, answer in _companion(rec2)}
    assert ids2 == {item: next(iter(ids)) for item, ids in by_item.items()}


def test_context_memory_sends_the_earlier_sessions_and_no_id(tmp_path):
    db = tmp_path / "a.duckdb"
    rec = _sweep(tmp_path, "context", db)
    said = _sessions(db)
    earlier: dict[tuple[str, int], set[str]] = {}
    for c, places in said.items():
        for place in places:
            earlier.setdefault(place, set()).add(c)
    later = 0
    for body, headers, answer in _companion(rec):
        assert "user" not in body and "X-Conversation-Id" not in headers
        item, session = _where(said, answer)
        sent = {m["content"] for m in body["messages"]}
        if session == 1:
            later += 1
            assert earlier[item, 0] <= sent  # the whole of session 1, before session 2's own messages
            assert any("earlier conversation" in m["content"] for m in body["messages"])
    assert later > 0

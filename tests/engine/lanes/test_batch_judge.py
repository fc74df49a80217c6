"""A batched [judge] (engine/lanes/batch/side_lane.py over engine/lanes/batch/core.py) against an in-memory batch API: verdicts
stored as synchronous judging stores them, one batch per split, re-attachment after a crash, nothing judged
twice, retries by the judge's rules."""

from __future__ import annotations

import zlib

import anyio
import anyio.lowlevel
import msgspec
import orjson
import pytest

from benchmark import registry
from benchmark.adapters.judges import rubric_for
from engine.lanes.batch import core as batch_core
from engine.config.load import load_models
from engine.lanes.judge import JudgeLane, JudgePlan
from engine.run.context import RunContext
from engine.lanes.work import PlannedDataset
from engine.run.progress import Progress
from providers.base import ChatResult
from providers.batch.core import EXPIRED
from store.side import batches
from store.db import connect
from store.results.writer import insert_rows
from tests.engine.batch_fakes import Crash, FakeBatchAPI, permanent, survives, transient
from tests.store.helpers import row

# Each test simulates a provider's batch API through whole runs: seconds each.
pytestmark = pytest.mark.slow

GOOD = '{"completeness": 5, "conciseness": 4, "faithfulness": 5, "fluency": 4, "reason": "fine"}'
MODELS = """
[[models]]
name = "m1"
provider = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "small"

[judge]
name = "j"
provider = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "big"
context_tokens = 8192
"""
N = 6  # stored answers; item 0's is empty (judged without asking)



def reply_of(prompt: str) -> str:
    """The judge's reply, a function of the prompt only: some verdicts, some unreadable."""
    return GOOD if zlib.crc32(prompt.encode()) % 3 else "It reads well, 4/5."


class SyncJudge:
    def __init__(self):
        self.calls = 0

    async def chat(self, messages):
        self.calls += 1
        return ChatResult(text=reply_of(messages[-1].content), input_tokens=10, output_tokens=2)

    async def aclose(self):
        pass


def batch_api(**kw) -> FakeBatchAPI:
    api = FakeBatchAPI(**kw)
    api.answer = lambda body: reply_of(orjson.loads(body)["messages"][-1]["content"])
    return api


class Harness:
    def __init__(self, tmp_path, judge_extra: str = ""):
        self.tmp = tmp_path
        self.db = tmp_path / "r.duckdb"
        (tmp_path / "models.toml").write_text(MODELS + "batch_poll_s = 1\n" + judge_extra)
        self.cfg = load_models(tmp_path / "models.toml")
        raws = tuple((str(i), {"_id": str(i), "text": f"今天上午，市政府宣布第{i}条公交线路将于下月开通。",
                               "summary": f"第{i}条公交线路下月开通"}) for i in range(N))
        self.planned = PlannedDataset(registry.get("lcsts"), raws)
        con = connect(self.db)
        insert_rows(con, [self.answer(i) for i in range(N)])
        con.close()

    def answer(self, i: int, response: str | None = None, run_id: str = "old"):
        text = response if response is not None else ("" if i == 0 else f"Summary: 第{i}条线路开通")
        r = row(model="m1", dataset="lcsts", item_id=str(i), sample=0, status="ok", score=1.0,
                prediction=text.removeprefix("Summary: ") or None)
        return msgspec.structs.replace(r, response=text, run_id=run_id)

    def run(self, api: FakeBatchAPI | None, *, batched: bool = True, run_id: str = "run1", live: list | None = None,
            monkeypatch=None) -> tuple[JudgeLane, SyncJudge] | None:
        """One judging run (the backlog, and ``live`` answers as model lanes hand them over); None: it crashed."""
        judge = self.cfg.judge
        assert judge is not None
        judge = msgspec.structs.replace(judge, batch=batched)
        plan = JudgePlan(judge=judge, rubrics={"lcsts": rubric_for("lcsts")}, planned={"lcsts": self.planned},
                         budgets={"m1": {"lcsts": 4000}}, run_id=run_id, backlog=N, expected=0)
        con = connect(self.db)
        if api is not None:
            monkeypatch.setattr(batch_core, "make_api", lambda provider, adapter: api)
        sync = SyncJudge()
        made: list[JudgeLane] = []

        async def main():
            ctx = RunContext(con, progress=Progress(quiet=True))  # on the loop, as `execute` makes it
            lane = JudgeLane(plan, ctx)
            made.append(lane)
            if lane.batch is not None:
                lane.batch.core._sleep = lambda s: anyio.lowlevel.checkpoint()  # type: ignore[attr-defined]
            lane._providers = {k: sync if not batched else _Bodies(p, sync) for k, p in lane._providers.items()}
            async with anyio.create_task_group() as tg:
                tg.start_soon(lane.writer.run)
                try:
                    async with anyio.create_task_group() as lanes:
                        lanes.start_soon(lane.run, ctx)
                        for r in live or []:
                            job = lane.job(r)
                            if job is not None:
                                await lane.live.send(job)
                        await lane.answers_done()
                finally:
                    with anyio.CancelScope(shield=True):
                        await lane.aclose()

        survived = survives(main)
        con.close()
        if not survived:
            return None
        return made[0], sync

    def verdicts(self):
        con = connect(self.db)
        try:
            return con.execute("SELECT model, dataset, item_id, sample, judge, rubric, answer_md5, status, reason, "
                               "error_class, verdict, score, raw, prompt_truncated, attempts, input_tokens, "
                               "output_tokens, judge_version FROM judgements ORDER BY item_id").fetchall()
        finally:
            con.close()

    def batches(self):
        con = connect(self.db)
        try:
            return batches.list_batches(con, "j")
        finally:
            con.close()


class _Bodies:
    """The judge's real adapter for its request bodies; its calls (batch_retry = "sync") go to the fake."""

    def __init__(self, adapter, sync: SyncJudge):
        self.adapter, self.sync = adapter, sync

    def request_body(self, messages, answer=None) -> bytes:
        return self.adapter.request_body(messages, answer)

    async def chat(self, messages, answer=None):
        return await self.sync.chat(messages)

    async def aclose(self):
        await self.adapter.aclose()


def crash(batch_id):
    raise Crash


def test_batched_verdicts_are_stored_as_synchronous_ones(tmp_path, monkeypatch):
    (tmp_path / "sync").mkdir()
    (tmp_path / "batch").mkdir()
    sync_h = Harness(tmp_path / "sync")
    _, sync = sync_h.run(None, batched=False)
    assert sync.calls == N - 1  # the empty answer is not asked
    batch_h = Harness(tmp_path / "batch")
    api = batch_api()
    lane, calls = batch_h.run(api, monkeypatch=monkeypatch)
    assert calls.calls == 0 and len(api.batches) == 1  # one batch for the split, no call
    expected = sync_h.verdicts()
    assert {r[7] for r in expected} == {"ok", "unparsed", "empty"}
    assert batch_h.verdicts() == expected
    (rec,) = batch_h.batches()
    assert (rec.lane, rec.n_requests, rec.status, rec.collected) == ("judge", N - 1, "ended", True)
    con = connect(batch_h.db)
    assert set(batches.batch_answers(con, rec.label).values()) == {
        batches.AnswerKey("m1", "lcsts", str(i), 0) for i in range(1, N)}
    con.close()
    assert lane._progress.notes[lane.label] == "batches: 1 submitted, 0 in progress, 1 done"


def test_answers_of_this_run_and_the_backlog_go_in_batches_of_batch_max_requests(tmp_path, monkeypatch):
    h = Harness(tmp_path, "batch_max_requests = 4\n")
    api = batch_api()
    live = [h.answer(i, run_id="run1") for i in range(N, N + 3)]
    for r in live:  # the model lanes store them, then hand them over
        con = connect(h.db)
        insert_rows(con, [r])
        con.close()
    h.planned = PlannedDataset(h.planned.dataset, h.planned.records + tuple(
        (str(i), {"_id": str(i), "text": f"第{i}条", "summary": f"第{i}条"}) for i in range(N, N + 3)))
    h.run(api, monkeypatch=monkeypatch, live=live)
    assert sorted(len(b.requests) for b in api.batches.values()) == [4, 4]  # 8 questions: full batches out at 4
    assert len(h.verdicts()) == N + 3


def test_resume_reattaches_the_judge_batch_and_judges_nothing_twice(tmp_path, monkeypatch):
    h = Harness(tmp_path)
    api = batch_api(states=["validating", "in_progress"])
    api.on_poll = crash
    assert h.run(api, monkeypatch=monkeypatch) is None
    assert len(api.batches) == 1
    (rec,) = h.batches()
    assert (rec.lane, rec.batch_id, rec.collected) == ("judge", "batch_0", False)  # recorded before the wait
    assert [r[7] for r in h.verdicts()] == ["empty"]  # the only row that needed no question
    api.on_poll = None
    lane, _ = h.run(api, run_id="run2", monkeypatch=monkeypatch)
    assert len(api.batches) == 1 and lane.batch.core.reattached == 1 and lane.batch.core.submitted == 0
    assert sorted(api.answered) == sorted(set(api.answered)) and len(api.answered) == N - 1  # each answered once
    rows = h.verdicts()
    assert len(rows) == N and {r[14] for r in rows if r[7] != "empty"} == {1}  # stored once each
    assert [(r.status, r.collected) for r in h.batches()] == [("ended", True)]
    lane, _ = h.run(api, run_id="run3", monkeypatch=monkeypatch)  # a third run has nothing to ask
    assert len(api.batches) == 1 and lane.batch.core.submitted == 0 and len(h.verdicts()) == N


def test_an_answer_changed_while_its_batch_was_in_flight_is_asked_again(tmp_path, monkeypatch):
    h = Harness(tmp_path)
    api = batch_api()
    api.on_poll = crash
    assert h.run(api, monkeypatch=monkeypatch) is None
    con = connect(h.db)
    insert_rows(con, [h.answer(3, response="Summary: 另一个答案")])  # re-answered meanwhile (e.g. --fresh)
    con.close()
    api.on_poll = None
    h.run(api, run_id="run2", monkeypatch=monkeypatch)
    assert len(api.batches) == 2 and len(api.batches["batch_1"].requests) == 1
    con = connect(h.db)
    (md5,) = con.execute("SELECT answer_md5 FROM judgements WHERE item_id = '3'").fetchone()
    (now,) = con.execute("SELECT md5(response) FROM results WHERE item_id = '3'").fetchone()
    con.close()
    assert md5 == now and len(h.verdicts()) == N  # the verdict is on the answer stored now


@pytest.mark.parametrize("how", ["failed_requests", EXPIRED])
def test_requests_a_batch_did_not_answer_go_in_a_new_batch(tmp_path, monkeypatch, how):
    h = Harness(tmp_path)
    api = batch_api()
    api.first_only = True
    # The custom ids are the lane's: the first two requests of the first batch fail.
    orig = api.submit

    async def submit(requests, *, label):
        if not api.batches:
            ids = [r.custom_id for r in requests][:2]
            if how == EXPIRED:
                api.final, api.expire = EXPIRED, set(ids)
            else:
                api.fail = {ids[0]: transient(), ids[1]: transient("rate limited")}
        return await orig(requests, label=label)

    api.submit = submit  # type: ignore[method-assign]
    _, sync = h.run(api, monkeypatch=monkeypatch)
    assert len(api.batches) == 2 and len(api.batches["batch_1"].requests) == 2 and sync.calls == 0
    assert {r[7] for r in h.verdicts()} <= {"ok", "unparsed", "empty"} and len(h.verdicts()) == N


def test_batch_retry_sync_asks_the_unanswered_by_calls_and_permanent_errors_are_error_rows(tmp_path, monkeypatch):
    h = Harness(tmp_path, 'batch_retry = "sync"\n')
    api = batch_api()
    orig = api.submit

    async def submit(requests, *, label):
        ids = [r.custom_id for r in requests]
        api.fail = {ids[0]: transient(), ids[1]: permanent()}
        return await orig(requests, label=label)

    api.submit = submit  # type: ignore[method-assign]
    _, sync = h.run(api, monkeypatch=monkeypatch)
    assert len(api.batches) == 1 and sync.calls == 1
    statuses = sorted(r[7] for r in h.verdicts())
    assert statuses.count("error") == 1 and len(statuses) == N
    (err,) = [r for r in h.verdicts() if r[7] == "error"]
    assert err[9] == "permanent"


def test_a_judge_batch_created_just_before_a_crash_is_found_by_its_label(tmp_path, monkeypatch):
    h = Harness(tmp_path)
    api = batch_api()

    def lost(*a, **kw):
        raise Crash

    monkeypatch.setattr(batches, "set_created", lost)  # created at the provider, its id never stored
    assert h.run(api, monkeypatch=monkeypatch) is None
    monkeypatch.undo()
    (rec,) = h.batches()
    assert (rec.lane, rec.status, rec.batch_id) == ("judge", "submitting", None)
    lane, _ = h.run(api, run_id="run2", monkeypatch=monkeypatch)
    assert len(api.batches) == 1 and lane.batch.core.reattached == 1  # adopted, not submitted again
    assert len(api.answered) == N - 1 and len(h.verdicts()) == N

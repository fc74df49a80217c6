"""engine/lanes/batch/model_lane.py against an in-memory batch API: limits, durability, re-attachment, retries, errors."""

from __future__ import annotations

import uuid

import anyio
import anyio.lowlevel
import pytest

from engine.lanes.batch import core as batch_core
from engine.lanes.batch.core import MAX_ROUNDS
from engine.lanes.batch.model_lane import BatchLane
from engine.lanes.batch.requests import CUSTOM_ID, custom_id
from engine.config.models import ModelConfig, Price
from engine.run.generation import ProviderSet
from engine.lanes.work import pending_work
from engine.run.progress import Progress
from engine.lanes.model_lane import Stamps
from engine.run.context import Budget
from providers.batch.core import EXPIRED, FAILED
from providers.errors import ErrorClass, ProviderError
from store.side import batches
from store.results import resume
from store.side.batches import ItemKey
from store.db import connect
from store.results.writer import Writer
from tests.engine.batch_fakes import (
    Crash,
    EchoDataset,
    FakeBatchAPI,
    FakeChat,
    permanent,
    planned,
    survives,
    transient,
)

# Each test simulates a provider's batch API through whole runs: seconds each.
pytestmark = pytest.mark.slow


def model(**kw) -> ModelConfig:
    return ModelConfig(name="m", provider="openai", model="m", batch=True, batch_poll_s=1.0, **kw)


def cid(i: int, ds: str = "echo") -> str:
    return custom_id(ItemKey(ds, str(i), 0))


class Harness:
    def __init__(self, tmp_path, n: int = 10):
        self.db = tmp_path / "r.duckdb"
        self.ds = EchoDataset(n=n)
        self.chats: list[FakeChat] = []

    def run(self, api: FakeBatchAPI, m: ModelConfig | None = None, budget: Budget | None = None,
            price: Price | None = None, prompt_hash: str = "ph") -> BatchLane | None:
        """One engine run; None when it crashed."""
        m = m or model()
        con = connect(self.db)
        p = planned(self.ds)
        counts = resume.done_counts(con, ["m"], {p.id: p.ids})
        work = pending_work([p], lambda d: counts.get(("m", d), 0), lambda d: resume.done_keys(con, "m", d))

        def make(gen):
            chat = FakeChat(gen)
            self.chats.append(chat)
            return chat

        providers = ProviderSet(m, [p.dataset], make)
        stamps = Stamps("v1", {p.id: prompt_hash}, run_id=uuid.uuid4().hex[:8], price=price, identity={p.id: "idn"})
        progress = Progress(quiet=True)
        progress.add("m", p.size, sum(counts.values()))
        writer = Writer(con)
        bl = BatchLane(m, api, providers, work, writer, stamps, progress, con.cursor(), budget=budget,
                       sleep=lambda s: anyio.lowlevel.checkpoint())

        async def main():
            async with anyio.create_task_group() as tg:
                tg.start_soon(writer.run)
                try:
                    await bl.run()
                finally:
                    with anyio.CancelScope(shield=True):
                        await writer.close()
                        await writer.finished.wait()

        survived = survives(main)
        con.close()
        if not survived:
            return None
        return bl

    def rows(self, sql: str = "SELECT item_id, status, error_class, score, attempts, cost_usd FROM results "
                              "ORDER BY item_id::INT"):
        con = connect(self.db)
        try:
            return con.execute(sql).fetchall()
        finally:
            con.close()

    def all_ok_once(self):
        rows = self.rows()
        assert [r[0] for r in rows] == [str(i) for i in range(self.ds.n)]
        assert {(r[1], r[3], r[4]) for r in rows} == {("ok", 1.0, 1)}  # right answers, each stored once


def test_custom_ids_are_stable_and_provider_safe():
    assert cid(3) == cid(3) != cid(4)
    assert CUSTOM_ID.match(cid(3)) and CUSTOM_ID.match(custom_id(ItemKey("a/b c", "x" * 500, 7)))


@pytest.mark.parametrize("api_kw, model_kw, sizes", [
    ({"max_requests": 4}, {}, [4, 4, 2]),
    ({}, {"batch_max_requests": 3}, [3, 3, 3, 1]),
    ({"max_bytes": 400}, {}, None),  # bytes decide; every batch within them (the fake asserts it)
])
def test_items_are_split_within_the_limits_and_scored_like_sync_answers(tmp_path, api_kw, model_kw, sizes):
    h = Harness(tmp_path)
    api = FakeBatchAPI(**api_kw)
    bl = h.run(api, model(**model_kw))
    got = [len(b.requests) for b in api.batches.values()]
    assert sum(got) == 10 and (sizes is None and len(got) > 2 or got == sizes)
    h.all_ok_once()
    assert bl.submitted == len(got)
    assert bl.progress.notes["m"] == f"batches: {len(got)} submitted, 0 in progress, {len(got)} done"
    recs = batches.list_batches(connect(h.db), "m")
    assert [r.n_requests for r in recs] == got and all(r.collected and r.status == "ended" for r in recs)


def test_bodies_are_the_synchronous_bodies(tmp_path):
    h = Harness(tmp_path, n=2)
    api = FakeBatchAPI()
    h.run(api, model(temperature=0.3, max_tokens=7))
    (b,) = api.batches.values()
    sync = h.chats[0]
    p = planned(h.ds)
    expected = [sync.request_body(it.messages, it.answer) for it in p.items]
    assert [r.body for r in b.requests] == expected and b"0.3" in expected[0]


def test_batch_is_recorded_with_its_provider_id_before_the_engine_waits(tmp_path):
    h = Harness(tmp_path)
    api = FakeBatchAPI(max_requests=5)
    # What the store holds when the engine starts waiting on each batch, and what progress shows then.
    bl_holder = {}
    notes = []
    orig = batch_core.BatchCore._watch

    async def watch(self, b, retry):
        rec = {r.label: r for r in batches.open_batches(self.con, "m")}[b.label]
        bl_holder[b.label] = (rec.batch_id, rec.status, len(batches.batch_items(self.con, b.label)))
        notes.append(self.progress.notes["m"])
        await orig(self, b, retry)

    batch_core.BatchCore._watch = watch
    try:
        h.run(api)
    finally:
        batch_core.BatchCore._watch = orig
    assert sorted(bl_holder.values()) == [("batch_0", "running", 5), ("batch_1", "running", 5)]
    assert notes[0] == "batches: 2 submitted, 2 in progress, 0 done"
    h.all_ok_once()


def test_resume_reattaches_and_submits_nothing_twice(tmp_path):
    h = Harness(tmp_path)
    api = FakeBatchAPI(max_requests=4, states=["validating", "in_progress", "finalizing"])

    def crash(batch_id):
        raise Crash

    api.on_poll = crash
    assert h.run(api) is None
    assert len(api.batches) == 3 and h.rows() == []
    recs = batches.list_batches(connect(h.db), "m")
    assert [(r.batch_id, r.status, r.collected) for r in recs] == [(f"batch_{i}", "running", False) for i in range(3)]
    api.on_poll = None
    bl = h.run(api)
    assert len(api.batches) == 3 and bl.submitted == 0  # re-attached, nothing submitted again
    assert bl.progress.notes["m"] == "batches: 0 submitted (+3 re-attached), 0 in progress, 3 done"
    assert sorted(api.answered) == sorted(cid(i) for i in range(10))  # no request answered twice
    h.all_ok_once()
    assert h.run(api).submitted == 0 and len(api.batches) == 3  # a third run has nothing to do


def test_a_batch_that_ended_while_the_engine_was_down_is_collected_once(tmp_path):
    h = Harness(tmp_path)
    api = FakeBatchAPI(states=["in_progress"] * 5)

    def crash(batch_id):
        raise Crash

    api.on_poll = crash
    assert h.run(api) is None
    api.on_poll = None
    api.batches["batch_0"].states.clear()  # it ended meanwhile
    polls = api.polls
    h.run(api)
    assert api.polls == polls + 1 and api.batches["batch_0"].results_read == 1
    assert api.discarded == ["batch_0"]  # its files deleted once its rows were stored
    h.all_ok_once()
    h.run(api)
    assert api.batches["batch_0"].results_read == 1 and len(api.batches) == 1


def test_collection_cut_short_after_its_rows_are_stored_stores_nothing_twice(tmp_path, monkeypatch):
    h = Harness(tmp_path)
    api = FakeBatchAPI()

    def crash(con, label):
        raise Crash

    monkeypatch.setattr(batches, "mark_collected", crash)
    assert h.run(api) is None
    assert len(h.rows()) == 10  # the rows reached the database, the collected mark did not
    monkeypatch.undo()
    h.run(api)
    assert api.batches["batch_0"].results_read == 2 and len(api.batches) == 1
    h.all_ok_once()  # attempts 1: no row stored twice
    assert batches.open_batches(connect(h.db), "m") == []


@pytest.mark.parametrize("final", ["failed_requests", EXPIRED, FAILED])
def test_unanswered_requests_are_asked_again_in_a_new_batch(tmp_path, final):
    h = Harness(tmp_path)
    api = FakeBatchAPI()
    api.first_only = True
    if final == "failed_requests":
        api.fail = {cid(2): transient(), cid(7): transient("rate limited")}
        again = {cid(2), cid(7)}
    elif final == EXPIRED:
        api.final, api.expire = EXPIRED, {cid(1), cid(5), cid(9)}
        again = api.expire
    else:
        api.final = FAILED
        again = {cid(i) for i in range(10)}
    bl = h.run(api)
    assert len(api.batches) == 2 and bl.submitted == 2
    assert {r.custom_id for r in api.batches["batch_1"].requests} == again
    h.all_ok_once()
    assert h.chats[0].calls == []  # no synchronous call


def test_batch_retry_sync_asks_the_unanswered_by_calls(tmp_path):
    h = Harness(tmp_path)
    api = FakeBatchAPI()
    api.fail = {cid(4): transient(), cid(8): transient()}
    price = Price(input_per_mtok=1.0, output_per_mtok=1.0)
    h.run(api, model(batch_retry="sync"), price=price)
    assert len(api.batches) == 1 and len(h.chats[0].calls) == 2
    h.all_ok_once()
    costs = {r[0]: r[5] for r in h.rows()}
    assert costs["4"] == pytest.approx(12e-6) and costs["0"] == pytest.approx(6e-6)  # sync: full price; batch: half


def test_permanent_errors_are_error_rows_never_scored_nor_retried_in_the_run(tmp_path):
    h = Harness(tmp_path)
    api = FakeBatchAPI()
    api.fail = {cid(3): permanent()}
    h.run(api)
    assert len(api.batches) == 1
    rows = {r[0]: r for r in h.rows()}
    assert rows["3"][1:4] == ("error", "permanent", None)
    assert h.rows("SELECT prediction, response FROM results WHERE item_id = '3'") == [(None, None)]
    assert sum(1 for r in rows.values() if r[1] == "ok") == 9
    api.fail = {}
    h.run(api)  # a later run asks the error row again, as it does for synchronous errors
    assert len(api.batches) == 2 and [r.custom_id for r in api.batches["batch_1"].requests] == [cid(3)]


def test_retries_are_bounded_then_stored_as_errors(tmp_path):
    h = Harness(tmp_path, n=3)
    api = FakeBatchAPI()
    api.fail = {cid(1): transient("still failing")}
    h.run(api)
    assert len(api.batches) == MAX_ROUNDS
    rows = {r[0]: r for r in h.rows()}
    assert rows["1"][1:3] == ("error", "transient") and rows["0"][1] == rows["2"][1] == "ok"


@pytest.mark.parametrize("findable", [True, False])
def test_a_submitting_row_is_adopted_by_label_or_submitted_again(tmp_path, monkeypatch, findable):
    h = Harness(tmp_path)
    api = FakeBatchAPI()

    def crash(*a, **kw):
        raise Crash

    monkeypatch.setattr(batches, "set_created", crash)  # created at the provider, its id never stored
    assert h.run(api) is None
    monkeypatch.undo()
    (rec,) = batches.list_batches(connect(h.db), "m")
    assert rec.status == "submitting" and rec.batch_id is None and len(api.batches) == 1
    api.finds = findable
    h.run(api)
    # An API without labels is told what was recorded: the batch's custom_ids and when, and the ids held.
    (hint,) = [x for x in api.hints if x is not None]
    assert len(hint.custom_ids) == len(api.batches["batch_0"].requests) and hint.since > 0
    assert hint.known == frozenset()
    recs = batches.list_batches(connect(h.db), "m")
    if findable:
        assert len(api.batches) == 1 and [(r.batch_id, r.collected) for r in recs] == [("batch_0", True)]
    else:  # the API cannot tell: the items go in a new batch (the old one is the provider's to expire)
        assert len(api.batches) == 2 and recs[0].status == "not_submitted" and recs[1].batch_id == "batch_1"
    h.all_ok_once()


def test_a_lost_create_answer_is_found_by_label_not_submitted_twice(tmp_path):
    h = Harness(tmp_path)
    api = FakeBatchAPI()
    api.submit_errors, api.create_then_fail = [transient("connection reset")], True
    bl = h.run(api)
    assert len(api.batches) == 1 and bl.submitted == 1
    h.all_ok_once()


def test_a_create_of_unknown_outcome_is_settled_by_the_next_run(tmp_path):
    h = Harness(tmp_path, n=3)
    api = FakeBatchAPI()
    api.submit_errors = [transient("timed out")]  # no HTTP status: it may have reached the provider
    bl = h.run(api)
    assert api.batches == {} and bl.submitted == 0 and h.rows() == []  # nothing stored, nothing asked again
    (rec,) = batches.list_batches(connect(h.db), "m")
    assert rec.status == "submitting"
    h.run(api)  # not found by its label: submitted now
    assert len(api.batches) == 1
    h.all_ok_once()


def test_a_submission_the_server_refused_for_now_is_tried_again(tmp_path):
    h = Harness(tmp_path, n=3)
    api = FakeBatchAPI()
    api.submit_errors = [ProviderError(ErrorClass.TRANSIENT, "overloaded", status=503)]
    assert h.run(api).submitted == 1 and len(api.batches) == 1
    h.all_ok_once()


def test_a_refused_submission_stores_error_rows(tmp_path):
    h = Harness(tmp_path, n=3)
    api = FakeBatchAPI()
    api.submit_errors = [permanent("file invalid")]
    h.run(api)
    assert api.batches == {}
    assert {r[1:3] for r in h.rows()} == {("error", "permanent")}
    (rec,) = batches.list_batches(connect(h.db), "m")
    assert rec.status == "not_submitted" and rec.collected


def test_budget_counts_a_batch_when_it_is_submitted(tmp_path):
    h = Harness(tmp_path)
    api = FakeBatchAPI(max_requests=5)
    price = Price(input_per_mtok=1000.0, output_per_mtok=1000.0)
    # One batch of 5 costs at most 5 x (1 + 256 tokens) x $1000/M x 0.5 = $0.64; the cap admits one.
    budget = Budget(1.0)
    h.run(api, budget=budget, price=price)
    assert len(api.batches) == 1 and budget.stopped
    assert budget.spent == pytest.approx(5 * 12 * 500 / 1e6) and budget.reserved == pytest.approx(0)
    assert len(h.rows()) == 5  # the rest stays pending for a run with a larger budget


def test_a_batch_made_with_other_prompts_is_cancelled_not_collected(tmp_path):
    h = Harness(tmp_path, n=4)
    api = FakeBatchAPI()

    def crash(batch_id):
        raise Crash

    api.on_poll = crash
    assert h.run(api) is None
    api.on_poll = None
    h.run(api, prompt_hash="changed")  # e.g. --fresh after the template changed
    assert api.batches["batch_0"].cancelled and api.batches["batch_0"].results_read == 0
    assert len(api.batches) == 2
    assert h.rows("SELECT DISTINCT prompt_hash FROM results") == [("changed",)]
    recs = batches.list_batches(connect(h.db), "m")
    assert [(r.status, r.collected) for r in recs] == [("stale", True), ("ended", True)]

"""store/side/batches.py: a batch is recorded with its items before submission, then tracked to collection."""

from datetime import UTC, datetime

from store.side import batches
from store.side.batches import ItemKey
from store.db import connect
from store.results.writer import ResultRow, insert_rows


def _con(tmp_path):
    return connect(tmp_path / "r.duckdb")


ITEMS = {"c0": ItemKey("sst2", "1", 0), "c1": ItemKey("sst2", "2", 0), "c2": ItemKey("sst2", "2", 1)}


def test_recorded_before_submission_with_its_items(tmp_path):
    con = _con(tmp_path)
    batches.record_batch(con, label="L1", run_id="r", model="m", provider="openai", items=ITEMS, est_cost_usd=0.5)
    (rec,) = batches.open_batches(con, "m")
    assert (rec.label, rec.status, rec.batch_id, rec.n_requests, rec.collected) == ("L1", "submitting", None, 3, False)
    assert rec.est_cost_usd == 0.5 and rec.submitted_at is not None
    assert batches.batch_items(con, "L1") == ITEMS
    assert batches.open_batches(con, "other") == []


def test_created_status_and_collected(tmp_path):
    con = _con(tmp_path)
    batches.record_batch(con, label="L1", run_id="r", model="m", provider="openai", items=ITEMS, est_cost_usd=None)
    batches.set_created(con, "L1", "batch_abc", provider_status="validating")
    batches.set_status(con, "L1", status="running", provider_status="in_progress", succeeded=1, failed=0)
    rec = batches.open_batches(con, "m")[0]
    assert (rec.batch_id, rec.status, rec.provider_status, rec.succeeded, rec.ended_at) == (
        "batch_abc", "running", "in_progress", 1, None)
    batches.set_status(con, "L1", status="ended", provider_status="completed", succeeded=2, failed=1, ended=True)
    batches.mark_collected(con, "L1")
    assert batches.open_batches(con, "m") == []
    (rec,) = batches.list_batches(con, "m")
    assert rec.collected and rec.status == "ended" and rec.failed == 1 and rec.ended_at is not None


def test_not_submitted_is_closed_and_not_counted_as_batched(tmp_path):
    con = _con(tmp_path)
    batches.record_batch(con, label="L1", run_id="r", model="m", provider="openai", items=ITEMS, est_cost_usd=None)
    batches.record_batch(con, label="L2", run_id="r", model="m", provider="openai", items=ITEMS, est_cost_usd=None)
    batches.set_not_submitted(con, "L1", "not found after a crash")
    batches.set_created(con, "L2", "b2")
    assert [r.label for r in batches.open_batches(con, "m")] == ["L2"]
    assert batches.batched_summary(con) == [("model", "m", "openai", 1, 3, 1)]
    batches.record_batch(con, label="L3", run_id="r", model="m", provider="openai", items={"c0": ITEMS["c0"]},
                         est_cost_usd=None)  # a retry: the same item again
    batches.set_created(con, "L3", "b3")
    batches.mark_collected(con, "L2")
    assert batches.batched_summary(con) == [("model", "m", "openai", 2, 3, 1)]
    assert batches.batched_summary(con, "other") == []


def test_answered_lists_requests_whose_item_has_an_ok_row(tmp_path):
    con = _con(tmp_path)
    batches.record_batch(con, label="L1", run_id="r", model="m", provider="openai", items=ITEMS, est_cost_usd=None)
    now = datetime.now(UTC)

    def row(item_id, sample, status):
        return ResultRow("m", "sst2", item_id, sample, status, None, None, 1, "A", "A", "A", 1.0, None, 1.0, 1, 1,
                         None, "h", "v", "1", now, now)

    insert_rows(con, [row("1", 0, "ok"), row("2", 0, "error"), row("2", 1, "ok")])
    assert batches.answered(con, "m", "L1") == {"c0", "c2"}
    assert batches.answered(con, "other", "L1") == set()


def test_a_judges_batch_carries_answers_of_several_models_in_its_own_lane(tmp_path):
    con = _con(tmp_path)
    answers = {"q0": batches.AnswerKey("m1", "lcsts", "1", 0), "q1": batches.AnswerKey("m2", "lcsts", "1", 0)}
    batches.record_batch(con, label="J1", run_id="r", model="j", provider="openai", items=answers,
                         est_cost_usd=0.0, lane=batches.JUDGE)
    batches.set_created(con, "J1", "b1")
    batches.record_batch(con, label="L1", run_id="r", model="j", provider="openai", items=ITEMS, est_cost_usd=None)
    batches.set_created(con, "L1", "b2")  # a model named like the judge: another lane
    assert [r.label for r in batches.open_batches(con, "j", batches.JUDGE)] == ["J1"]
    assert [r.label for r in batches.open_batches(con, "j")] == ["L1"]
    assert batches.batch_answers(con, "J1") == answers
    assert [r.lane for r in batches.list_batches(con, "j")] == ["judge", "model"]
    assert batches.batched_summary(con) == [("model", "j", "openai", 1, 3, 1), ("judge", "j", "openai", 1, 2, 1)]


def test_a_file_made_before_lanes_gets_the_column_with_its_batches_as_the_models(tmp_path):
    con = _con(tmp_path)
    batches.record_batch(con, label="L1", run_id="r", model="m", provider="openai", items=ITEMS, est_cost_usd=None)
    con.execute("ALTER TABLE batches DROP COLUMN lane")
    con.close()
    con = _con(tmp_path)  # opening the file again runs store/side/batches.sql
    assert [(r.label, r.lane) for r in batches.open_batches(con, "m")] == [("L1", "model")]


def test_known_batch_ids_are_every_lanes_and_models_of_a_provider(tmp_path):
    """What find is told a lost Anthropic batch cannot be: any id the engine already holds."""
    con = _con(tmp_path)
    for label, model, provider, batch_id in (("L1", "m", "anthropic", "msgbatch_1"), ("L2", "j", "anthropic", None),
                                             ("L3", "x", "anthropic", "msgbatch_3"), ("L4", "m", "openai", "b4")):
        batches.record_batch(con, label=label, run_id="r", model=model, provider=provider, items=ITEMS,
                             est_cost_usd=None, lane="judge" if model == "j" else "model")
        if batch_id:
            batches.set_created(con, label, batch_id)
    assert batches.known_batch_ids(con, "anthropic") == {"msgbatch_1", "msgbatch_3"}

"""`python -m engine batches DB [--model] [--cancel --models]`: listing and cancelling recorded batches."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import anyio

from engine.lanes.batch import core as batch_core
from engine.report.batch_lines import report_lines, table
from engine.cli import main
from providers.batch.core import BatchRequest
from store.side import batches
from store.side.batches import ItemKey
from store.db import connect
from tests.engine.batch_fakes import FakeBatchAPI

ITEMS = {"c0": ItemKey("d", "1", 0), "c1": ItemKey("d", "2", 0)}


def _db(tmp_path):
    db = tmp_path / "r.duckdb"
    con = connect(db)
    batches.record_batch(con, label="L1", run_id="r", model="gpt", provider="openai", items=ITEMS, est_cost_usd=0.1)
    batches.set_created(con, "L1", "batch_0")
    batches.set_status(con, "L1", status="running", provider_status="in_progress")
    batches.record_batch(con, label="L2", run_id="r", model="claude", provider="anthropic", items=ITEMS,
                         est_cost_usd=None)
    batches.set_created(con, "L2", "msgbatch_9")
    batches.set_status(con, "L2", status="ended", provider_status="ended", succeeded=2, failed=0, ended=True)
    batches.mark_collected(con, "L2")
    con.close()
    return db


def test_lists_every_batch_or_one_models(tmp_path, capsys):
    db = _db(tmp_path)
    assert main(["batches", str(db)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:5] == ["model", "lane", "provider", "batch", "id"]
    assert [line.split()[:6] for line in out[1:]] == [["gpt", "model", "openai", "batch_0", "running", "in_progress"],
                                                      ["claude", "model", "anthropic", "msgbatch_9", "ended", "ended"]]
    assert main(["batches", str(db), "--model", "claude"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]] == ["claude"]


def test_age_runs_until_the_batch_ended_or_now():
    t0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    rec = batches.BatchRecord(label="L", run_id=None, model="m", provider="openai", batch_id="b", status="running",
                              provider_status="in_progress", n_requests=3, stamp=None, succeeded=None, failed=None,
                              est_cost_usd=None, submitted_at=t0, ended_at=None, collected=False)
    assert table([rec], now=t0 + timedelta(hours=2, minutes=5))[1].split()[-2:] == ["2h05m", "no"]


def test_cancel_asks_the_provider_for_batches_in_flight_only(tmp_path, capsys, monkeypatch):
    db = _db(tmp_path)
    models = tmp_path / "models.toml"
    models.write_text('[[models]]\nname = "gpt"\nprovider = "openai"\nmodel = "gpt-4o-mini"\nbatch = true\n'
                      '[[models]]\nname = "claude"\nprovider = "anthropic"\nmodel = "c"\nbatch = true\n')
    api = FakeBatchAPI()
    anyio.run(lambda: api.submit([BatchRequest("c0", b'{"messages":[{"content":"q1"}]}')], label="L1"))
    monkeypatch.setattr(batch_core, "make_api", lambda provider, adapter: api)
    assert main(["batches", str(db), "--cancel", "--models", str(models)]) == 0
    assert capsys.readouterr().out.strip() == "gpt batch_0: cancel requested (cancelled)"
    assert api.batches["batch_0"].cancelled
    (rec,) = batches.list_batches(connect(db), "gpt")
    assert (rec.status, rec.collected) == ("cancelled", False)  # the next sweep collects what it finished
    assert main(["batches", str(db), "--cancel", "--models", str(models)]) == 0
    assert capsys.readouterr().out.strip() == "no batch in flight"


def test_bad_input_exits_2_with_one_line(tmp_path, capsys):
    db = _db(tmp_path)
    assert main(["batches", str(tmp_path / "nope.duckdb")]) == 2
    assert main(["batches", str(db), "--cancel"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "no such database" in err[0] and "--cancel needs --models" in err[1]


def test_report_names_the_lane_of_a_judges_batches(tmp_path):
    db = _db(tmp_path)
    con = connect(db)
    batches.record_batch(con, label="J1", run_id="r", model="sim-judge", provider="openai", lane=batches.JUDGE,
                         items={"q0": batches.AnswerKey("gpt", "lcsts", "1", 0)}, est_cost_usd=0.0)
    batches.set_created(con, "J1", "batch_7")
    still_open = ", 1 still open (run the sweep again to collect them)"
    assert report_lines(con) == [
        "batched: claude (anthropic): 2 item(s) via its batch API in 1 batch(es)",
        "batched: gpt (openai): 2 item(s) via its batch API in 1 batch(es)" + still_open,
        "batched: judge sim-judge (openai): 1 answer(s) judged via its batch API in 1 batch(es)" + still_open]
    con.close()


def test_cancel_finds_a_judges_batch_by_its_lane(tmp_path, capsys, monkeypatch):
    db = tmp_path / "r.duckdb"
    con = connect(db)
    batches.record_batch(con, label="J1", run_id="r", model="gpt", provider="openai", lane=batches.JUDGE,
                         items={"q0": batches.AnswerKey("m", "lcsts", "1", 0)}, est_cost_usd=0.0)
    batches.set_created(con, "J1", "batch_0")
    con.close()
    models = tmp_path / "models.toml"  # the batch is the [judge] entry's, not a model's
    models.write_text('[[models]]\nname = "m"\nprovider = "anthropic"\nmodel = "c"\n'
                      '[judge]\nname = "gpt"\nprovider = "openai"\nmodel = "gpt-4o-mini"\nbatch = true\n')
    api = FakeBatchAPI()
    anyio.run(lambda: api.submit([BatchRequest("q0", b'{"messages":[{"content":"q1"}]}')], label="J1"))
    made = []
    monkeypatch.setattr(batch_core, "make_api", lambda provider, adapter: made.append(provider) or api)
    assert main(["batches", str(db), "--cancel", "--models", str(models)]) == 0
    assert capsys.readouterr().out.strip() == "gpt batch_0: cancel requested (cancelled)"
    assert made == ["openai"] and api.batches["batch_0"].cancelled

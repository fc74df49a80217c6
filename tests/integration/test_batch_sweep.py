"""A mixed sweep (one model batched, one not) into a real DuckDB file, stopped while its batches are in
flight and run again. The batch API is the in-memory fake, injected in-process (the simulator's batch
endpoints come with the provider implementations); the unbatched model calls the simulated server."""

from __future__ import annotations

import orjson
import pytest

from engine import batch_lane
from engine.batches_cmd import report_lines
from engine.estimate import estimate
from engine.sweep import SweepOptions, sweep
from providers.errors import ErrorClass, ProviderError
from simulator.core import make_answer
from simulator.server import SimServerProcess
from store.db import connect
from tests.engine.batch_fakes import FakeBatchAPI
from tests.integration.helpers import query


class Crash(BaseException):
    """The process stops here while batches are in flight."""


def gold_answer(body: bytes) -> str:
    msgs = orjson.loads(body)["messages"]
    return make_answer("gold", msgs[-1]["content"], [m["content"] for m in msgs])


def _models(path, base_url):
    path.write_text(f"""
[[models]]
name = "batched"
provider = "openai"
base_url = "{base_url}"
model = "batched"
max_tokens = 8
batch = true
batch_poll_s = 0.01
price = {{ input_per_mtok = 1.0, output_per_mtok = 2.0 }}

[[models]]
name = "calls"
provider = "openai"
base_url = "{base_url}"
model = "calls"
max_tokens = 8
""")
    return path


def _raise_crash(batch_id):
    raise Crash


def test_mixed_sweep_killed_with_batches_in_flight_resumes_without_paying_twice(tmp_path, monkeypatch):
    api = FakeBatchAPI(max_requests=15, states=["validating", "in_progress"])
    api.answer = gold_answer
    api.first_only = True
    api.fail = {}  # filled below from the first batch's ids: two requests fail transiently
    monkeypatch.setattr(batch_lane, "make_api", lambda provider, adapter: api)
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold") as sim:
        opts = SweepOptions(models_path=_models(tmp_path / "models.toml", sim.base_url), db=db,
                            datasets=["synthetic"], limit=40, quiet=True)
        (est,) = [e for e in estimate(opts) if e.model == "batched"]
        assert est.items == 40 and "batch price (x0.5)" in est.note
        assert est.cost_usd == pytest.approx((est.input_tokens * 1.0 + est.output_tokens * 2.0) / 2 / 1e6)
        api.on_poll = _raise_crash
        with pytest.raises((Crash, BaseExceptionGroup)):
            sweep(opts)
        assert len(api.batches) == 3  # 40 items in batches of at most 15, all recorded and submitted
        first = api.batches["batch_0"].requests
        api.fail = {r.custom_id: ProviderError(ErrorClass.TRANSIENT, "overloaded") for r in first[:2]}
        stored = query(db, "SELECT count(*), count(batch_id), count(*) FILTER (WHERE collected) FROM batches")
        assert stored == [(3, 3, 0)]
        api.on_poll = None
        result = sweep(opts)
        assert not result.interrupted
        # Only the unbatched model called the server: its 40, and at most its calls cut short by the stop.
        assert 40 <= sim.stats()["total"] <= 48
    assert len(api.batches) == 4  # the three re-attached, one new for the two failed requests
    assert {r.custom_id for r in api.batches["batch_3"].requests} == set(api.fail)
    assert len(api.answered) == 40 and len(set(api.answered)) == 40  # no request answered twice
    rows = query(db, "SELECT model, count(*), count(*) FILTER (WHERE status = 'ok'), avg(score), max(attempts) "
                     "FROM results GROUP BY 1 ORDER BY 1")
    assert rows == [("batched", 40, 40, 1.0, 1), ("calls", 40, 40, 1.0, 1)]
    # Batched rows carry the same stamps as synchronous ones, and the batch price.
    (same,), = query(db, "SELECT count(DISTINCT prompt_hash) FROM results")
    assert same == 1
    (cost,), = query(db, "SELECT sum(cost_usd) FROM results WHERE model = 'batched'")
    assert cost == pytest.approx(40 * (10 * 1.0 + 2 * 2.0) / 2 / 1e6)
    con = connect(db, read_only=True)  # what `report` prints under the leaderboard
    try:
        assert report_lines(con) == ["batched: batched (openai): 40 item(s) via its batch API in 4 batch(es)"]
    finally:
        con.close()

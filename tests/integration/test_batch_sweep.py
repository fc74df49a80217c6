"""A mixed sweep (one model batched, one not) into a real DuckDB file, stopped while its batches are in
flight and run again. The batch API is the in-memory fake, injected in-process (the simulator's batch
endpoints come with the provider implementations); the unbatched model calls the simulated server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import orjson
import pytest

from engine.lanes.batch import core as batch_core
from engine.report.batch_lines import report_lines
from engine.sweep.forecast import forecast
from engine.sweep.sweep import SweepOptions, sweep
from providers.errors import ErrorClass, ProviderError
from simulator.core import make_answer
from simulator.server import SimServerProcess
from store.db import connect
from tests.engine.batch_fakes import FakeBatchAPI
from tests.integration.batch_child import state, write_state
from tests.integration.helpers import ROOT, query


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
    monkeypatch.setattr(batch_core, "make_api", lambda provider, adapter: api)
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold") as sim:
        opts = SweepOptions(models_path=_models(tmp_path / "models.toml", sim.base_url), db=db,
                            datasets=["synthetic"], limit=40, quiet=True)
        (est,) = [e for e in forecast(opts) if e.model == "batched"]
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


def test_sweep_killed_with_sigkill_while_batches_are_in_flight_submits_nothing_twice(tmp_path):
    state_file = tmp_path / "provider.pickle"
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold") as sim:
        models = _models(tmp_path / "models.toml", sim.base_url)
        args = [sys.executable, "-m", "tests.integration.batch_child", str(state_file), "sweep", str(models),
                "--db", str(db), "--datasets", "synthetic", "--limit", "40", "--quiet"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 60
            while not (state_file.exists() and len(state(state_file).get("batches", {})) == 3
                       and state(state_file).get("polls", 0) >= 3):
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read().decode()[-2000:]
                time.sleep(0.05)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        st = state(state_file)
        assert len(st["batches"]) == 3
        # While the engine was down: the batches ended, two requests of the first one failed.
        for b in st["batches"].values():
            b.states.clear()
        failing = {r.custom_id for r in st["batches"]["batch_0"].requests[:2]}
        write_state(state_file, batches=st["batches"], fail_ids=failing, first_only=True)
        r = subprocess.run(args, check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-2000:]
    st = state(state_file)
    assert len(st["batches"]) == 4  # three re-attached, one for the two failed requests
    assert {r.custom_id for r in st["batches"]["batch_3"].requests} == failing
    assert sorted(st["answered"]) == sorted(set(st["answered"])) and len(st["answered"]) == 40
    assert query(db, "SELECT count(*), count(*) FILTER (WHERE status = 'ok'), max(attempts) FROM results "
                     "WHERE model = 'batched'") == [(40, 40, 1)]
    assert query(db, "SELECT count(*), count(*) FILTER (WHERE collected) FROM batches") == [(4, 4)]

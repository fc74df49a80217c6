"""A batched [judge] end to end against the simulator's OpenAI batch API (its judge mode for "judge-sim"):
the sweep is killed with SIGKILL once the judge batch is submitted and run again. The rerun re-attaches to
that batch: no judge batch submitted twice, no judge request answered twice, no synchronous judge call, each
answer judged once, 10% of batch requests failing and asked again in a new batch."""

from __future__ import annotations


from simulator.process import SimServerProcess
from tests.integration.helpers import query, run_cli, sweep_killed_after_batches

ANSWER = "Summary: 新线路下月开通，市民出行更方便。"
MODELS = """
[[models]]
name = "m1"
provider = "openai"
base_url = "{url}"
model = "m1"
max_tokens = 64
max_retries = 0

[judge]
name = "sim-judge"
provider = "openai"
base_url = "{url}"
model = "judge-sim"
batch = true
batch_poll_s = 0.2
"""


def test_batched_judge_killed_after_submission_resumes_without_judging_twice(tmp_path, data_dir):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode=f"fixed:{ANSWER}", profiles={"judge-sim": {"mode": "judge"}}, batch_latency_s=3.0,
                          batch_error_rate=0.1, seed=5) as sim:
        models = tmp_path / "models.toml"
        models.write_text(MODELS.format(url=sim.base_url))
        args = ["sweep", str(models), "--db", str(db), "--data-dir", str(data_dir), "--datasets", "lcsts",
                "--limit", "40"]
        sweep_killed_after_batches([*args, "--quiet"], sim, batches=1, timeout=90)
        assert sim.stats()["batches_created"] == {"openai": 1}
        assert query(db, "SELECT lane, model, n_requests, batch_id IS NOT NULL, collected FROM batches") == [
            ("judge", "sim-judge", 40, True, False)]  # recorded, with its provider id, before the wait
        r = run_cli(*args, "--quiet", timeout=300)
        assert r.returncode == 0, r.stderr
        st = sim.stats()
        listing = run_cli("batches", str(db))
    assert "judge-sim" not in st["by_model"]  # no synchronous judge call
    assert max(st["batch_answered"].values()) == 1 and len(st["batch_answered"]) == 40  # each answered once
    errored = sum(st["batch_errored"].values())
    assert errored > 0 and sum(st["batch_requests"].values()) == 40 + errored  # only the failed asked again
    created = sum(st["batches_created"].values())
    assert created == 1 + (errored > 0)  # the first batch was re-attached, not submitted again
    assert query(db, "SELECT count(*), count(DISTINCT (model, item_id, sample)), max(attempts) FROM judgements "
                     "WHERE status = 'ok'") == [(40, 40, 1)]
    assert query(db, "SELECT count(*) FILTER (WHERE collected), count(DISTINCT batch_id) FROM batches "
                     "WHERE lane = 'judge'") == [(created, created)]
    assert listing.returncode == 0 and listing.stdout.count(" judge ") == created

"""The issue's target, end to end against the simulator's three batch APIs: one batched model per
provider, 40 items each, 5% of batch requests failing; the sweep process is killed with SIGKILL once its
batches are submitted and run again. Every item ends ok, no batch is submitted twice, no request is
answered twice, no synchronous call is made, and --estimate shows the batch price.

Needs the provider batch wire (providers.registry.make_batch_api) and the simulator's batch endpoints;
skipped where they are not there yet."""

from __future__ import annotations


import pytest

from providers import registry
from simulator.process import SimServerProcess
from tests.integration.helpers import query, run_cli, sweep_killed_after_batches

pytestmark = pytest.mark.skipif(not hasattr(registry, "make_batch_api"),
                                reason="the provider batch wire is not in this tree")

MODELS = """
[defaults]
batch = true
batch_poll_s = 0.2
max_tokens = 8
price = {{ input_per_mtok = 1.0, output_per_mtok = 4.0 }}

[[models]]
name = "gpt"
provider = "openai"
base_url = "{openai}"
model = "gpt"

[[models]]
name = "claude"
provider = "anthropic"
base_url = "{root}"
model = "claude"

[[models]]
name = "gem"
provider = "gemini"
base_url = "{root}"
model = "gem"
"""


def test_three_batched_providers_killed_after_submission_resume_without_paying_twice(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold", batch_latency_s=3.0, batch_error_rate=0.05, seed=5) as sim:
        models = tmp_path / "models.toml"
        models.write_text(MODELS.format(openai=sim.base_url, root=sim.root_url))
        args = ["sweep", str(models), "--db", str(db), "--datasets", "synthetic", "--limit", "40"]
        est = run_cli(*args, "--estimate")
        assert est.returncode == 0, est.stderr
        assert est.stdout.count("batch price (x0.5)") == 3
        sweep_killed_after_batches([*args, "--quiet"], sim, batches=3, timeout=60)
        assert sim.stats()["batches_created"] == {"openai": 1, "anthropic": 1, "gemini": 1}
        r = run_cli(*args, "--quiet", timeout=300)
        assert r.returncode == 0, r.stderr
        st = sim.stats()
    assert st["total"] == 0  # no synchronous call
    assert max(st["batch_answered"].values()) == 1 and len(st["batch_answered"]) == 120  # each answered once
    assert sum(st["batch_errored"].values()) > 0  # the failures happened, and were asked again
    assert query(db, "SELECT count(*), count(*) FILTER (WHERE status = 'ok'), max(attempts) FROM results") == [
        (120, 120, 1)]
    # The first three batches were re-attached, not submitted again; the others carried only failed requests.
    created = sum(st["batches_created"].values())
    assert query(db, "SELECT count(*), count(*) FILTER (WHERE collected), count(DISTINCT batch_id) FROM batches") == [
        (created, created, created)]
    assert sum(st["batch_requests"].values()) == 120 + sum(st["batch_errored"].values())

"""A model looping on one long line beside a healthy model, against the simulated server.

Its 64 KB answers are scored off the event loop, each within the scoring cap
(engine/run/scoring.py), so the healthy model's calls (1.5 s answers, 5 s timeout, no
retries) never wait on them: through the CLI with a real choice dataset, and in-process
with a scorer that takes seconds on a long line (as the quadratic extraction did), scored
or, past the cap, stored as a `scorer` error and asked again by the next run.
"""

from __future__ import annotations

import time
from pathlib import Path


from benchmark import registry
from benchmark.dataset import Item, Message, Scored
from engine.sweep.sweep import SweepOptions, sweep
from simulator.server import SimServerProcess
from tests.engine.fakes import FakeDataset
from tests.integration.helpers import query, run_cli

LOOP = ("The answer is A. " * 4000)[:65_536]  # 64 KB on one line
PROFILES = {"loop": {"mode": f"fixed:{LOOP}"}, "healthy": {"latency_ms": 1500, "mode": "letter"}}


class SlowOnLongLines(FakeDataset):
    """Eight choice items whose scorer spends `cost_s` of CPU on any answer over 4 KB, in many small calls."""

    id = "slow-on-long-lines"
    cost_s = 1.0

    def records(self, data_dir):
        return iter([(f"q{n}", n) for n in range(8)])

    def render(self, item_id, raw):
        return Item(item_id, (Message("user", f"Question {raw}?\nA. yes\nB. no"),), "A")

    def score(self, item, response, *, finish_reason=None):
        end = time.thread_time() + (self.cost_s if len(response) > 4096 else 0.0)
        while time.thread_time() < end:
            sum(range(100))
        return Scored("A", 1.0)


def _models(path: Path, url: str) -> Path:
    common = f'provider = "openai"\nbase_url = "{url}"\ntimeout_s = 5\nmax_retries = 0\nmax_concurrency = 8\n'
    # The loop's max_tokens lets the simulator send its 64 KB whole (it cuts at 4 characters a token).
    path.write_text(f'[[models]]\nname = "loop"\nmodel = "loop"\nmax_tokens = 20000\n{common}\n'
                    f'[[models]]\nname = "healthy"\nmodel = "healthy"\n{common}\n')
    return path


def _check(db: Path, wall: float) -> list[tuple]:
    """The healthy model answered all 8 within its timeout; the looping answers are stored whole."""
    assert wall < 60, f"the sweep took {wall:.0f} s"
    healthy = query(db, "SELECT status, epoch(finished_at) - epoch(started_at) FROM results WHERE model = 'healthy'")
    assert [s for s, _ in healthy] == ["ok"] * 8
    assert max(t for _, t in healthy) < 5.0, healthy  # no call waited past its timeout on a neighbour's scoring
    loop = query(db, "SELECT status, error_class, error, length(response) FROM results WHERE model = 'loop'")
    assert len(loop) == 8 and {n for *_, n in loop} == {65_536}
    return loop


def test_a_model_looping_on_one_line_does_not_stall_a_healthy_model(tmp_path, data_dir):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(profiles=PROFILES) as sim:
        t0 = time.monotonic()
        r = run_cli("sweep", str(_models(tmp_path / "models.toml", sim.base_url)), "--db", str(db),
                    "--data-dir", str(data_dir), "--datasets", "copa", "--limit", "8", "--quiet", timeout=120)
        wall = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    loop = _check(db, wall)
    # Scored, or (past the cap) a scorer error retried on resume: never another outcome.
    assert all(s == "ok" or c == "scorer" for s, c, *_ in loop)


def _sweep_slow(tmp_path: Path, monkeypatch, cost_s: float) -> tuple[Path, float, dict]:
    """One in-process sweep of the slow dataset; (database, wall time, requests by model)."""
    registry.all_ids()  # load the registry before adding to it
    ds = SlowOnLongLines()
    ds.cost_s = cost_s
    monkeypatch.setitem(registry._DATASETS, ds.id, ds)
    db = tmp_path / "r.duckdb"
    with SimServerProcess(profiles=PROFILES) as sim:
        opts = SweepOptions(models_path=_models(tmp_path / "models.toml", sim.base_url), db=db,
                            datasets=[ds.id], limit=8, quiet=True)
        t0 = time.monotonic()
        assert not sweep(opts).interrupted
        wall = time.monotonic() - t0
        sim.reset()
        assert not sweep(opts).interrupted  # the same command again: asks what is not done
        asked = dict(sim.stats()["by_model"])
    return db, wall, asked


def test_answers_that_take_seconds_to_score_never_hold_another_models_calls(tmp_path, monkeypatch):
    db, wall, asked = _sweep_slow(tmp_path, monkeypatch, cost_s=1.0)
    loop = _check(db, wall)
    assert {(s, c) for s, c, *_ in loop} == {("ok", None)}  # 1 s of CPU each: under the cap, scored
    assert asked == {}


def test_a_scorer_past_its_cap_is_a_scorer_error_asked_again_by_the_next_run(tmp_path, monkeypatch):
    from engine.run import scoring

    monkeypatch.setattr(scoring, "CAP_S", 1.0)
    db, wall, asked = _sweep_slow(tmp_path, monkeypatch, cost_s=30.0)
    loop = _check(db, wall)
    assert {(s, c, e) for s, c, e, _ in loop} == {
        ("error", "scorer", "scoring used over 1 s of CPU on an answer of 65,536 characters")}
    assert query(db, "SELECT count(*) FROM results WHERE score IS NOT NULL AND model = 'loop'") == [(0,)]
    assert asked == {"loop": 8}  # never a score: the errors are asked again

"""--budget over interactive datasets: the [user_simulator]'s calls are charged at its own price, beside the
companion's, and the run stops dispatching once the next call could cross the cap."""

from __future__ import annotations

import json
import re
from pathlib import Path

from simulator.server import SimServerProcess
from tests.integration.helpers import query, run_cli
from tests.integration.test_episodes import SEEKER, sweep_args

SIM_PRICE = (1000.0, 4000.0)  # $ per million tokens in, out: a token in is $0.001


def _models(path: Path, url: str) -> Path:
    # The companion has no price: every dollar spent is the simulator's.
    path.write_text(
        f'[[models]]\nname = "m1"\nprovider = "openai"\nbase_url = "{url}"\nmodel = "m1"\n'
        "max_concurrency = 2\nmax_retries = 0\n\n"
        f'[user_simulator]\nprovider = "openai"\nbase_url = "{url}"\nmodel = "seeker-sim"\n'
        f"max_concurrency = 2\nmax_retries = 0\nmax_tokens = 50\n"
        f"price = {{ input_per_mtok = {SIM_PRICE[0]}, output_per_mtok = {SIM_PRICE[1]} }}\n")
    return path


def _spent(stderr: str) -> float:
    m = re.search(r"budget(?: reached)?: \$([0-9.]+) spent", stderr)
    assert m, stderr
    return float(m.group(1))


def _simulator_cost(db: Path) -> float:
    (tin, tout), = query(db, "SELECT sum(input_tokens), sum(output_tokens) FROM turns "
                             "WHERE role = 'seeker' AND speaker <> 'scenario'")
    return (tin * SIM_PRICE[0] + tout * SIM_PRICE[1]) / 1e6


def test_the_simulators_calls_are_charged_to_the_budget(tmp_path):
    profiles = {"seeker-sim": {"mode": "fixed:" + SEEKER}}
    with SimServerProcess(mode="echo", profiles=profiles, seed=1) as sim:
        m = _models(tmp_path / "models.toml", sim.base_url)
        whole = tmp_path / "whole.duckdb"
        args = [a for a in sweep_args(m, whole, 6, 3) if a != "--quiet"]  # the spend is said without --quiet
        r = run_cli(*args, "--budget", "1000")
        assert r.returncode == 0, r.stderr
        full_calls = sim.stats()["by_model"]["seeker-sim"]
        spent = _spent(r.stderr)
        # What the simulator's usage says it cost, to the printed 4 decimals: the companion is unpriced.
        assert spent > 0 and abs(spent - _simulator_cost(whole)) < 1e-4
        sim.reset()
        cut = tmp_path / "cut.duckdb"
        r = run_cli(*sweep_args(m, cut, 6, 3), "--budget", f"{spent / 3:.4f}")
        assert "budget reached" in r.stderr, r.stderr
        asked = sim.stats()["by_model"].get("seeker-sim", 0)
    assert 0 < asked < full_calls
    assert _spent(r.stderr) <= spent / 3 + 1e-4 and abs(_spent(r.stderr) - _simulator_cost(cut)) < 1e-4
    # The episodes cut short keep their turns and have no results row: the next run continues them.
    finished = query(cut, "SELECT count(*) FROM results WHERE status = 'ok'")[0][0]
    assert finished < 6
    for (resp,) in query(cut, "SELECT response FROM results WHERE status = 'ok'"):
        assert json.loads(resp)["turns"]

"""Whole sweeps through the CLI against the simulated server, into a real DuckDB file."""

import signal
import subprocess
import sys
import time


from simulator.core import fingerprint
from simulator.server import SimServerProcess
from benchmark import registry
from engine.sweep.plan import load_dataset
from tests.integration.helpers import ROOT, models_toml, query, run_cli


def test_sweep_scores_and_resume_asks_nothing(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold") as sim:
        m = models_toml(tmp_path / "models.toml", sim.base_url)
        r = run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "40", "--quiet")
        assert r.returncode == 0, r.stderr
        assert sim.stats()["total"] == 80
        rows = query(db, "SELECT c.model, n_items, n_ok, coverage, 100 * value FROM dataset_coverage c "
                         "JOIN metric_values v USING (model, dataset) ORDER BY 1")
        assert rows == [("m1", 40, 40, 1.0, 100.0), ("m2", 40, 40, 1.0, 100.0)]
        sim.reset()
        r = run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "40", "--quiet")
        assert r.returncode == 0, r.stderr
        assert sim.stats()["total"] == 0
        # A larger limit asks only the new items: the sample grows by extension.
        r = run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "50", "--quiet")
        assert r.returncode == 0, r.stderr
        assert sim.stats()["total"] == 20
    meta = query(db, "SELECT count(*), count(DISTINCT model_version), min(prompt_hash) = max(prompt_hash) FROM results")
    assert meta == [(100, 2, True)]


# `python -m engine ...`, then whether the HTTP client was imported, on stdout.
_IMPORTS_AIOHTTP = ("import runpy, sys\nsys.argv = ['engine', *sys.argv[1:]]\ntry:\n"
                    "    runpy.run_module('engine', run_name='__main__')\nexcept SystemExit as e:\n"
                    "    assert not e.code, e.code\nprint('aiohttp' in sys.modules)")


def test_a_sweep_with_nothing_left_to_ask_makes_no_client_and_records_its_run(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold") as sim:
        m = models_toml(tmp_path / "models.toml", sim.base_url)
        args = ["sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "10"]
        first = subprocess.run([sys.executable, "-c", _IMPORTS_AIOHTTP, *args], cwd=ROOT, capture_output=True,
                               text=True, timeout=120)
        assert first.stdout.strip() == "True", first.stderr
        again = subprocess.run([sys.executable, "-c", _IMPORTS_AIOHTTP, *args], cwd=ROOT, capture_output=True,
                               text=True, timeout=120)
        assert again.stdout.strip() == "False", again.stderr
        assert "0 rows written" in again.stderr and sim.stats()["total"] == 20
    assert query(db, "SELECT outcome, count(*) FROM runs GROUP BY ALL") == [("complete", 2)]
    assert query(db, "SELECT count(*) FROM interval_state") == [(1,)]  # the end's bounds, kept


def test_failures_are_stored_excluded_and_retried_on_resume(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold", faults={"quota": 0.3}, seed=3) as sim:
        m = models_toml(tmp_path / "models.toml", sim.base_url, names=("m1",))
        r = run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "50", "--quiet")
        assert r.returncode == 0, r.stderr
        assert "errors stored" in r.stderr
    (n_err,), = query(db, "SELECT count(*) FROM results WHERE status = 'error' AND error_class = 'permanent'")
    assert 5 < n_err < 30
    (n_items, n_ok, score), = query(db, "SELECT n_items, n_ok, 100 * value FROM dataset_coverage "
                                        "JOIN metric_values USING (model, dataset)")
    assert (n_items, n_ok, score) == (50, 50 - n_err, 100.0)  # errors are not wrong answers
    with SimServerProcess(mode="gold") as sim:
        m = models_toml(tmp_path / "models.toml", sim.base_url, names=("m1",))
        r = run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "50", "--quiet")
        assert r.returncode == 0, r.stderr
        assert sim.stats()["total"] == n_err  # only the failed items are asked again
    assert query(db, "SELECT count(*), count(*) FILTER (WHERE status = 'ok'), max(attempts) FROM results") == [(50, 50, 2)]


def test_transient_faults_do_not_leak_into_scores(tmp_path):
    db = tmp_path / "r.duckdb"
    faults = {"429": 0.05, "500": 0.05, "503": 0.05, "malformed": 0.05, "drop": 0.05}
    with SimServerProcess(mode="gold", faults=faults, seed=11) as sim:
        m = models_toml(tmp_path / "models.toml", sim.base_url, extra="max_retries = 10\nbackoff_s = 0.01")
        r = run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "60", "--quiet")
        assert r.returncode == 0, r.stderr
        assert sim.stats()["total"] > 120
    assert query(db, "SELECT count(*) FILTER (WHERE status='ok'), sum(attempts) > 120, min(score) FROM results") == [(120, True, 1.0)]


def _fingerprints(model: str, limit: int) -> dict[str, str]:
    planned = load_dataset(registry.get("synthetic"), ROOT, limit, 20250826)
    return {it.id: fingerprint(model, [{"role": m.role, "content": m.content} for m in it.messages])
            for it in planned.items}


def test_sigkill_then_resume_loses_nothing_and_asks_nothing_twice(tmp_path):
    db = tmp_path / "r.duckdb"
    limit = 400
    with SimServerProcess(mode="gold", latency_ms=20, jitter_ms=10) as sim:
        m = models_toml(tmp_path / "models.toml", sim.base_url, concurrency=4)
        proc = subprocess.Popen([sys.executable, "-m", "engine", "sweep", str(m), "--db", str(db), "--datasets",
                                 "synthetic", "--limit", str(limit), "--quiet"], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while sim.stats()["total"] < 300 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        committed = query(db, "SELECT model, item_id FROM results WHERE status = 'ok'")
        assert 0 < len(committed) < 2 * limit
        sim.reset()
        r = run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", str(limit), "--quiet")
        assert r.returncode == 0, r.stderr
        asked = sim.stats()["by_prompt"]
    # Every committed item is never asked again; everything else is asked exactly once.
    prints = {model: _fingerprints(model, limit) for model in ("m1", "m2")}
    committed_prints = {prints[mod][item] for mod, item in committed}
    assert not committed_prints & set(asked)
    assert all(n == 1 for n in asked.values())
    assert len(asked) == 2 * limit - len(committed)
    assert query(db, "SELECT count(*), count(DISTINCT (model, item_id)), min(score) FROM results WHERE status='ok'") == [(2 * limit, 2 * limit, 1.0)]


def test_sigint_flushes_and_exits_130(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold", latency_ms=50) as sim:
        m = models_toml(tmp_path / "models.toml", sim.base_url, concurrency=4)
        proc = subprocess.Popen([sys.executable, "-m", "engine", "sweep", str(m), "--db", str(db), "--datasets",
                                 "synthetic", "--limit", "2000", "--quiet"], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        while sim.stats()["total"] < 100:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        ok_answers = sim.stats()["by_status"].get("200", 0)
    assert proc.returncode == 130, err
    assert "resume" in err
    (n,), = query(db, "SELECT count(*) FROM results")
    # Every answered call was stored (none lost in the writer's buffer).
    assert n >= ok_answers - 8


def test_bad_inputs_give_one_line_errors_and_keep_data(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold") as sim:
        m = models_toml(tmp_path / "models.toml", sim.base_url, names=("m1",))
        assert run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "5", "--quiet").returncode == 0
        base = ["sweep", str(m), "--quiet"]
        cases = {
            "unknown dataset": (["--db", str(db), "--datasets", "nope"], "unknown dataset id(s): nope"),
            "missing data": (["--db", str(db), "--datasets", "sst2", "--data-dir", str(tmp_path / "empty")], "sst2"),
            "bad db": (["--db", str(m), "--datasets", "synthetic"], "cannot open database"),
            "broken toml": (["--db", str(db), "--datasets", "synthetic"], "invalid TOML"),
        }
        for name, (args, needle) in cases.items():
            if name == "broken toml":
                m.write_text(m.read_text() + "\n[[models]\n")
            r = run_cli(*base, *args)
            assert r.returncode == 2, (name, r.stderr)
            assert needle in r.stderr and "Traceback" not in r.stderr, (name, r.stderr)
            assert len(r.stderr.strip().splitlines()) == 1, (name, r.stderr)
    assert query(db, "SELECT count(*) FROM results") == [(5,)]

"""CompactBench through the CLI against the simulated server, into a real DuckDB file."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simulator.server import SimServerProcess
from tests.integration.helpers import ROOT, query, run_cli

SHARED = Path(os.environ.get("ENGINE_SHARED_DIR", ROOT.parent / "shared"))
BENCHMARKS = SHARED / "compactbench" / "benchmarks" / "public"
pytestmark = pytest.mark.skipif(not BENCHMARKS.is_dir(), reason=f"CompactBench templates not found at {BENCHMARKS} "
                                "(set ENGINE_SHARED_DIR to the folder holding compactbench/)")
FOUR = ("full-transcript", "truncate-last-n", "naive-summary", "structured-state")


def toml(path: Path, base_url: str, *, section: str, concurrency: int = 16, extra: str = "", model: str = "sim") -> Path:
    path.write_text(f'[[models]]\nname = "sim"\nprovider = "openai"\nbase_url = "{base_url}"\nmodel = "{model}"\n'
                    f"max_concurrency = {concurrency}\n{extra}\n[compactbench]\n{section}\n")
    return path


def cb_run(m: Path, db: Path, *extra: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return run_cli("compactbench", "run", str(m), "--db", str(db), "--benchmarks-dir", str(BENCHMARKS), "--quiet",
                   *extra, timeout=timeout)


def test_generate_prints_compactbench_cases_and_one_line_errors():
    fixture = BENCHMARKS.parents[1] / "tests" / "fixtures" / "cases" / "entity_confusion_starter_v1_seed42_medium.json"
    r = run_cli("compactbench", "generate", "--template", "entity_confusion_starter_v1", "--seed", "42",
                "--benchmarks-dir", str(BENCHMARKS))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == json.loads(fixture.read_text())
    # The default folder is ../shared/compactbench/benchmarks (its public/ is found).
    r2 = run_cli("compactbench", "generate", "-t", "entity_confusion_starter_v1", "--seed", "42")
    assert r2.returncode == 0 and r2.stdout == r.stdout
    for argv, msg in ((["-t", "nope"], "template 'nope' not found"),
                      (["-t", "entity_confusion_starter_v1", "--difficulty", "elite"], "no distractor_turns"),
                      (["-t", "entity_confusion_starter_v1", "--difficulty", "insane"], "unknown difficulty"),
                      (["-t", "x", "--benchmarks-dir", "/nonexistent"], "is not a folder")):
        r = run_cli("compactbench", "generate", *argv)
        assert r.returncode == 2 and msg in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "Traceback" not in r.stderr


def test_generate_shape_010_is_what_compactbench_prints():
    pytest.importorskip("compactbench", reason="install the test extra")
    args = ["generate", "--template", "decision_override_v1_2", "--seed", "6919054810097137998",
            "--difficulty", "elite", "--benchmarks-dir", str(BENCHMARKS)]
    theirs = subprocess.run([sys.executable, "-m", "compactbench", *args], capture_output=True, text=True, check=False,
                            env={**os.environ, "COLUMNS": "200", "TERM": "dumb", "NO_COLOR": "1"})
    assert theirs.returncode == 0, theirs.stderr
    mine = run_cli("compactbench", *args, "--shape", "0.1.0")
    assert mine.stdout == theirs.stdout


def test_run_stores_every_row_scores_and_resume_asks_nothing(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="echo") as sim:
        m = toml(tmp_path / "m.toml", sim.base_url, section='suite = "starter"\ncase_slots = 2\ndrift_cycles = 2')
        r = cb_run(m, db)
        assert r.returncode == 0, r.stderr
        # 8 cases x 4 compactors x 3 cycles: items, 2 continuations per unit, 2 LLM compactors.
        n_items = query(db, "SELECT sum(n_items) FROM compact_cases")[0][0]
        assert sim.stats()["total"] == 4 * 3 * n_items + 32 * 2 + 2 * 8 * 3
        sim.reset()
        r = cb_run(m, db)
        assert r.returncode == 0 and "0 rows written" in r.stderr, r.stderr
        assert sim.stats()["total"] == 0
    assert query(db, "SELECT count(*), count(*) FILTER (WHERE status = 'ok') FROM compact_items") == [(4 * 3 * n_items,) * 2]
    assert query(db, "SELECT step, count(*) FROM compact_steps WHERE status = 'ok' GROUP BY 1 ORDER BY 1") == [
        ("compact", 96), ("continue", 64)]
    runs = query(db, "SELECT compactor, n_cases, n_cases_complete, item_errors FROM compact_run_scores ORDER BY 1")
    assert runs == [(c, 8, 8, 0) for c in sorted(FOUR)]
    tiers = query(db, "SELECT count(*), count(DISTINCT tier) FROM compact_ranking")
    assert tiers == [(12, 3)]
    r = run_cli("compactbench", "scores", "--db", str(db))
    assert r.returncode == 0 and "naive-summary" in r.stdout


class _Echo:
    """A CompactBench provider answering like the simulated server's echo mode."""

    @staticmethod
    def make():
        from compactbench.providers import CompletionResponse, Provider

        class Echo(Provider):
            key = "echo"

            async def complete(self, request):
                return CompletionResponse(text=request.prompt, prompt_tokens=1, completion_tokens=1,
                                          model=request.model)

        return Echo


def test_compat_run_equals_compactbench_010_end_to_end(tmp_path, monkeypatch):
    """The same cases, prompts, drift cycles and scoring as `compactbench run` itself."""
    pytest.importorskip("compactbench", reason="install the test extra")
    from compactbench.dsl import DifficultyLevel
    from compactbench.runner import RunArgs, to_run_result
    from compactbench.runner import run as cb_runmod
    from compactbench.scoring import compression

    from tests.benchmark.compactbench.conftest import _tiktoken_cl100k

    compression._ENCODER_CACHE["cl100k_base"] = _tiktoken_cl100k()
    monkeypatch.setattr(cb_runmod, "get_provider_cls", lambda key: _Echo.make())
    theirs = {}
    for method in ("naive-summary", "structured-state", "hybrid-ledger"):
        out = tmp_path / f"{method}.jsonl"
        asyncio.run(cb_runmod.run_experiment(RunArgs(
            method_spec=f"built-in:{method}", suite_key="starter", provider_key="echo", model="sim",
            difficulty=DifficultyLevel.MEDIUM, drift_cycles=2, case_count_per_template=2, seed_group="default",
            benchmarks_dir=BENCHMARKS, output_path=out, resume=False)))
        theirs[method] = to_run_result(out)

    db = tmp_path / "r.duckdb"
    section = ('mode = "compat"\nsuite = "starter"\ncase_slots = 2\ndrift_cycles = 2\n'
               '[[compactbench.compactors]]\nname = "naive-summary"\nkind = "naive-summary"\n'
               '[[compactbench.compactors]]\nname = "structured-state"\nkind = "structured-state"\n'
               # CompactBench's own class, run unchanged through the adapter.
               '[[compactbench.compactors]]\nname = "hybrid-ledger"\n'
               'plugin = "compactbench.compactors:HybridLedgerCompactor"\n')
    with SimServerProcess(mode="echo") as sim:
        r = cb_run(toml(tmp_path / "m.toml", sim.base_url, section=section), db)
        assert r.returncode == 0, r.stderr
    for method, rr in theirs.items():
        cycles = {(k, n): v for k, n, *v in query(db, f"""
            SELECT case_id, cycle, cycle_score, penalized_cycle_score, contradiction_rate, compression_ratio
            FROM compact_cycle_scores WHERE compactor = '{method}'""")}
        cases = {k: v for k, *v in query(db, f"SELECT case_id, case_score, drift_resistance FROM compact_case_scores "
                                             f"WHERE compactor = '{method}' AND complete")}
        assert set(cases) == {c.case_id for c in rr.cases}
        for c in rr.cases:
            assert cases[c.case_id] == pytest.approx([c.case_score, c.drift_resistance], abs=1e-12)
            for cy in c.cycles:
                s = cy.scorecard
                assert cycles[c.case_id, cy.cycle_number] == pytest.approx(
                    [s.cycle_score, s.penalized_cycle_score, s.contradiction_rate, s.compression_ratio], abs=1e-12)
        run = query(db, f"SELECT overall_score, drift_resistance, constraint_retention, contradiction_rate, "
                        f"compression_ratio FROM compact_run_scores WHERE compactor = '{method}'")[0]
        assert run == pytest.approx((rr.overall_score, rr.drift_resistance, rr.constraint_retention,
                                     rr.contradiction_rate, rr.compression_ratio), abs=1e-12)


PROBE = '''
class Probe:
    """Records what it was given: turn ids and tags."""
    version = "1"
    def __init__(self, ctx):
        pass
    async def compact(self, transcript, previous_artifact):
        return {"summary_text": "seen " + " ".join(str(t.id) for t in transcript.turns),
                "selected_source_turn_ids": [t.id for t in transcript.turns],
                "method_metadata": {"tags": sorted({g for t in transcript.turns for g in t.tags})}}
'''


@pytest.mark.parametrize("mode", ["compat", "strict"])
def test_what_the_compactor_sees_in_each_mode(tmp_path, mode):
    (tmp_path / "probe.py").write_text(PROBE)
    db = tmp_path / "r.duckdb"
    section = (f'mode = "{mode}"\nsuite = "starter"\ntemplates = ["buried_constraint_starter_v1"]\ncase_slots = 1\n'
               'drift_cycles = 2\n[[compactbench.compactors]]\nname = "probe"\nplugin = "probe.py:Probe"\n')
    with SimServerProcess(mode="fixed:Noted.") as sim:
        r = cb_run(toml(tmp_path / "m.toml", sim.base_url, section=section), db)
        assert r.returncode == 0, r.stderr
    arts = [json.loads(a) for a, in query(db, "SELECT output FROM compact_steps WHERE step = 'compact' ORDER BY cycle")]
    ids = [a["selected_source_turn_ids"] for a in arts]
    tags = [a["method_metadata"]["tags"] for a in arts]
    if mode == "compat":  # 0.1.0: the whole extended transcript, tags and all
        assert ids == [list(range(8)), list(range(10)), list(range(12))]
        assert tags[0] == ["critical_constraint", "distractor"] and "continuation" in tags[2]
    else:  # methodology: the previous artifact and the new turns only, no tags
        assert ids == [list(range(8)), [8, 9], [10, 11]]
        assert tags == [[], [], []]


def test_failed_calls_are_errors_excluded_and_only_they_are_retried(tmp_path):
    db = tmp_path / "r.duckdb"
    section = 'suite = "starter"\ncase_slots = 2\ndrift_cycles = 1'
    with SimServerProcess(mode="echo", faults={"500": 0.15}, seed=5) as sim:
        r = cb_run(toml(tmp_path / "m.toml", sim.base_url, section=section, extra="max_retries = 0"), db)
        assert r.returncode == 0, r.stderr
        assert "run again to retry them" in r.stderr
    bad_items, = query(db, "SELECT count(*) FROM compact_items WHERE status = 'error'")[0]
    ok_items, = query(db, "SELECT count(*) FROM compact_items WHERE status = 'ok'")[0]
    bad_steps, = query(db, "SELECT count(*) FROM compact_steps WHERE status = 'error'")[0]
    assert bad_items > 0 and bad_steps > 0
    assert query(db, "SELECT count(*) FROM compact_items WHERE status = 'error' AND score IS NOT NULL") == [(0,)]
    total_items = query(db, "SELECT 4 * 2 * sum(n_items) FROM compact_cases")[0][0]
    # A failed step leaves its cycle's items unasked; each one will cost one call on resume.
    missing_items = total_items - ok_items
    missing_steps = query(db, """
        SELECT count(*) FROM (SELECT DISTINCT compactor, case_id FROM compact_plan) u, range(2) c(cycle), (VALUES
        ('continue'), ('compact')) s(step)
        WHERE NOT (s.step = 'continue' AND c.cycle = 0)
          AND NOT (s.step = 'compact' AND u.compactor IN ('full-transcript', 'truncate-last-n'))
          AND NOT EXISTS (SELECT 1 FROM compact_steps x WHERE x.status = 'ok' AND x.compactor = u.compactor
                          AND x.case_id = u.case_id AND x.cycle = c.cycle AND x.step = s.step)""")[0][0]
    scored = query(db, "SELECT n_cases_complete < n_cases FROM compact_run_scores")
    assert any(x for x, in scored)
    with SimServerProcess(mode="echo") as sim:
        r = cb_run(toml(tmp_path / "m.toml", sim.base_url, section=section), db)
        assert r.returncode == 0, r.stderr
        assert sim.stats()["total"] == missing_items + missing_steps
    assert query(db, "SELECT count(*) FILTER (WHERE status <> 'ok') FROM compact_items") == [(0,)]
    assert query(db, "SELECT min(n_cases_complete = n_cases) FROM compact_run_scores") == [(True,)]


def test_sigint_then_resume_finishes_without_asking_twice(tmp_path):
    db = tmp_path / "r.duckdb"
    section = 'suite = "starter"\ncase_slots = 3\ndrift_cycles = 2'
    with SimServerProcess(mode="echo", latency_ms=30) as sim:
        m = toml(tmp_path / "m.toml", sim.base_url, section=section, concurrency=4)
        proc = subprocess.Popen([sys.executable, "-m", "engine", "compactbench", "run", str(m), "--db", str(db),
                                 "--benchmarks-dir", str(BENCHMARKS), "--quiet"], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while sim.stats()["total"] < 100 and time.monotonic() < deadline:  # well under way, far from done
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        first = sim.stats()["total"]
        done_items = query(db, "SELECT count(*) FROM compact_items WHERE status = 'ok'")[0][0]
        total = query(db, "SELECT 4 * 3 * sum(n_items) FROM compact_cases")[0][0]
        assert 0 < done_items < total
        assert query(db, "SELECT DISTINCT outcome FROM compact_runs") == [("interrupted",)]
        sim.reset()
        r = cb_run(m, db)
        assert r.returncode == 0, r.stderr
        second = sim.stats()["total"]
    n_calls = total + 12 * 4 * 2 + 2 * 12 * 3  # items, continuations, LLM compactions
    # Calls in flight at the interrupt may have been answered but not stored: at most a few per slot.
    assert n_calls <= first + second <= n_calls + 4 * 3
    assert query(db, "SELECT count(*), count(*) FILTER (WHERE status = 'ok') FROM compact_items") == [(total, total)]
    assert query(db, "SELECT DISTINCT outcome FROM compact_runs") == [("complete",)]


def test_bad_input_is_one_line(tmp_path):
    m = tmp_path / "m.toml"
    for section, msg in (('targets = ["nobody"]', "targets: 'nobody'"), ('suite = "nosuch"', "suite 'nosuch' not found"),
                         ('templates = ["nope"]', "no template(s) nope"),
                         ('[[compactbench.compactors]]\nname = "p"\nplugin = "missing.py:X"', "file not found"),
                         ('difficulty = "elite"', "no distractor_turns for difficulty 'elite'"),
                         ('[[compactbench.compactors]]\nname = "t"\nkind = "truncate-last-n"\noptions = { n = 0 }',
                          "compactor 't' cannot be built")):
        toml(m, "http://127.0.0.1:9/v1", section=section)
        r = cb_run(m, tmp_path / "r.duckdb")
        assert r.returncode == 2 and msg in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    r = run_cli("compactbench", "run", str(m), "--benchmarks-dir", str(tmp_path / "none"))
    assert r.returncode == 2 and "is not a folder" in r.stderr


def test_compactor_model_is_its_own_entry_and_changed_settings_need_fresh(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="echo") as sim:
        m = tmp_path / "m.toml"

        def write(n: int) -> None:
            m.write_text(
                "".join(f'[[models]]\nname = "{x}"\nprovider = "openai"\nbase_url = "{sim.base_url}"\nmodel = "{x}"\n'
                        f"max_concurrency = 4\n" for x in ("t", "c"))
                + '[compactbench]\nsuite = "starter"\ncase_slots = 1\ndrift_cycles = 1\ntargets = ["t"]\n'
                '[[compactbench.compactors]]\nname = "sum"\nkind = "naive-summary"\nmodel = "c"\n'
                f'[[compactbench.compactors]]\nname = "last"\nkind = "truncate-last-n"\noptions = {{ n = {n} }}\n')

        write(4)
        r = cb_run(m, db)
        assert r.returncode == 0, r.stderr
        by_model = sim.stats()["by_model"]
        n_items = query(db, "SELECT sum(n_items) FROM compact_cases")[0][0]
        assert by_model == {"c": 4 * 2, "t": 2 * 2 * n_items + 2 * 4}  # c: compactions only
        assert query(db, "SELECT DISTINCT model FROM compact_items") == [("t",)]
        write(6)  # another n under the same name: stored rows would mix settings
        r = cb_run(m, db)
        assert r.returncode == 2 and "other settings" in r.stderr and "last" in r.stderr, r.stderr
        sim.reset()
        r = cb_run(m, db, "--fresh")
        assert r.returncode == 0, r.stderr
        assert sim.stats()["by_model"] == by_model  # --fresh redoes these runs whole, as `sweep --fresh` does
    assert query(db, "SELECT count(DISTINCT stamp) FROM compact_items") == [(2,)]


def test_a_dead_endpoint_is_given_up_and_its_units_left_for_the_next_run(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there
    db = tmp_path / "r.duckdb"
    m = toml(tmp_path / "m.toml", f"http://127.0.0.1:{port}/v1", section='suite = "starter"\ncase_slots = 1\ndrift_cycles = 1',
             extra="unreachable_after_s = 3\nmax_retries = 2\n")
    t0 = time.monotonic()
    r = cb_run(m, db, timeout=120)
    assert r.returncode == 3, r.stderr
    assert time.monotonic() - t0 < 60
    assert "unreachable: sim:" in r.stderr and "not finished: sim could not be reached" in r.stderr
    assert query(db, "SELECT DISTINCT outcome FROM compact_runs") == [("interrupted",)]
    with SimServerProcess(mode="echo", port=port) as sim:
        r = cb_run(m, db)
        assert r.returncode == 0, r.stderr
        assert sim.stats()["total"] > 0
    assert query(db, "SELECT DISTINCT outcome FROM compact_runs") == [("complete",)]


def test_a_killed_run_is_marked_interrupted_by_the_next_run(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="echo", latency_ms=50) as sim:
        m = toml(tmp_path / "m.toml", sim.base_url, section='suite = "starter"\ncase_slots = 2\ndrift_cycles = 1\n'
                 'difficulty = "easy"', concurrency=2)
        proc = subprocess.Popen([sys.executable, "-m", "engine", "compactbench", "run", str(m), "--db", str(db),
                                 "--benchmarks-dir", str(BENCHMARKS), "--quiet"], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while sim.stats()["total"] < 20 and time.monotonic() < deadline:
            time.sleep(0.1)
        proc.kill()  # SIGKILL: nothing of the process runs after it
        proc.wait()
        assert query(db, "SELECT DISTINCT outcome FROM compact_runs") == [("running",)]
        # Another difficulty: other runs, which leave the killed ones' rows to the stale-run check.
        r = cb_run(toml(m, sim.base_url, section='suite = "starter"\ncase_slots = 1\ndrift_cycles = 1'), db)
        assert r.returncode == 0, r.stderr
    assert query(db, "SELECT difficulty, outcome FROM compact_runs GROUP BY ALL ORDER BY 1") == [
        ("easy", "interrupted"), ("medium", "complete")]

"""Sweeps with a [judge] against the simulated server: a scripted judge (valid, malformed, refusing
judgements), resume without a request, judge failures retried, a judge added later, a kill mid-judging."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simulator.judge import REFUSAL, SUMMARY_VERDICT
from simulator.server import SimServerProcess
from tests.integration.helpers import ROOT, query, run_cli

FIXTURES = ROOT / "tests" / "benchmark" / "fixtures"
ANSWER = "Summary: 新线路下月开通，市民出行更方便。It was 5 days; I do not know the rest."


@pytest.fixture
def mixed_data(tmp_path, data_dir) -> Path:
    """The team's datasets plus the PersonaFeedback fixture (Hub only) in one --data-dir."""
    d = tmp_path / "data"
    d.mkdir()
    for entry in data_dir.iterdir():
        if entry.name != "personafeedback":  # the team folder has its SOURCE.md only
            (d / entry.name).symlink_to(entry)
    (d / "personafeedback").symlink_to(FIXTURES / "personafeedback")
    return d


def models(path: Path, url: str, *, judge: bool = True, context: int | None = None, judge_concurrency: int = 4) -> Path:
    ctx = f"context_tokens = {context}\n" if context else ""
    text = (f'[[models]]\nname = "m1"\nprovider = "openai"\nbase_url = "{url}"\nmodel = "m1"\n'
            f"max_concurrency = 4\nmax_tokens = 64\nmax_retries = 0\n{ctx}")
    if judge:
        text += (f'\n[judge]\nname = "sim-judge"\nprovider = "openai"\nbase_url = "{url}"\nmodel = "judge-sim"\n'
                 f"max_concurrency = {judge_concurrency}\nmax_retries = 0\n")
    path.write_text(text)
    return path


def sweep(m: Path, db: Path, data: Path, datasets: str, limit: int = 8, timeout: int = 180):
    return run_cli("sweep", str(m), "--db", str(db), "--data-dir", str(data), "--datasets", datasets,
                   "--limit", str(limit), "--quiet", timeout=timeout)


def test_scripted_judge_then_resume_asks_nothing(tmp_path, mixed_data):
    db = tmp_path / "r.duckdb"
    judge = {"mode": "judge:0.2:0.15", "faults": {"refusal": 0.1}}
    with SimServerProcess(mode=f"fixed:{ANSWER}", profiles={"judge-sim": judge}, seed=5) as sim:
        m = models(tmp_path / "models.toml", sim.base_url)
        r = sweep(m, db, mixed_data, "lcsts,cnewsum,longmemeval", limit=12)
        assert r.returncode == 0, r.stderr
        by_model = sim.stats()["by_model"]
        assert by_model == {"m1": 36, "judge-sim": 36}  # every answer judged once, in the same run
        sim.reset()
        r = sweep(m, db, mixed_data, "lcsts,cnewsum,longmemeval", limit=12)
        assert r.returncode == 0 and "(0 rows written this run)" in r.stderr, r.stderr
        assert sim.stats()["total"] == 0
    rows = query(db, "SELECT status, raw, verdict, reason, rubric, judge_version FROM judgements")
    assert len(rows) == 36
    statuses = {s for s, *_ in rows}
    assert statuses == {"ok", "unparsed", "refused"}
    for status, raw, verdict, reason, rubric, version in rows:
        assert rubric.startswith(("summary-", "longmemeval-")) and version == "judge-sim-sim-2024"
        if status == "unparsed":
            assert raw in ("The summary is fairly good. Score: 4/5.", "It is hard to say.") and verdict is None
        if status == "refused":  # a refusal sentence, or the API's refusal field (empty text)
            assert raw in ("", REFUSAL, REFUSAL[:40]) and verdict is None
    quality = query(db, "SELECT dataset, n_answers, n_ok + n_unparsed + n_refused, n_pending, n_error, "
                        "unparsed_share = n_unparsed / (n_ok + n_unparsed + n_refused) FROM judge_quality ORDER BY 1")
    assert quality == [(d, 12, 12, 0, 0, True) for d in ("cnewsum", "lcsts", "longmemeval")]
    (unparsed, refused), = query(db, "SELECT sum(n_unparsed), sum(n_refused) FROM judge_quality")
    assert 2 <= unparsed <= 14 and 2 <= refused <= 16
    # Valid verdicts are the scripted ones: the judge method is their mean, 1..5 -> 0..100.
    mean = sum(SUMMARY_VERDICT[d] for d in ("completeness", "conciseness", "faithfulness", "fluency")) / 4
    scores = dict(query(db, "SELECT dataset || '/' || method, score FROM method_scores"))
    assert scores["lcsts/judge_score"] == pytest.approx((mean - 1) / 4 * 100)
    assert "lcsts/rouge1_f" in scores and "longmemeval/recall" in scores and "longmemeval/judge_accuracy" in scores
    # LongMemEval: the scripted judge says yes when the answer contains the gold ("5" here).
    (n_yes,), = query(db, "SELECT count(*) FROM judgements WHERE dataset = 'longmemeval' AND status = 'ok' "
                          "AND score = 1")
    assert n_yes >= 0


def test_judge_failures_are_errors_retried_on_the_next_run(tmp_path, mixed_data):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode=f"fixed:{ANSWER}", profiles={"judge-sim": {"mode": "judge",
                                                                          "faults": {"quota": 0.4}}}, seed=2) as sim:
        m = models(tmp_path / "models.toml", sim.base_url)
        r = sweep(m, db, mixed_data, "lcsts")
        assert r.returncode == 0 and "errors stored" in r.stderr, r.stderr
    (n_err,), = query(db, "SELECT count(*) FROM judgements WHERE status = 'error' AND error_class = 'permanent'")
    assert 0 < n_err < 8
    # errors are not scores: the judge metric averages the others
    assert query(db, "SELECT n FROM metric_values WHERE metric = 'judge_score'") == [(8 - n_err,)]
    with SimServerProcess(mode=f"fixed:{ANSWER}", profiles={"judge-sim": {"mode": "judge"}}) as sim:
        m = models(tmp_path / "models.toml", sim.base_url)
        r = sweep(m, db, mixed_data, "lcsts")
        assert r.returncode == 0, r.stderr
        assert sim.stats()["by_model"] == {"judge-sim": n_err}  # only the failed judgements, no answer
    assert query(db, "SELECT count(*), max(attempts) FROM judgements WHERE status = 'ok'") == [(8, 2)]


def test_without_a_judge_then_with_one_only_the_backlog_is_judged(tmp_path, mixed_data):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode=f"fixed:{ANSWER}", profiles={"judge-sim": {"mode": "judge"}}) as sim:
        m = models(tmp_path / "models.toml", sim.base_url, judge=False)
        r = sweep(m, db, mixed_data, "lcsts,sst2")
        assert r.returncode == 0, r.stderr
        assert r.stderr.count("no [judge] table") == 1 and "judge methods of lcsts are absent" in r.stderr
        cov = dict(query(db, "SELECT dataset, coverage FROM dataset_scores"))
        assert cov["lcsts"] == pytest.approx(0.5) and cov["sst2"] == 1.0  # ROUGE scores; the judge half is missing
        assert query(db, "SELECT count(*) FROM metric_values WHERE metric LIKE 'judge%'") == [(0,)]
        sim.reset()
        m = models(tmp_path / "models.toml", sim.base_url)
        r = sweep(m, db, mixed_data, "lcsts,sst2")
        assert r.returncode == 0, r.stderr
        assert sim.stats()["by_model"] == {"judge-sim": 8}  # stored answers judged, none asked again
    assert dict(query(db, "SELECT dataset, coverage FROM dataset_scores"))["lcsts"] == pytest.approx(1.0)


def test_long_histories_are_fitted_and_recorded(tmp_path, mixed_data):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode=f"fixed:{ANSWER}", profiles={"judge-sim": {"mode": "judge"}}) as sim:
        m = models(tmp_path / "models.toml", sim.base_url, context=3000)
        r = sweep(m, db, mixed_data, "longmemeval,vcsum", limit=10)
        assert r.returncode == 0, r.stderr
    rows = query(db, "SELECT dataset, input_tokens, CAST(measures->>'truncated' AS DOUBLE) FROM results")
    assert {d for d, _, t in rows if t == 1.0} == {"longmemeval", "vcsum"}
    # the simulator counts 4 characters a token: a fitted prompt stays within the window
    assert all(tokens <= 3000 for _, tokens, t in rows if t == 1.0)
    (rate,), = query(db, "SELECT value FROM metric_values WHERE dataset = 'vcsum' AND metric = 'truncated_rate'")
    assert rate == 1.0  # every meeting is longer than 3,000 tokens


def test_personafeedback_asks_a_seeded_share_in_both_orders(tmp_path, mixed_data):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="letter") as sim:
        m = models(tmp_path / "models.toml", sim.base_url)
        r = sweep(m, db, mixed_data, "personafeedback", limit=8)
        assert r.returncode == 0, r.stderr
        assert "judge" not in r.stderr  # no judge method on this dataset
        asked = sim.stats()["total"]
    (pairs,), = query(db, "SELECT count(*) FROM results WHERE sample = 1")
    assert 0 < pairs < 8 and asked == 8 + pairs
    got = query(db, "SELECT n_pairs, n_answered, agreement BETWEEN 0 AND 1 FROM position_consistency")
    assert got == [(pairs, pairs, True)]
    assert query(db, "SELECT n_items, coverage FROM dataset_coverage") == [(8 + pairs, 1.0)]
    (acc, first), = query(db, "SELECT value, (SELECT avg(score) FROM results WHERE sample = 0) FROM metric_values "
                              "WHERE metric = 'accuracy'")
    assert acc == pytest.approx(first)  # accuracy counts the first order only


def test_kill_while_judging_then_resume_judges_each_answer_once(tmp_path, mixed_data):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode=f"fixed:{ANSWER}", profiles={"judge-sim": {"mode": "judge", "latency_ms": 150}}) as sim:
        m = models(tmp_path / "models.toml", sim.base_url, judge_concurrency=2)
        proc = subprocess.Popen([sys.executable, "-m", "engine", "sweep", str(m), "--db", str(db), "--data-dir",
                                 str(mixed_data), "--datasets", "lcsts", "--limit", "30", "--quiet"], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while sim.stats()["by_model"].get("judge-sim", 0) < 16 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        (answers,), = query(db, "SELECT count(*) FROM results WHERE status = 'ok'")
        (settled,), = query(db, "SELECT count(*) FROM judgements WHERE status = 'ok'")
        assert 0 < settled < 30
        time.sleep(0.5)  # requests in flight at the kill finish on the server: not this run's
        sim.reset()
        r = sweep(m, db, mixed_data, "lcsts", limit=30)
        assert r.returncode == 0, r.stderr
        by_model = sim.stats()["by_model"]
    # answers stored before the kill are not asked again; each verdict stored is not asked again
    assert by_model.get("m1", 0) == 30 - answers and by_model["judge-sim"] == 30 - settled
    assert query(db, "SELECT count(*) FROM judgements WHERE status = 'ok'") == [(30,)]


def test_an_unreachable_judge_leaves_its_verdicts_for_the_next_run(tmp_path, mixed_data):
    """The judge's port has nothing listening: the answers are all stored, no judgement is (not
    even as an error), the exit status says so, and the next run judges them."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode=f"fixed:{ANSWER}") as sim:
        m = models(tmp_path / "models.toml", sim.base_url)
        m.write_text(m.read_text().replace(f'base_url = "{sim.base_url}"\nmodel = "judge-sim"',
                                           f'base_url = "http://127.0.0.1:{port}/v1"\nmodel = "judge-sim"')
                     + "unreachable_after_s = 1\nbackoff_s = 0.05\n")
        r = sweep(m, db, mixed_data, "lcsts", limit=6)
        assert r.returncode == 3, r.stderr
    assert "unreachable: sim-judge" in r.stderr
    assert query(db, "SELECT count(*) FROM results WHERE status = 'ok'") == [(6,)]
    assert query(db, "SELECT count(*) FROM judgements") == [(0,)]
    with SimServerProcess(mode="judge", port=port) as judge:
        r = sweep(m, db, mixed_data, "lcsts", limit=6)
        assert r.returncode == 0, r.stderr
        assert judge.stats()["by_model"] == {"judge-sim": 6}

"""The [judge] rubric over finished transcripts (benchmark/episodes/rubric.py) against the simulated server:
the companion (echo, some replies blocked), a scripted seeker and the scripted judge. Verdicts are stored
in `judgements` like any other; unreadable or failed judge replies are the judge's (never the
companion's); blocked episodes are not judged; the verdicts enter the dataset score as the suite declares."""

from __future__ import annotations

from pathlib import Path

from simulator.server import SimServerProcess
from tests.integration.helpers import query, run_cli
from tests.integration.test_episodes import SEEKER, SUITE

JUDGED_SUITE = SUITE.replace("synthetic_episodes", "synthetic_episodes_judged").replace(
    '{ metric = "final_emotion", normalization = "ratio" }',
    '{ metric = "final_emotion", normalization = "ratio" }, '
    '{ metric = "judge_support", normalization = "numeric", min = 1, max = 5 }')


def _models(path: Path, url: str) -> Path:
    path.write_text(
        f'[[models]]\nname = "m1"\nprovider = "openai"\nbase_url = "{url}"\nmodel = "m1"\n'
        f"max_concurrency = 4\nmax_retries = 0\n\n"
        f'[user_simulator]\nprovider = "openai"\nbase_url = "{url}"\nmodel = "seeker-sim"\n'
        f"max_concurrency = 4\nmax_retries = 0\n\n"
        f'[judge]\nname = "sim-judge"\nprovider = "openai"\nbase_url = "{url}"\nmodel = "judge-sim"\n'
        f"max_concurrency = 4\nmax_retries = 0\n")
    return path


def _sweep(m: Path, db: Path, limit: int = 12):
    suite = m.parent / "suite.toml"
    suite.write_text(JUDGED_SUITE)
    return run_cli("sweep", str(m), "--db", str(db), "--suite", str(suite), "--limit", str(limit), "--turns", "2",
                   "--quiet", timeout=300)


def test_transcripts_judged_stored_and_scored(tmp_path):
    db = tmp_path / "r.duckdb"
    profiles = {"seeker-sim": {"mode": "fixed:" + SEEKER}, "judge-sim": {"mode": "judge:0.3"},
                "m1": {"faults": {"blocked": 0.15}}}
    with SimServerProcess(mode="echo", profiles=profiles, seed=3) as sim:
        m = _models(tmp_path / "models.toml", sim.base_url)
        r = _sweep(m, db)
        assert r.returncode == 0, r.stderr
        judged = sim.stats()["by_model"]["judge-sim"]
        sim.reset()
        r = _sweep(m, db)
        assert r.returncode == 0, r.stderr
        assert sim.stats()["total"] == 0  # episodes and verdicts are stored: nothing asked again
    results = query(db, "SELECT status, count(*), count(blocked) FROM results GROUP BY 1")
    assert len(results) == 1 and results[0][0] == "ok"  # the judge's troubles are never the companion's
    _, n, n_blocked = results[0]
    assert n == 12 and 0 < n_blocked < 12
    st = dict(query(db, "SELECT status, count(*) FROM judgements GROUP BY 1"))
    assert st.get("unjudgeable") == n_blocked  # a blocked episode is an outcome of its own, not judged
    assert st.get("ok", 0) > 0 and st.get("unparsed", 0) > 0 and judged == st["ok"] + st["unparsed"]
    assert sum(st.values()) == n
    reasons = query(db, "SELECT DISTINCT reason FROM judgements WHERE status = 'unjudgeable'")
    assert reasons == [("the companion declined or was blocked: an outcome of its own, not judged",)]
    q = query(db, "SELECT n_ok, n_unparsed, n_unjudgeable FROM judge_quality")
    assert q == [(st["ok"], st["unparsed"], n_blocked)]
    # the scripted verdict: seen 4, understood 3, supported 5 -> 4.0 -> (4 - 1) / (5 - 1) = 75 on 0-100;
    # final emotion 60 (the scripted seeker) -> dataset score (60 + 75) / 2
    methods = dict(query(db, "SELECT metric, round(score, 6) FROM method_scores"))
    assert methods == {"final_emotion": 60.0, "judge_support": 75.0}
    assert query(db, "SELECT round(score, 6) FROM dataset_scores") == [(67.5,)]
    dims = dict(query(db, "SELECT metric, value FROM metric_values WHERE metric LIKE 'judge_%'"))
    assert dims == {"judge_support": 4.0, "judge_seen": 4.0, "judge_understood": 3.0, "judge_supported": 5.0}


def test_a_failing_judge_leaves_the_companions_score_alone(tmp_path):
    db = tmp_path / "r.duckdb"
    profiles = {"seeker-sim": {"mode": "fixed:" + SEEKER}, "judge-sim": {"mode": "judge", "faults": {"500": 1.0}}}
    with SimServerProcess(mode="echo", profiles=profiles, seed=3) as sim:
        r = _sweep(_models(tmp_path / "models.toml", sim.base_url), db, limit=4)
        assert r.returncode == 0, r.stderr
    assert query(db, "SELECT status, count(*) FROM results GROUP BY 1") == [("ok", 4)]
    assert query(db, "SELECT status, error_class, count(*) FROM judgements GROUP BY ALL") == [("error", "transient", 4)]
    # no verdict: the judge method is absent, the dataset is the final emotion alone (coverage says half)
    assert query(db, "SELECT round(score, 6), round(coverage, 6) FROM dataset_scores") == [(60.0, 0.5)]

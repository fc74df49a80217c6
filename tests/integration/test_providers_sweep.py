"""Sweeps over all three wire formats against the simulated server: skipped keys, secrets,
refusals, cost, --estimate, --budget, and a throttled model that must not slow the others."""

import os

import duckdb

from simulator.server import SimServerProcess
from tests.integration.helpers import query, run_cli

KEYS = {"SIM_OPENAI_KEY": "sk-proj-SECRETopenai0123456789abcdef",
        "SIM_ANTHROPIC_KEY": "sk-ant-api03-SECRETanthropic0123456789",
        "SIM_GEMINI_KEY": "fake-gemini-SECRETgemini0123456789abcdefg"}
WRONG = {"SIM_WRONG_KEY": "sk-proj-SECRETwrong9876543210fedcba"}


def model(name, provider, root, key_env=None, extra="", retries=6):
    url = root + "/v1" if provider == "openai" else root
    key = f'api_key_env = "{key_env}"\n' if key_env else ""
    return (f'[[models]]\nname = "{name}"\nprovider = "{provider}"\nbase_url = "{url}"\nmodel = "{name}"\n'
            f'max_tokens = 8\nmax_retries = {retries}\nbackoff_s = 0.05\n{key}{extra}\n')


def env_with(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIM_")}
    env.update(extra)
    return env


def test_keys_never_reach_the_database_or_output_and_missing_keys_skip(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold", api_key=list(KEYS.values())) as sim:
        root = sim.root_url
        m = tmp_path / "models.toml"
        m.write_text(model("gpt-x", "openai", root, "SIM_OPENAI_KEY") + model("claude-x", "anthropic", root, "SIM_ANTHROPIC_KEY")
                     + model("gemini-x", "gemini", root, "SIM_GEMINI_KEY") + model("wrong-key", "openai", root, "SIM_WRONG_KEY")
                     + model("wrong-claude", "anthropic", root, "SIM_WRONG_KEY") + model("no-key", "gemini", root, "SIM_UNSET_KEY"))
        r = run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "15",
                    env=env_with(**KEYS, **WRONG))
        assert r.returncode == 0, r.stderr
    assert "warning: skipping model 'no-key': environment variable SIM_UNSET_KEY is not set" in r.stderr
    rows = dict(query(db, "SELECT model, count(*) FILTER (WHERE status = 'ok') FROM results GROUP BY 1"))
    assert rows == {"gpt-x": 15, "claude-x": 15, "gemini-x": 15, "wrong-key": 0, "wrong-claude": 0}
    errors = query(db, "SELECT DISTINCT error FROM results WHERE status = 'error'")
    assert any("invalid_api_key" in e for e, in errors) and any("authentication_error" in e for e, in errors)
    # Every byte the sweep left behind: the database (and any WAL), stdout, stderr.
    blobs = [r.stdout, r.stderr] + [p.read_bytes().decode("latin-1") for p in tmp_path.iterdir() if p.name.startswith("r.duckdb")]
    fragments = [k[10:30] for k in [*KEYS.values(), *WRONG.values()]]  # a recognisable part of each key
    for secret, part in zip([*KEYS.values(), *WRONG.values()], fragments):
        assert all(secret not in b and part not in b for b in blobs), secret
    # And every text cell of every table, in case the file compresses what it stores.
    con = duckdb.connect(str(db), read_only=True)
    try:
        columns = con.execute("SELECT table_name, list(column_name) FROM information_schema.columns WHERE "
                              "data_type IN ('VARCHAR', 'JSON') AND table_schema = 'main' GROUP BY 1").fetchall()
        assert any(t == "results" for t, _ in columns)
        for table, cols in columns:
            cond = " OR ".join(f'CAST("{c}" AS VARCHAR) LIKE \'%{p}%\'' for c in cols for p in fragments)
            assert con.execute(f'SELECT count(*) FROM "{table}" WHERE {cond}').fetchone() == (0,), table
    finally:
        con.close()
    assert "SECRET" not in "".join(blobs[:2])


def test_no_model_with_a_key_is_a_one_line_error(tmp_path):
    m = tmp_path / "models.toml"
    m.write_text(model("a", "openai", "http://127.0.0.1:9", "SIM_UNSET_A") + model("b", "gemini", "http://127.0.0.1:9", "SIM_UNSET_B"))
    r = run_cli("sweep", str(m), "--db", str(tmp_path / "r.duckdb"), "--datasets", "synthetic", env=env_with())
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "no model can run" in r.stderr and "SIM_UNSET_A, SIM_UNSET_B" in r.stderr


def test_refusals_and_blocks_are_stored_as_answers_scored_unparsed_and_not_retried(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold", faults={"refusal": 0.2, "blocked": 0.2}, seed=4) as sim:
        root = sim.root_url
        m = tmp_path / "models.toml"
        m.write_text(model("gpt-x", "openai", root) + model("claude-x", "anthropic", root) + model("gemini-x", "gemini", root))
        args = ("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "40", "--quiet")
        assert run_cli(*args).returncode == 0
        assert sim.stats()["total"] == 120  # nothing retried
        sim.reset()
        assert run_cli(*args).returncode == 0
        assert sim.stats()["total"] == 0  # and nothing asked again on resume
    blocked = dict(query(db, "SELECT model, list(DISTINCT blocked ORDER BY blocked) FROM results "
                             "WHERE blocked IS NOT NULL GROUP BY 1"))
    assert blocked == {"gpt-x": ["content_filter", "refusal"], "claude-x": ["refusal"],
                       "gemini-x": ["SAFETY", "prompt:SAFETY"]}
    assert query(db, "SELECT DISTINCT status, response, prediction, score, attempts FROM results "
                     "WHERE blocked IS NOT NULL") == [("ok", "", None, 0.0, 1)]
    (n_blocked,), = query(db, "SELECT count(*) FROM results WHERE blocked IS NOT NULL")
    (n_unparsed,), = query(db, "SELECT sum(n_unparsed) FROM dataset_coverage")
    assert n_blocked == n_unparsed > 10  # counted as unparsed answers, not as errors
    assert query(db, "SELECT sum(n_error) FROM dataset_coverage") == [(0,)]


PRICED = 'price = { input_per_mtok = 1000.0, output_per_mtok = 2000.0 }\n'


def test_estimate_calls_nothing_and_budget_stops_dispatching(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold", latency_ms=20) as sim:
        root = sim.root_url
        m = tmp_path / "models.toml"
        m.write_text(model("a", "openai", root, extra=PRICED + "max_concurrency = 2")
                     + model("b", "anthropic", root, extra=PRICED + "max_concurrency = 2"))
        base = ("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "50", "--quiet")
        r = run_cli(*base, "--estimate")
        assert r.returncode == 0, r.stderr
        assert sim.stats()["total"] == 0 and not db.exists()
        lines = {ln.split()[0]: ln.split() for ln in r.stdout.splitlines() if ln.split()}
        assert lines["a"][2] == "50" and lines["total"][1] == "100"
        est_a = float(lines["a"][5])
        # Each item costs ~0.07 USD here (about 45 tokens in, 3 out): $1 buys about 14.
        r = run_cli(*base, "--budget", "1")
        assert r.returncode == 0, r.stderr
        assert "budget reached" in r.stderr and "not asked" in r.stderr
        (n, spent), = query(db, "SELECT count(*), sum(cost_usd) FROM results")
        assert 4 <= n < 40 and spent <= 1.0
        assert n == sim.stats()["total"]
        # Resume with a larger budget: only the rest is asked, and the estimate counts only what is left.
        r = run_cli(*base, "--estimate")
        left = {ln.split()[0]: ln.split() for ln in r.stdout.splitlines() if ln.split()}
        assert int(left["total"][1]) == 100 - n and float(left["a"][5]) < est_a
        assert run_cli(*base, "--budget", "1000").returncode == 0
    costs = query(db, "SELECT model, n_items, input_tokens > 0, output_tokens > 0, round(cost_usd, 6) = "
                      "round((input_tokens * 1000 + output_tokens * 2000) / 1e6, 6) FROM model_costs ORDER BY 1")
    assert costs == [("a", 50, True, True, True), ("b", 50, True, True, True)]
    runs = query(db, "SELECT outcome, n_items FROM sweep_costs ORDER BY started_at")
    assert [o for o, _ in runs] == ["budget", "complete"] and sum(k for _, k in runs) == 100


def test_a_throttled_model_never_slows_the_others(tmp_path):
    db = tmp_path / "r.duckdb"
    # "slow" may send 5 requests a second and nobody told the engine; "fast" has no limit.
    profiles = {"slow": {"rpm": 5, "latency_ms": 20}, "fast": {"latency_ms": 20}}
    with SimServerProcess(mode="gold", profiles=profiles, rpm_window_s=1.0) as sim:
        root = sim.root_url
        m = tmp_path / "models.toml"
        m.write_text(model("slow", "openai", root, extra="max_concurrency = 16", retries=30)
                     + model("fast", "openai", root, extra="max_concurrency = 16"))
        r = run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "60")
        assert r.returncode == 0, r.stderr
        throttled = sim.stats()["throttled_by_model"]
    assert throttled.get("fast", 0) == 0 and throttled["slow"] > 0
    assert "slow: rate-limited" in r.stderr and "concurrency now" in r.stderr
    spans = dict(query(db, "SELECT model, epoch(max(finished_at)) - epoch(min(started_at)) FROM results GROUP BY 1"))
    # 60 items at 16 in flight and 20 ms each: well under a second, while "slow" needs ~12 s.
    assert spans["fast"] < 2.0 < 10.0 < spans["slow"]
    assert query(db, "SELECT count(*) FROM results WHERE status = 'ok'") == [(120,)]

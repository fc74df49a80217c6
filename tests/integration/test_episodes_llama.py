"""The real llama.cpp server (SmolLM2-135M) as the companion AND the user simulator: 3 episodes x 3
exchanges run to an end and are reported; replies the reader cannot read are simulator errors, stored
as such (turn status 'unreadable', results error class 'simulator') and never scored."""

from __future__ import annotations

import pytest

from tests.integration.helpers import LLAMA_URL, llama_reachable, query, run_cli
from tests.integration.test_episodes import SUITE

pytestmark = [
    pytest.mark.llama,
    pytest.mark.skipif(not llama_reachable(), reason=f"llama.cpp server not reachable at {LLAMA_URL} "
                       "(start it: tools/local-llm-server.sh)"),
]


def test_smollm2_plays_both_sides(tmp_path):
    m = tmp_path / "models.toml"
    m.write_text(f'[[models]]\nname = "smol"\nprovider = "openai"\nbase_url = "{LLAMA_URL}"\nmodel = "smollm2"\n'
                 "max_concurrency = 1\nmax_tokens = 48\ntimeout_s = 300\n\n"
                 f'[user_simulator]\nprovider = "openai"\nbase_url = "{LLAMA_URL}"\nmodel = "smollm2"\n'
                 "max_concurrency = 1\nmax_tokens = 96\ntimeout_s = 300\n")
    (tmp_path / "suite.toml").write_text(SUITE)
    db = tmp_path / "r.duckdb"
    r = run_cli("sweep", str(m), "--db", str(db), "--suite", str(tmp_path / "suite.toml"), "--limit", "3",
                "--turns", "3", timeout=1800)
    assert r.returncode == 0, r.stderr
    assert "episodes:" in r.stderr  # the run's line on how episodes ended
    rows = query(db, "SELECT status, error_class, score FROM results ORDER BY item_id")
    assert len(rows) == 3  # every episode ended: scored, or a simulator error
    for status, error_class, score in rows:
        assert (status, error_class) in (("ok", None), ("error", "simulator"))
        assert (score is None) == (status == "error")
    unreadable = query(db, "SELECT count(*) FROM turns WHERE status = 'unreadable'")[0][0]
    errors = sum(1 for s, _, _ in rows if s == "error")
    assert unreadable == errors  # each simulator error is one stored unreadable reply (after its retries)
    r = run_cli("report", str(db), timeout=300)
    assert r.returncode == 0, r.stderr
    print(f"llama episodes: {3 - errors} scored, {errors} simulator errors;",
          query(db, "SELECT item_id, exchanges, final_emotion FROM episodes ORDER BY 1"))

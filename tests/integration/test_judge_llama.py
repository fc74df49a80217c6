"""The five model-based datasets against the real llama.cpp server, SmolLM2 as model and judge.

Slow (long prompts on 2 cores: minutes); skipped when the server is unreachable.
"""

from __future__ import annotations

import pytest

from tests.integration.helpers import LLAMA_URL, ROOT, llama_reachable, query, run_cli

pytestmark = [
    pytest.mark.llama,
    pytest.mark.slow,
    pytest.mark.skipif(not llama_reachable(), reason=f"llama.cpp server not reachable at {LLAMA_URL} "
                       "(start it with ../shared/tools/local-llm-server.sh start)"),
]

DATASETS = "lcsts,cnewsum,vcsum,longmemeval,personafeedback"
FIXTURES = ROOT / "tests" / "benchmark" / "fixtures"


def _models(url: str, retries: int = 3) -> str:
    # A declared window of 1024 tokens (the server's is 8192) keeps each request to seconds;
    # it also makes every long item go through fitting. Same model as judge: warned, allowed.
    common = (f'provider = "openai"\nbase_url = "{url}"\nmodel = "smollm2"\nmax_concurrency = 1\n'
              f"context_tokens = 1024\ntimeout_s = 600\nmax_retries = {retries}\nbackoff_s = 0.2\n")
    return f'[[models]]\nname = "smollm2"\n{common}max_tokens = 48\n\n[judge]\nname = "smollm2-judge"\n{common}'


def test_five_model_based_datasets_judged_then_resume_sends_nothing(tmp_path, data_dir):
    data = tmp_path / "data"
    data.mkdir()
    for entry in data_dir.iterdir():
        if entry.name != "personafeedback":
            (data / entry.name).symlink_to(entry)
    (data / "personafeedback").symlink_to(FIXTURES / "personafeedback")
    db, m = tmp_path / "r.duckdb", tmp_path / "models.toml"
    m.write_text(_models(LLAMA_URL))
    args = ("sweep", str(m), "--db", str(db), "--data-dir", str(data), "--datasets", DATASETS, "--limit", "5",
            "--quiet")
    r = run_cli(*args, timeout=3600)
    assert r.returncode == 0, r.stderr
    assert "is also evaluated as 'smollm2'" in r.stderr
    rows = query(db, "SELECT dataset, count(*), count(*) FILTER (WHERE status = 'ok') FROM results GROUP BY 1")
    counts = {d: (n, ok) for d, n, ok in rows}
    assert set(counts) == set(DATASETS.split(",")) and all(n == ok for n, ok in counts.values()), counts
    # Every answer of a judged dataset has a settled judgement (a verdict, or a reason for none).
    quality = query(db, "SELECT dataset, n_answers, n_pending, n_error, n_ok + n_empty + n_unparsed + n_refused "
                        "+ n_unjudgeable FROM judge_quality ORDER BY 1")
    assert [q[0] for q in quality] == ["cnewsum", "lcsts", "longmemeval", "vcsum"]
    assert all(n == 5 and pending == 0 and err == 0 and settled == 5 for _, n, pending, err, settled in quality), \
        quality
    assert query(db, "SELECT count(*) FROM judgements WHERE status <> 'ok' AND reason IS NULL") == [(0,)]
    assert query(db, "SELECT count(*) FROM judgements WHERE status IN ('ok', 'unparsed', 'refused') "
                     "AND raw IS NULL") == [(0,)]
    truncated = dict(query(db, "SELECT dataset, value FROM metric_values WHERE metric = 'truncated_rate'"))
    assert truncated["vcsum"] == 1.0  # meetings never fit in 1,024 tokens
    assert query(db, "SELECT count(*) FROM position_consistency") == [(1,)]
    # Resume against an address where nothing listens, without retries: any request would
    # store an error. Nothing is asked, nothing is written.
    m.write_text(_models("http://127.0.0.1:9/v1", retries=0))
    r = run_cli(*args, timeout=600)
    assert r.returncode == 0 and "(0 rows written this run)" in r.stderr, r.stderr
    assert query(db, "SELECT count(*) FROM results WHERE status = 'error'") == [(0,)]
    assert query(db, "SELECT count(*) FROM judgements WHERE status = 'error'") == [(0,)]

"""CompactBench against the real llama.cpp server (`../shared/tools/local-llm-server.sh start`).

Kept tiny: the server answers one request at a time (0.3-3 s each).
"""

from __future__ import annotations

import pytest

from tests.integration.helpers import LLAMA_URL, llama_reachable, query
from tests.integration.test_compactbench import BENCHMARKS, cb_run, toml

pytestmark = [
    pytest.mark.llama,
    pytest.mark.skipif(not BENCHMARKS.is_dir(), reason=f"CompactBench templates not found at {BENCHMARKS}"),
    pytest.mark.skipif(not llama_reachable(), reason=f"llama.cpp server not reachable at {LLAMA_URL} "
                       "(start it with ../shared/tools/local-llm-server.sh start)"),
]


def test_tiny_run_against_real_server_then_resume(tmp_path):
    db = tmp_path / "r.duckdb"
    section = ('suite = "starter"\ntemplates = ["buried_constraint_starter_v1"]\ncase_slots = 1\ndrift_cycles = 0\n'
               '[[compactbench.compactors]]\nname = "last-4"\nkind = "truncate-last-n"\noptions = { n = 4 }\n'
               '[[compactbench.compactors]]\nname = "summary"\nkind = "naive-summary"\n')
    m = toml(tmp_path / "m.toml", LLAMA_URL, section=section, concurrency=1, model="smollm2",
             extra="max_tokens = 32\ntimeout_s = 300")
    r = cb_run(m, db, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = query(db, "SELECT compactor, status, response IS NOT NULL, model_version IS NOT NULL, input_tokens > 0 "
                     "FROM compact_items ORDER BY 1")
    assert len(rows) == 6 and all(s == "ok" and a and b and c for _, s, a, b, c in rows), rows
    (summary,), = query(db, "SELECT output FROM compact_steps WHERE compactor = 'summary' AND status = 'ok'")
    assert '"summary_text"' in summary
    scores = query(db, "SELECT compactor, n_cases_complete, overall_score BETWEEN 0 AND 1 FROM compact_run_scores "
                       "ORDER BY 1")
    assert scores == [("last-4", 1, True), ("summary", 1, True)]
    r = cb_run(m, db, timeout=120)
    assert r.returncode == 0 and "0 rows written" in r.stderr, r.stderr

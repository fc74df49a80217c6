"""Against the real llama.cpp server (`../shared/tools/local-llm-server.sh start`)."""

import pytest

from benchmark import registry
from tests.integration.helpers import LLAMA_URL, llama_reachable, query, run_cli

pytestmark = [
    pytest.mark.llama,
    pytest.mark.skipif(not llama_reachable(), reason=f"llama.cpp server not reachable at {LLAMA_URL} "
                       "(start it with ../shared/tools/local-llm-server.sh start)"),
]


def test_sweep_against_real_server_then_resume(tmp_path, data_dir):
    db = tmp_path / "r.duckdb"
    m = tmp_path / "models.toml"
    m.write_text(f'[[models]]\nname = "smollm2"\nprovider = "openai"\nbase_url = "{LLAMA_URL}"\n'
                 f'model = "smollm2"\nmax_concurrency = 2\nmax_tokens = 12\n')
    datasets = ",".join(d for d in ("synthetic", "sst2") if registry.get(d) is not None)
    r = run_cli("sweep", str(m), "--db", str(db), "--datasets", datasets, "--limit", "4",
                "--data-dir", str(data_dir), "--quiet", timeout=300)
    assert r.returncode == 0, r.stderr
    n_ds = len(datasets.split(","))
    rows = query(db, "SELECT status, response, model_version, input_tokens FROM results")
    assert len(rows) == 4 * n_ds
    assert all(s == "ok" for s, *_ in rows), rows
    assert all(resp is not None and v and t > 0 for _, resp, v, t in rows)
    # Resume against the real server: nothing left to ask, nothing rewritten.
    r = run_cli("sweep", str(m), "--db", str(db), "--datasets", datasets, "--limit", "4",
                "--data-dir", str(data_dir), "--quiet", timeout=120)
    assert r.returncode == 0 and "0 rows written" in r.stderr, r.stderr


def test_grammar_constraint_makes_every_choice_answer_parse(tmp_path, data_dir):
    """SmolLM2-135M free-form leaves about half its answers unparseable; held by a grammar, none."""
    db = tmp_path / "r.duckdb"
    m = tmp_path / "models.toml"
    m.write_text(f'[[models]]\nname = "smollm2"\nprovider = "openai"\nbase_url = "{LLAMA_URL}"\n'
                 f'model = "smollm2"\nmax_concurrency = 2\nmax_tokens = 48\nanswer_constraint = "grammar"\n')
    # Single letter (English, Chinese), multi-label by name, a questionnaire.
    datasets = "sst2,ocnli,goemotions,eq60"
    r = run_cli("sweep", str(m), "--db", str(db), "--datasets", datasets, "--limit", "3",
                "--data-dir", str(data_dir), "--quiet", timeout=600)
    assert r.returncode == 0, r.stderr
    rows = query(db, "SELECT dataset, status, response, prediction FROM results ORDER BY ALL")
    assert len(rows) == 12 and all(s == "ok" for _, s, *_ in rows), rows
    assert all(p is not None for *_, p in rows), rows
    labels = [resp.split(", ") for d, _, resp, _ in rows if d == "goemotions"]
    assert all(len(ls) == len(set(ls)) for ls in labels), labels  # distinct values only
    assert dict(query(db, "SELECT dataset, n_unparsed FROM dataset_coverage")) == {d: 0 for d in datasets.split(",")}
    stamp = query(db, "SELECT generation->>'answer_constraint' FROM models")
    assert stamp == [("grammar",)]


def test_a_database_stamped_before_the_served_model_reruns_against_the_same_server(tmp_path):
    """Rows whose identity does not say what the server had loaded (made by an earlier version) are kept:
    the rerun asks nothing, and stamps them with what the server serves now."""
    import duckdb
    import orjson

    from engine.sweep.identity import identity_hash

    db = tmp_path / "r.duckdb"
    m = tmp_path / "models.toml"
    m.write_text(f'[[models]]\nname = "smollm2"\nprovider = "openai"\nbase_url = "{LLAMA_URL}"\n'
                 f'model = "smollm2"\nmax_concurrency = 2\nmax_tokens = 8\n')
    args = ("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "3", "--quiet")
    assert run_cli(*args, timeout=300).returncode == 0
    con = duckdb.connect(str(db))
    (old, detail), = con.execute("SELECT DISTINCT identity, detail FROM results "
                                 "JOIN identities USING (identity)").fetchall()
    doc = orjson.loads(detail)
    assert doc["served"] == "smollm2"  # llama-cpp-python lists its alias at /v1/models
    del doc["served"]
    earlier = identity_hash(doc)
    con.execute("INSERT INTO identities VALUES (?, ?)", [earlier, orjson.dumps(doc).decode()])
    con.execute("UPDATE results SET identity = ?", [earlier])
    con.close()
    r = run_cli(*args, timeout=120)
    assert r.returncode == 0 and "0 rows written" in r.stderr, r.stderr
    assert query(db, "SELECT DISTINCT identity FROM results") == [(old,)]

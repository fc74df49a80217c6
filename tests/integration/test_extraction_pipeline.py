"""The extractor model in a sweep and `rescore`, through the CLI against the simulated server, real DuckDB files.

COPA (two options) from the real data folder; the model under test answers in words the rules
cannot read, the scripted extractor ("ex-sim") replies with a fixed text.
"""

from __future__ import annotations

import json
from pathlib import Path

from simulator.server import SimServerProcess
from tests.integration.helpers import query, run_cli

UNREADABLE = "Hmm, I would go with the second alternative here."


def models(path: Path, url: str, *, names=("m1",), extractor: bool = True, batch: bool = False) -> Path:
    text = "".join(f'[[models]]\nname = "{n}"\nprovider = "openai"\nbase_url = "{url}"\nmodel = "{n}"\n'
                   "max_concurrency = 4\nmax_tokens = 32\nmax_retries = 0\n\n" for n in names)
    if extractor:
        text += (f'[extractor]\nname = "ex"\nprovider = "openai"\nbase_url = "{url}"\nmodel = "ex-sim"\n'
                 "max_concurrency = 2\nmax_retries = 0\nprice = { input_per_mtok = 1.0, output_per_mtok = 2.0 }\n"
                 + ("batch = true\nbatch_poll_s = 0.2\n" if batch else ""))
    path.write_text(text)
    return path


def sweep(m: Path, db: Path, data: Path, limit: int = 6, *extra: str):
    return run_cli("sweep", str(m), "--db", str(db), "--data-dir", str(data), "--datasets", "copa",
                   "--limit", str(limit), "--quiet", *extra, timeout=180)


def test_extractor_reads_only_unread_answers_and_resume_asks_nothing(tmp_path, data_dir):
    db = tmp_path / "r.duckdb"
    profiles = {"m1": {"mode": f"fixed:{UNREADABLE}"}, "m2": {"mode": "fixed:Answer: A"}, "ex-sim": {"mode": "fixed:B"}}
    with SimServerProcess(mode="letter", profiles=profiles) as sim:
        m = models(tmp_path / "models.toml", sim.base_url, names=("m1", "m2"))
        r = sweep(m, db, data_dir)
        assert r.returncode == 0, r.stderr
        # m2's answers are read by the rules: the extractor is asked about m1's only.
        assert dict(sim.stats()["by_model"]) == {"m1": 6, "m2": 6, "ex-sim": 6}
        sim.reset()
        r = sweep(m, db, data_dir)
        assert r.returncode == 0, r.stderr
        assert sim.stats()["total"] == 0
    rows = query(db, "SELECT model, prediction, extracted_by, count(*) FROM results GROUP BY ALL ORDER BY 1")
    assert rows == [("m1", '"B"', "model", 6), ("m2", '"A"', "rules", 6)]
    # Scored like the bare answer "B": right exactly where the gold is B.
    assert query(db, "SELECT count(*) FROM results WHERE model = 'm1' AND score = (gold = '\"B\"')::DOUBLE") == [(6,)]
    ex = query(db, "SELECT status, codes, raw, count(*), sum(input_tokens) > 0, sum(cost_usd) > 0, "
                   "min(prompt_version) = max(prompt_version) FROM extractions GROUP BY ALL")
    assert ex == [("ok", '["B"]', "B", 6, True, True, True)]
    assert query(db, "SELECT extractor, provider, model_id FROM extractors") == [("ex", "openai", "ex-sim")]


def test_a_batched_extractor_stores_the_readings_of_calls_at_the_batch_price(tmp_path, data_dir):
    profiles = {"m1": {"mode": f"fixed:{UNREADABLE}"}, "ex-sim": {"mode": "fixed:B"}}
    got = {}
    with SimServerProcess(mode="letter", profiles=profiles, batch_latency_s=1.0) as sim:
        for batch in (False, True):
            db = tmp_path / f"{batch}.duckdb"
            r = sweep(models(tmp_path / f"{batch}.toml", sim.base_url, batch=batch), db, data_dir)
            assert r.returncode == 0, r.stderr
            got[batch] = (query(db, "SELECT item_id, prediction, score, extracted_by FROM results ORDER BY 1"),
                          query(db, "SELECT item_id, status, codes, raw, input_tokens, output_tokens, cost_usd "
                                    "FROM extractions ORDER BY 1"))
        st = sim.stats()
        sim.reset()
        assert sweep(models(tmp_path / "True.toml", sim.base_url, batch=True), tmp_path / "True.duckdb",
                     data_dir).returncode == 0
        assert sim.stats()["total"] == 0 and not sim.stats().get("batches_created")  # nothing asked again
    assert st["by_model"]["ex-sim"] == 6 and st["batches_created"] == {"openai": 1}  # the sync run's calls, one batch
    assert got[True][0] == got[False][0] and {p for _, p, _, by in got[True][0]} == {'"B"'}
    for sync_row, batch_row in zip(got[False][1], got[True][1], strict=True):
        assert batch_row[:6] == sync_row[:6] and batch_row[6] == sync_row[6] / 2  # half the price
    assert query(tmp_path / "True.duckdb", "SELECT lane, model, n_requests, collected FROM batches") == [
        ("extractor", "ex", 6, True)]


def test_a_reply_that_is_not_a_bare_code_leaves_the_answer_unread(tmp_path, data_dir):
    db = tmp_path / "r.duckdb"
    profiles = {"m1": {"mode": f"fixed:{UNREADABLE}"}, "ex-sim": {"mode": "fixed:I think the answer is B."}}
    with SimServerProcess(mode="letter", profiles=profiles) as sim:
        m = models(tmp_path / "models.toml", sim.base_url)
        assert sweep(m, db, data_dir).returncode == 0
        assert dict(sim.stats()["by_model"]) == {"m1": 6, "ex-sim": 6}
        sim.reset()
        assert sweep(m, db, data_dir).returncode == 0
        assert sim.stats()["total"] == 0  # 'unparsed' is settled: temperature 0 would say the same
    assert query(db, "SELECT count(*) FROM results WHERE prediction IS NULL AND extracted_by IS NULL") == [(6,)]
    assert query(db, "SELECT status, count(*) FROM extractions GROUP BY ALL") == [("unparsed", 6)]


def test_an_extractor_added_later_reads_the_stored_backlog(tmp_path, data_dir):
    db = tmp_path / "r.duckdb"
    profiles = {"m1": {"mode": f"fixed:{UNREADABLE}"}, "ex-sim": {"mode": "fixed:(b)"}}
    with SimServerProcess(mode="letter", profiles=profiles) as sim:
        r = sweep(models(tmp_path / "plain.toml", sim.base_url, extractor=False), db, data_dir)
        assert r.returncode == 0, r.stderr
        assert query(db, "SELECT count(*) FROM results WHERE prediction IS NULL") == [(6,)]
        sim.reset()
        r = sweep(models(tmp_path / "models.toml", sim.base_url), db, data_dir)
        assert r.returncode == 0, r.stderr
        assert dict(sim.stats()["by_model"]) == {"ex-sim": 6}  # the model is not asked again
    assert query(db, "SELECT prediction, extracted_by, count(*) FROM results GROUP BY ALL") == [('"B"', "model", 6)]


def test_rescore_restores_readings_keeps_history_and_a_sweep_then_asks_nothing(tmp_path, data_dir):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="letter", profiles={"m1": {"mode": "fixed:Answer: B"}}) as sim:
        m = models(tmp_path / "models.toml", sim.base_url, extractor=False)
        assert sweep(m, db, data_dir, 10).returncode == 0
        right = query(db, "SELECT value FROM metric_values WHERE model = 'm1'")[0][0]
        # What an older extractor and scorer left: 4 answers unread, another scorer stamp.
        import duckdb

        con = duckdb.connect(str(db))
        con.execute("UPDATE results SET prediction = NULL, score = 0, extracted_by = NULL, scorer_version = 'old' "
                    "WHERE item_id IN (SELECT item_id FROM results ORDER BY item_id LIMIT 4)")
        con.close()
        assert query(db, "SELECT value FROM metric_values WHERE model = 'm1'")[0][0] < right or right == 0
        r = run_cli("rescore", str(db), "--data-dir", str(data_dir), "--datasets", "copa", "--quiet")
        assert r.returncode == 0, r.stderr
        assert "10 rows read again, 4 changed: 0 parsed -> unparsed, 4 unparsed -> parsed" in r.stderr
        assert query(db, "SELECT value FROM metric_values WHERE model = 'm1'")[0][0] == right
        assert query(db, "SELECT count(*), min(scorer_version), count(prediction) FROM results_history") == [(4, "old", 0)]
        assert query(db, "SELECT outcome, n_rows, n_changed FROM rescores") == [("complete", 10, 4)]
        assert query(db, "SELECT count(DISTINCT scorer_version), count(*) FILTER (WHERE extracted_by = 'rules') "
                         "FROM results") == [(1, 10)]
        sim.reset()
        r = sweep(m, db, data_dir, 10)  # no --allow-mixed: the stamps are what a sweep writes now
        assert r.returncode == 0, r.stderr
        assert sim.stats()["total"] == 0


def test_rescore_bad_input_exits_2(tmp_path):
    r = run_cli("rescore", str(tmp_path / "none.duckdb"))
    assert r.returncode == 2 and "no such database" in r.stderr


def test_extract_cli_asks_the_extractor_only_about_unread_lines(tmp_path):
    lines = [
        {"id": 1, "response": "Answer: A", "options": {"A": "x", "B": "y"}},
        {"id": 2, "response": UNREADABLE, "options": {"A": "x", "B": "y"}},
        {"id": 3, "response": UNREADABLE, "options": {"A": "x", "B": "y"}, "finish_reason": "length"},  # cut off
        {"id": 4, "response": "", "options": {"A": "x", "B": "y"}},  # nothing to read
        {"id": 5, "response": UNREADABLE, "options": {"A": "x", "B": "y", "C": "z"}, "multi_label": True},
    ]
    f = tmp_path / "in.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with SimServerProcess(mode="letter", profiles={"ex-sim": {"mode": "fixed:B"}}) as sim:
        m = models(tmp_path / "models.toml", sim.base_url, names=())
        r = run_cli("extract", str(f), "--extractor", str(m))
        assert r.returncode == 0, r.stderr
        assert dict(sim.stats()["by_model"]) == {"ex-sim": 2}
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert out == [{"id": 1, "answer": "A", "by": "rules"}, {"id": 2, "answer": "B", "by": "model"},
                   {"id": 3, "answer": None, "by": "rules"}, {"id": 4, "answer": None, "by": "rules"},
                   {"id": 5, "answer": ["B"], "by": "model"}]


def test_a_dead_extractor_is_given_up_and_its_questions_asked_by_the_next_run(tmp_path, data_dir):
    import socket
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]  # nothing listens there
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="letter", profiles={"m1": {"mode": f"fixed:{UNREADABLE}"},
                                                   "ex-sim": {"mode": "fixed:B"}}) as sim:
        m = models(tmp_path / "models.toml", sim.base_url)
        text = m.read_text().replace(f'model = "ex-sim"\n', 'model = "ex-sim"\nunreachable_after_s = 3\n')
        m.write_text(text.replace(f'base_url = "{sim.base_url}"\nmodel = "ex-sim"',
                                  f'base_url = "http://127.0.0.1:{dead}/v1"\nmodel = "ex-sim"'))
        t0 = time.monotonic()
        r = sweep(m, db, data_dir)
        assert r.returncode == 3, r.stderr  # a host could not be reached: run again
        assert time.monotonic() - t0 < 60 and "unreachable: ex:" in r.stderr
        assert query(db, "SELECT count(*) FROM results WHERE model = 'm1' AND status = 'ok'") == [(6,)]
        assert query(db, "SELECT count(*) FROM extractions") == [(0,)]  # unasked, not stored as errors
        m.write_text(text)  # the extractor answers again
        sim.reset()
        r = sweep(m, db, data_dir)
        assert r.returncode == 0, r.stderr
        assert dict(sim.stats()["by_model"]) == {"ex-sim": 6}
    assert query(db, "SELECT status, count(*) FROM extractions GROUP BY 1") == [("ok", 6)]


def test_extractor_calls_count_against_the_budget(tmp_path, data_dir):
    db = tmp_path / "r.duckdb"
    profiles = {"m1": {"mode": f"fixed:{UNREADABLE}"}, "ex-sim": {"mode": "fixed:B"}}
    with SimServerProcess(mode="letter", profiles=profiles) as sim:
        m = models(tmp_path / "models.toml", sim.base_url)  # m1 unpriced: only the extractor is budgeted
        r = sweep(m, db, data_dir, 6, "--budget", "0.0000001")
        assert r.returncode == 0, r.stderr
        assert "budget reached" in r.stderr
        first = dict(sim.stats()["by_model"])
        assert "ex-sim" not in first  # no extractor call fits the budget: dispatching stops
        sim.reset()
        r = sweep(m, db, data_dir, 6, "--budget", "1")
        assert r.returncode == 0, r.stderr
        assert dict(sim.stats()["by_model"]) == {"ex-sim": 6, **({"m1": 6 - first["m1"]} if first["m1"] < 6 else {})}
    (spent,), = query(db, "SELECT sum(cost_usd) FROM extractions")
    assert spent > 0

"""`import-items` and `estimate` on the command line: exit statuses, one-line errors, the JSON contract."""

from __future__ import annotations

import json

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.cli import main


def _matrix_csv(path, models=12, items=30, partial=("new",), shown=6, seed=0):
    rng = np.random.default_rng(seed)
    b = rng.normal(0, 1, items)
    lines = ["model,dataset,item_id,score"]
    for name in [f"m{k}" for k in range(models)] + list(partial):
        theta = rng.normal(0, 1)
        for ds in ("alpha", "beta"):
            n = shown if name in partial else items
            for i in range(n):
                lines.append(f"{name},{ds},{ds}-{i},{int(rng.random() < 1 / (1 + np.exp(b[i] - theta)))}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_import_then_estimate_json(tmp_path, capsys):
    db = tmp_path / "e.duckdb"
    assert main(["import-items", str(db), str(_matrix_csv(tmp_path / "items.csv")), "--data-dir", str(tmp_path)]) == 0
    assert "imported 732 item rows (13 models, 2 datasets, 0 of suite moodbench)" in capsys.readouterr().err
    assert main(["estimate", str(db), "--models", "new", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == ["new"] and sorted(out["new"]) == ["alpha", "beta"]
    e = out["new"]["alpha"]
    assert set(e) == {"estimate", "ci_low", "ci_high", "n", "n_total", "method"}
    assert (e["n"], e["n_total"], e["method"]) == (6, 30, "model-assisted")
    assert e["ci_low"] <= e["estimate"] <= e["ci_high"]
    assert main(["estimate", str(db)]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].split() == ["model", "dataset", "estimate", "95%", "interval", "n/total", "method"]
    assert "new    alpha" in text and "6/30  model-assisted" in text


def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path, capsys):
    db = tmp_path / "e.duckdb"
    bad = tmp_path / "bad.csv"
    bad.write_text("model,dataset,item_id,score\nm,d,1,0.5\nm,d,2,2\n")
    assert main(["import-items", str(db), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {bad}:3: score 2 is outside 0..1\n"
    assert not db.exists()
    assert main(["import-items", str(db), str(tmp_path / "none.csv")]) == 2
    assert "none.csv: no such file" in capsys.readouterr().err
    assert main(["estimate", str(db)]) == 2
    assert "e.duckdb does not exist" in capsys.readouterr().err and not db.exists()
    assert main(["import-items", str(db), str(_matrix_csv(tmp_path / "items.csv"))]) == 0
    assert main(["estimate", str(db), "--models", "new,zz"]) == 2
    assert capsys.readouterr().err.endswith("error: no scored rows for model 'zz' in the database\n")


def test_a_known_dataset_is_checked_against_its_items_and_scored_by_the_views(tmp_path, capsys):
    data = tmp_path / "data" / "sst2" / "data"
    data.mkdir(parents=True)
    pq.write_table(pa.table({"idx": [0, 1, 2], "sentence": ["good", "bad", "fine"], "label": [1, 0, 1]}),
                   data / "validation-00000.parquet")
    db = tmp_path / "e.duckdb"
    f = tmp_path / "i.csv"
    f.write_text("model,dataset,item_id,score\nm,sst2,0,1\nm,sst2,7,0\n")
    assert main(["import-items", str(db), str(f), "--data-dir", str(tmp_path / "data")]) == 2
    assert "i.csv:3: item '7' is not an item of dataset sst2 (suite moodbench)" in capsys.readouterr().err
    f.write_text("model,dataset,item_id,score\nm,sst2,0,1\nm,sst2,1,0\nm,other,x,1\n")
    assert main(["import-items", str(db), str(f), "--data-dir", str(tmp_path / "data")]) == 0
    con = duckdb.connect(str(db))
    try:
        assert con.execute("SELECT metric, kind FROM dataset_metrics").fetchall() == [("accuracy", "mean")]
        assert con.execute("SELECT dataset, value FROM metric_values ORDER BY 1").fetchall() == [("sst2", 0.5)]
    finally:
        con.close()


@pytest.mark.slow
def test_estimate_brings_the_files_bounds_up_to_date_with_the_estimates(tmp_path, capsys):
    from store.hierarchy.bootstrap import compute_intervals
    from tests.store.test_estimated_scores import partial_db

    con = partial_db(tmp_path)
    compute_intervals(con, replicates=100)
    con.close()
    db = tmp_path / "results.duckdb"
    assert main(["estimate", str(db)]) == 0
    con = duckdb.connect(str(db))
    try:
        # too few full models for an item model: the answered mean (75) with its Wilson interval, used by the views
        assert con.execute("SELECT score, estimated FROM dataset_scores WHERE model = 'new' AND dataset = 'df1'"
                           ).fetchone() == (75.0, True)
        lo, hi, est = con.execute("SELECT ci_low, ci_high, estimated FROM leaderboard WHERE model = 'new'").fetchone()
        assert est is True and lo is not None and hi is not None  # refreshed, not hidden as stale
        # a suite that scores df1 by an F1: the estimate is not its score, and `estimate` says so
        con.execute("UPDATE dataset_metrics SET kind = 'micro_f1', a = 'tp', b = 'fp', c = 'fn' WHERE dataset = 'df1'")
    finally:
        con.close()
    assert main(["estimate", str(db)]) == 0
    assert capsys.readouterr().err.splitlines()[-1] == (
        "estimates not used by the views (the suite's score of the dataset is not the mean item score): est 1: df1")

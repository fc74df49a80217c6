"""import-scores: dataset scores made elsewhere, validated, aggregated by the same views."""

from __future__ import annotations

import tracemalloc

import duckdb
import pytest

from engine.cli import main
from store import import_scores as import_scores_module
from store.import_scores import ScoreFileError
from tests.store.test_views_support import items, make_db, metric


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "results.duckdb"
    make_db(tmp_path).close()
    return path


def run(db, tmp_path, text: str, *extra: str, suite: str = "moodbench") -> int:
    f = tmp_path / "scores.csv"
    f.write_text(text, encoding="utf-8")
    return main(["import-scores", str(db), str(f), "--suite", suite, *extra])


def query(db, sql: str):
    con = duckdb.connect(str(db))
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_imported_scores_count_as_dataset_scores(db, tmp_path, capsys):
    assert run(db, tmp_path, "model,dataset,score\nm,sst2,80\nm,imdb,70.5\n\n") == 0
    assert "imported 2 dataset scores for suite moodbench" in capsys.readouterr().out
    rows = query(db, "SELECT dataset, score, coverage, source, n_items FROM dataset_scores ORDER BY dataset")
    assert rows == [("imdb", 70.5, 1.0, "external", None), ("sst2", 80.0, 1.0, "external", None)]
    # and flow up: sentiment polarity has imdb, sst2 (dianping absent)
    task = query(db, "SELECT score, coverage FROM task_scores WHERE task = 'sentiment_polarity'")[0]
    assert task[0] == pytest.approx(75.25) and task[1] == pytest.approx(2 / 3)


@pytest.mark.slow
def test_item_rows_win_unless_override(db, tmp_path):
    con = duckdb.connect(str(db))
    metric(con, "sst2")
    items(con, "m", "sst2", [1, 0])
    con.close()
    assert run(db, tmp_path, "model,dataset,score\nm,sst2,90\n") == 0
    q = "SELECT score, source, items_score, external_score FROM dataset_scores WHERE dataset = 'sst2'"
    assert query(db, q) == [(50.0, "items", 50.0, 90.0)]
    assert run(db, tmp_path, "model,dataset,score\nm,sst2,95\n", "--override") == 0  # re-import replaces
    assert query(db, q) == [(95.0, "external", 50.0, 95.0)]


def test_header_order_bom_and_a_suite_file_path(db, tmp_path):
    from benchmark.suites.suite import SUITES_DIR

    text = "\ufeffscore,Model,dataset\n12,m,c3\n"
    assert run(db, tmp_path, text, suite=str(SUITES_DIR / "moodbench-reference.toml")) == 0
    assert query(db, "SELECT suite, model, dataset, score FROM external_scores") == [
        ("moodbench-reference", "m", "c3", 12.0)]


@pytest.mark.parametrize("text, message", [
    ("model,dataset,score\nm,sst2,80\nm,nope,1\n", "scores.csv:3: dataset 'nope' is not in suite moodbench 1.0"),
    ("model,dataset,score\nm,sst2,101\n", "scores.csv:2: score 101 is outside 0-100"),
    ("model,dataset,score\nm,sst2,-0.5\n", "scores.csv:2: score -0.5 is outside 0-100"),
    ("model,dataset,score\nm,sst2,nan\n", "scores.csv:2: score nan is outside 0-100"),
    ("model,dataset,score\nm,sst2,high\n", "scores.csv:2: score 'high' is not a number"),
    ("model,dataset,score\nm,sst2\n", "scores.csv:2: expected 3 fields, got 2"),
    ("model,dataset,score\n,sst2,3\n", "scores.csv:2: empty model"),
    ('model,dataset,score\nm,sst2,1\n"a,b",sst2,3\n', "scores.csv:3: model 'a,b' holds a comma"),
    ("model,dataset,score\nx\x1b]0;t\x07,sst2,3\n", "scores.csv:2: model 'x\\x1b]0;t\\x07' holds a control character"),
    ("model,dataset,score\nm,sst2,1\nm,sst2,2\n", "scores.csv:3: m/sst2 already given on line 2"),
    ("model,dataset,points\nm,sst2,1\n", "scores.csv:1: header must be the columns model,dataset,score"),
    ("", "scores.csv: empty file"),
    ("model,dataset,score\n", "scores.csv: no score rows after the header"),
    ('model,dataset,score\nm,"sst2,1\n', "scores.csv"),
])
def test_bad_files_give_one_line_and_store_nothing(db, tmp_path, capsys, text, message):
    assert run(db, tmp_path, text) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1, err
    assert query(db, "SELECT count(*) FROM external_scores") == [(0,)]


def test_unknown_suite_and_missing_file(db, tmp_path, capsys):
    assert run(db, tmp_path, "model,dataset,score\nm,sst2,1\n", suite="nosuch") == 2
    assert "unknown suite 'nosuch'" in capsys.readouterr().err
    assert main(["import-scores", str(db), str(tmp_path / "absent.csv"), "--suite", "moodbench"]) == 2
    assert "absent.csv: no such file" in capsys.readouterr().err
    assert main(["import-scores", "--suite", "moodbench"]) == 2  # argparse usage error, no traceback


@pytest.mark.slow
def test_a_rejected_file_leaves_the_database_as_it_was(tmp_path, capsys):
    """It loaded the suite anyway (after which `report` asked for --suite)."""
    db = tmp_path / "fresh.duckdb"
    make_db(tmp_path, "fresh.duckdb").close()
    assert run(db, tmp_path, "model,dataset,score\nm,sst2,80\nm,nope,1\n") == 2
    assert "dataset 'nope' is not in suite" in capsys.readouterr().err
    assert query(db, "SELECT count(*) FROM suites") == [(0,)]
    assert run(db, tmp_path, "model,dataset,score\nm,sst2,80\n") == 0  # a good one loads suite and scores
    assert query(db, "SELECT count(DISTINCT suite), count(*) FROM suites") == [(1, 1)]


def test_a_missing_database_is_refused_not_created(tmp_path, capsys):
    typo = tmp_path / "resutls.duckdb"
    assert run(typo, tmp_path, "model,dataset,score\nm,sst2,80\n") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "resutls.duckdb does not exist" in err
    assert not typo.exists()


def test_imported_scores_leave_the_files_intervals_fresh(db, tmp_path):
    """A plain DuckDB reader of the file saw no bounds until another sweep."""
    assert run(db, tmp_path, "model,dataset,score\nm,sst2,80\nm,imdb,70\n") == 0
    assert query(db, "SELECT ci_low, ci_high FROM intervals WHERE node = 'sst2'") == [(80.0, 80.0)]
    assert query(db, "SELECT count(*) FROM leaderboard WHERE ci_low IS NULL") == [(0,)]


@pytest.mark.slow
def test_the_file_is_read_as_a_stream(db, tmp_path, monkeypatch):
    """A bad last line of a long file is found with memory for a chunk of rows, not for the file."""
    monkeypatch.setattr(import_scores_module, "CHUNK_ROWS", 500, raising=False)
    f = tmp_path / "big.csv"
    with f.open("w", encoding="utf-8") as out:
        out.write("model,dataset,score\n")
        for i in range(40_000):
            out.write(f"model-{i:06d},sst2,{i % 100}.5\n")
        out.write("m,sst2,high\n")
    size = f.stat().st_size
    tracemalloc.start()
    try:
        with pytest.raises(ScoreFileError, match="big.csv:40002: score 'high' is not a number"):
            con = duckdb.connect(str(db))
            try:
                import_scores_module.import_scores(con, "moodbench", f)
            finally:
                con.close()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < size, (peak, size)  # read whole, it took ten times the file's size
    assert query(db, "SELECT count(*) FROM external_scores") == [(0,)]


def test_create_starts_a_database_of_its_own(tmp_path, capsys):
    new = tmp_path / "scores.duckdb"
    assert run(new, tmp_path, "model,dataset,score\nm,sst2,80\n") == 2
    assert "give --create to start a new one" in capsys.readouterr().err and not new.exists()
    assert run(new, tmp_path, "model,dataset,score\nm,nope,80\n", "--create") == 2  # a bad file: nothing made
    assert not new.exists()
    assert run(new, tmp_path, "model,dataset,score\nm,sst2,80\n", "--create") == 0
    assert query(new, "SELECT model, dataset, score FROM external_scores") == [("m", "sst2", 80.0)]
    assert query(new, "SELECT count(*) FROM leaderboard WHERE model = 'm'") == [(1,)]

"""Export: every table and view of a real results file, in each format, row for row; bad input exits 2."""

from __future__ import annotations

import csv
import hashlib
import json

import duckdb
import pyarrow.parquet as pq
import pytest

from engine.cli import main
from tests.store.test_views_support import flat_suite, items, load_toml, make_db, metric, scored

SUITE = flat_suite({"vs": (None, ["dvs"]), "fo": (0.5, ["df1", "df2"]), "em": (0.5, ["dem"])},
                   gate="vs", tau=60, name="mini")


@pytest.fixture
def db(tmp_path):
    con = make_db(tmp_path)
    load_toml(con, tmp_path, SUITE)
    load_toml(con, tmp_path, flat_suite({"xx": (1.0, ["dother"])}, name="other"), file="other.toml")
    for d in ("dvs", "df1", "df2", "dem", "dother"):
        metric(con, d)
    for model in ("m1", "m2"):
        for d, s in (("dvs", 80), ("df1", 70), ("df2", 50), ("dem", 90), ("dother", 10)):
            scored(con, model, d, s)
    items(con, "m1", "df1", [1.0, None, 0.0], errors=2, start=10)
    con.execute("INSERT INTO models (name, provider, model_id, generation) VALUES ('m1', 'openai', 'x', '{}')")
    con.close()
    return tmp_path / "results.duckdb"


def catalog(path) -> dict[str, int]:
    """Every table and view DuckDB lists, with its row count."""
    con = duckdb.connect(str(path), read_only=True)
    names = [r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND NOT internal UNION ALL "
        "SELECT view_name FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal").fetchall()]
    counts = {n: con.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}
    con.close()
    return counts


def read(path, form: str) -> list[dict]:
    if form == "parquet":
        return pq.read_table(path).to_pylist()
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f)) if form == "csv" else [json.loads(line) for line in f if line.strip()]


@pytest.mark.parametrize("form", ["parquet", "csv", "jsonl"])
@pytest.mark.slow
def test_every_table_and_view_row_for_row(db, tmp_path, capsys, form):
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    out = tmp_path / "out" / form
    assert main(["export", str(db), "--format", form, "--out", str(out)]) == 0
    want = catalog(db)
    assert {"results", "leaderboard", "dataset_scores", "task_scores", "level_scores", "sub_ability_scores",
            "ability_scores", "dataset_coverage", "metric_values", "models"} <= set(want)
    assert {p.name for p in out.iterdir()} == {f"{n}.{form}" for n in want}
    printed = capsys.readouterr().out.splitlines()
    assert printed[-1] == f"{len(want)} files in {out}"
    for name, n in want.items():
        assert f"{out / (name + '.' + form)}  {n} rows" in printed
        rows = read(out / f"{name}.{form}", form)
        assert len(rows) == n, name
    board = {r["model"]: float(r["total"]) for r in read(out / f"leaderboard.{form}", form) if r["suite"] == "mini"}
    # m2: fo is the mean of df1 70 and df2 50; m1's df1 also has items 1, unparsed (0) and 0: mean 42.5
    assert board == pytest.approx({"m2": 0.5 * 60 + 0.5 * 90, "m1": 0.5 * (42.5 + 50) / 2 + 0.5 * 90})
    results = read(out / f"results.{form}", form)
    assert len(results) == 5 * 2 + 5 and {r["status"] for r in results} == {"ok", "error"}
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before  # read-only: the file is untouched


def test_suite_keeps_its_own_rows(db, tmp_path, capsys):
    out = tmp_path / "mini"
    assert main(["export", str(db), "--format", "jsonl", "--out", str(out), "--suite", "mini"]) == 0
    assert {r["suite"] for r in read(out / "leaderboard.jsonl", "jsonl")} == {"mini"}
    assert {r["dataset"] for r in read(out / "results.jsonl", "jsonl")} == {"dvs", "df1", "df2", "dem"}
    assert len(read(out / "models.jsonl", "jsonl")) == 1  # no suite or dataset column: whole


@pytest.mark.parametrize("argv, message", [
    (["{tmp}/absent.duckdb", "--out", "{tmp}/x"], "absent.duckdb: no such database"),
    (["{db}", "--format", "xlsx", "--out", "{tmp}/x"], "--format xlsx: choose one of parquet, csv, jsonl"),
    (["{db}", "--out", "{db}/sub"], "cannot write there"),
    (["{db}", "--out", "{tmp}/x", "--suite", "nosuch"], "suite 'nosuch' is not loaded in this database"),
    (["{tmp}/not-a-db.duckdb", "--out", "{tmp}/x"], "cannot open database"),
])
def test_bad_input_exits_2_with_one_line(db, tmp_path, capsys, argv, message):
    (tmp_path / "not-a-db.duckdb").write_text("hello")
    argv = [a.format(tmp=tmp_path, db=db) for a in argv]
    assert main(["export", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("error: ") and message in captured.err, captured.err
    assert captured.err.count("\n") == 1 and not captured.out


def test_relation_names_that_are_paths_are_skipped_and_nothing_lands_outside_out(db, tmp_path, capsys):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    con = duckdb.connect(str(db))
    for name in ("../../x", str(outside / "abs"), "a/b", "..", "new\nline"):
        con.execute(f'CREATE TABLE "{name}" AS SELECT \'the sender chose this\' AS row')
    con.close()
    out = tmp_path / "deep" / "out"
    before = sorted(p for p in tmp_path.rglob("*"))
    assert main(["export", str(db), "--format", "csv", "--out", str(out)]) == 1  # relations not exported
    captured = capsys.readouterr()
    skipped = [line for line in captured.err.splitlines() if "not a plain name" in line]
    assert len(skipped) == 5 and all(line.startswith("warning: ") for line in skipped)
    made = sorted(set(tmp_path.rglob("*")) - set(before))
    assert all(p == out or p.is_relative_to(out) for p in made if p != out.parent), made
    assert not (tmp_path / "x.csv").exists() and list(outside.iterdir()) == []
    assert {p.name for p in out.iterdir()} >= {"results.csv", "leaderboard.csv"}
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_an_export_never_lands_on_the_database(tmp_path, capsys):
    con = make_db(tmp_path, "results.parquet")
    con.close()
    db = tmp_path / "results.parquet"
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    assert main(["export", str(db), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is the results database" in err
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert not list(tmp_path.glob("*.parquet.*"))  # nothing written beside it either

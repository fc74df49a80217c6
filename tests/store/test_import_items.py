"""Per-item results imported from files (store/estimates/import_items.py): rows like a sweep's, checked before writing."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from store.side import extractions
from store.results import identity
from store.results import resume
from store.db import connect
from store.estimates.import_items import ItemFileError, check_items, read_items, write_items
from store.results.writer import insert_rows
from tests.store.helpers import row

CSV = 'model,dataset,item_id,score,response,prediction,gold\nm,ds,1,1,"Answer: B\nbecause",B,B\nm,ds,2,0.25,,,\n'


def _write(path: Path, text: str) -> Path:
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _import(tmp_path, path: Path, db="r.duckdb") -> int:
    con = connect(tmp_path / db)
    try:
        return write_items(con, read_items(path), source=path, suite_version="1.0", identity="imp123")
    finally:
        con.close()


def _rows(tmp_path, db="r.duckdb", sql="SELECT model, dataset, item_id, sample, status, score, response, "
                                      "prediction, gold, prompt_hash, scorer_version, extracted_by, identity "
                                      "FROM results ORDER BY item_id"):
    con = connect(tmp_path / db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("name", ["items.csv", "items.csv.gz"])
def test_csv_rows_look_like_a_sweeps_and_are_marked_imported(tmp_path, name):
    assert _import(tmp_path, _write(tmp_path / name, CSV)) == 2
    assert _rows(tmp_path) == [
        ("m", "ds", "1", 0, "ok", 1.0, "Answer: B\nbecause", '"B"', '"B"', "imported", "imported", "imported", "imp123"),
        ("m", "ds", "2", 0, "ok", 0.25, None, None, None, "imported", "imported", "imported", "imp123"),
    ]
    assert _rows(tmp_path, sql="SELECT identity, detail->>'provider' FROM identities") == [("imp123", "imported")]


def test_jsonl_and_parquet(tmp_path):
    lines = [{"model": "m", "dataset": "ds", "item_id": 7, "score": 1, "prediction": ["B", "D"]},
             {"model": "m", "dataset": "ds", "item_id": "8", "score": 0.0}]
    f = tmp_path / "a.jsonl"
    f.write_bytes(b"\n".join(orjson.dumps(x) for x in lines) + b"\n\n")
    assert _import(tmp_path, f) == 2
    assert _rows(tmp_path, sql="SELECT item_id, score, prediction FROM results ORDER BY 1") == [
        ("7", 1.0, '["B","D"]'), ("8", 0.0, None)]
    p = tmp_path / "a.parquet"
    pq.write_table(pa.table({"model": ["x", "x"], "dataset": ["ds", "ds"], "item_id": ["1", "2"],
                             "score": [0.5, 1.0]}), p)
    assert _import(tmp_path, p, db="p.duckdb") == 2


@pytest.mark.parametrize("text, message", [
    ("model,dataset,score\nm,d,1\n", "items.csv:1: missing column 'item_id'"),
    ("model,dataset,item_id,score,note\nm,d,1,1,x\n", "items.csv:1: unknown column 'note'"),
    ("model,dataset,item_id,score\nm,d,1,1\nm,d,2,1.5\n", "items.csv:3: score 1.5 is outside 0..1"),
    ("model,dataset,item_id,score\nm,d,1,yes\n", "items.csv:2: score 'yes' is not a number"),
    ("model,dataset,item_id,score\nm,d,1,nan\n", "items.csv:2: score nan is outside 0..1"),
    ("model,dataset,item_id,score\nm,d,1,1\n,d,2,1\n", "items.csv:3: empty or invalid model"),
    ("model,dataset,item_id,score\nm,d,1\n", "items.csv:2: expected 4 fields, got 3"),
    ('model,dataset,item_id,score,response\nm,d,1,1,"two\nlines"\nm,d,2,0,x\nm,d,1,0,y\n',
     "items.csv:5: m/d/1 already given on line 2"),
    ("", "items.csv: empty file"),
    ("model,dataset,item_id,score\n", "items.csv: no rows"),
    # A model's name keeps the models.toml rule (benchmark/names.py): the first row of the bad name is named.
    ('model,dataset,item_id,score\nm,d,1,1\n"gpt, big",d,1,1\n', "items.csv:3: model 'gpt, big' holds a comma"),
    ("model,dataset,item_id,score\nm,d,1,1\nm,d,2,1\nx\x1b[2J,d,1,0\n",
     "items.csv:4: model 'x\\x1b[2J' holds a control character"),
])
def test_bad_csv_names_the_line_and_writes_nothing(tmp_path, text, message):
    f = _write(tmp_path / "items.csv", text)
    with pytest.raises(ItemFileError) as e:
        read_items(f)
    assert str(e.value).startswith(f"{tmp_path}/{message}")
    assert "\n" not in str(e.value)


def test_bad_jsonl_parquet_and_unreadable_files(tmp_path):
    f = tmp_path / "a.jsonl"
    f.write_text('{"model": "m", "dataset": "d", "item_id": "1", "score": 1}\n{"model": "m", "dataset"\n')
    with pytest.raises(ItemFileError, match=r"a.jsonl:2: not JSON"):
        read_items(f)
    f.write_text('{"model": "m", "dataset": "d", "item_id": "1", "score": true}\n')
    with pytest.raises(ItemFileError, match=r"a.jsonl:1: score True is not a number"):
        read_items(f)
    p = tmp_path / "a.parquet"
    pq.write_table(pa.table({"model": ["x", "x"], "dataset": ["d", "d"], "item_id": ["1", "2"], "score": [0.5, None]}), p)
    with pytest.raises(ItemFileError, match=r"a.parquet: row 2: score None is not a number"):
        read_items(p)
    bad = tmp_path / "b.csv.gz"
    bad.write_bytes(b"not gzip at all")
    with pytest.raises(ItemFileError, match=r"b.csv.gz: cannot read"):
        read_items(bad)
    with pytest.raises(ItemFileError, match=r"unknown format"):
        read_items(_write(tmp_path / "a.txt", "x"))


def test_known_datasets_are_checked_against_their_items(tmp_path):
    items = read_items(_write(tmp_path / "i.csv", "model,dataset,item_id,score\nm,sst2,1,1\nm,sst2,99,1\nm,x,5,0\n"))
    check_items(items, {"sst2": {"1", "99"}}, "moodbench")
    with pytest.raises(ItemFileError, match=r"i.csv:3: item '99' is not an item of dataset sst2 \(suite moodbench\)"):
        check_items(items, {"sst2": {"1", "2"}}, "moodbench")


def test_resume_counts_imported_rows_as_answered_and_skips_their_stamps(tmp_path):
    _import(tmp_path, _write(tmp_path / "items.csv", CSV))
    con = connect(tmp_path / "r.duckdb")
    try:
        assert resume.done_counts(con, ["m"], {"ds": ["1", "2", "3"]}) == {("m", "ds"): 2}
        assert resume.stamp_conflicts(con, {("m", "ds"): ("p1", "s1")}) == []
        assert identity.stored_identities(con, {("m", "ds"): "abc"}) == []
        assert con.execute("SELECT n_unparsed FROM dataset_item_stats").fetchone() == (0,)
        # the [extractor] model is never asked to read them (item 2 has no response; item 1 one but no prediction)
        con.execute("UPDATE results SET prediction = NULL")
        assert extractions.pending_count(con, "x", "v", "run", ["m"], {"ds": ["1", "2"]}, []) == 0
        assert resume.delete_rows(con, ["m"], ["ds"]) == 2  # what --fresh does
    finally:
        con.close()


def test_a_reimport_replaces_but_a_sweeps_row_is_kept(tmp_path):
    f = _write(tmp_path / "items.csv", CSV)
    _import(tmp_path, f)
    _import(tmp_path, _write(tmp_path / "again.csv", "model,dataset,item_id,score\nm,ds,2,1\n"))
    assert _rows(tmp_path, sql="SELECT item_id, score FROM results ORDER BY 1") == [("1", 1.0), ("2", 1.0)]
    con = connect(tmp_path / "r.duckdb")
    insert_rows(con, [row(model="m", dataset="ds", item_id="3")])
    con.close()
    clash = _write(tmp_path / "clash.csv", "model,dataset,item_id,score\nm,ds,1,0\nm,ds,3,0\n")
    with pytest.raises(ItemFileError, match=r"clash.csv:3: m/ds/3 was answered by a sweep"):
        _import(tmp_path, clash)
    assert _rows(tmp_path, sql="SELECT item_id, score FROM results ORDER BY 1") == [
        ("1", 1.0), ("2", 1.0), ("3", 1.0)]  # the whole file refused: item 1 kept too


def test_a_jsonl_line_with_an_unknown_key_is_named(tmp_path):
    f = tmp_path / "a.jsonl"
    f.write_text('{"model": "m", "dataset": "d", "item_id": "1", "score": 1}\n'
                 '{"model": "m", "dataset": "d", "item_id": "2", "score": 1, "notes": "x"}\n')
    with pytest.raises(ItemFileError, match=r"a.jsonl:2: unknown column 'notes'"):
        read_items(f)

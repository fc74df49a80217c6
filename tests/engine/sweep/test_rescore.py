"""engine/sweep/rescore.py on a hand-made DuckDB file: rows read again in place, old values kept, views follow."""

from __future__ import annotations

import json

import duckdb
import pytest
from msgspec.structs import replace

from benchmark.dataset import DatasetBase, Item, Message, MetricSpec, Scored
from engine.sweep.rescore import Tally, rescore_dataset
from store.db import connect
from store.results.writer import insert_rows
from tests.store.helpers import row


class LetterDataset(DatasetBase):
    """Reads "Answer: X" or a bare letter; a response cut off at the length limit is unanswered (what the
    extractor's rules do with finish_reason 'length')."""

    id = "letters"
    language = "en"
    scorer_version = "s2"
    metrics = (MetricSpec("accuracy", "mean", primary=True),)
    samples = 1

    def __init__(self):
        self.finish_reasons = []

    def prompt_hash(self):
        return "p1"

    def records(self, data_dir):
        return iter([(f"i{k}", {"gold": "AB"[k % 2]}) for k in range(4)])

    def render(self, item_id, raw):
        return Item(item_id, (Message("user", "q"),), raw["gold"], meta={"g": raw["gold"]})

    def score(self, item, response, *, finish_reason=None):
        self.finish_reasons.append(finish_reason)
        text = response.strip()
        readable = text.startswith("Answer:") or text in ("A", "B")
        pred = text[-1] if readable and finish_reason != "length" else None
        return Scored(pred, float(pred == item.meta["g"]))


def _db(tmp_path) -> duckdb.DuckDBPyConnection:
    con = connect(tmp_path / "r.duckdb")
    con.execute("INSERT INTO dataset_metrics VALUES ('letters', 'accuracy', 'mean', 'score', NULL, NULL, true, 's1')")
    rows = [
        # i0: read as B by an older, sloppier extractor; the current one reads A (right).
        replace(row(dataset="letters", item_id="i0", prediction="B", gold="A", score=0.0), response="Answer: A"),
        # i1: unread before; read now (B, right).
        replace(row(dataset="letters", item_id="i1", prediction=None, gold="B", score=0.0), response="Answer: B"),
        # i2: cut off: read as A before, unanswered now.
        replace(row(dataset="letters", item_id="i2", prediction="A", gold="A", score=1.0), response="Answer: A",
                finish_reason="length"),
        # i3: unchanged reading, only the scorer stamp moves.
        row(dataset="letters", item_id="i3", prediction="A", gold="B", score=0.0),
        # gone: an item no longer in the data: kept as it is.
        row(dataset="letters", item_id="gone", prediction="A", gold="A", score=1.0),
        # another model, not chosen.
        row(model="other", dataset="letters", item_id="i1", prediction=None, gold="B", score=0.0),
    ]
    insert_rows(con, rows)
    return con


def test_rescore_updates_in_place_and_keeps_the_old_values(tmp_path):
    con = _db(tmp_path)
    before = con.execute("SELECT value FROM metric_values WHERE model = 'm'").fetchone()[0]
    assert before == 2 / 5
    ds, tally = LetterDataset(), Tally()
    con.execute("INSERT INTO rescores VALUES ('rs1', now(), NULL, 'test', 0, 0, 'running')")
    rescore_dataset(con, ds, ["m"], tmp_path, "rs1", tally)

    got = dict((r[0], r[1:]) for r in con.execute(
        "SELECT item_id, prediction, score, scorer_version, extracted_by FROM results WHERE model = 'm'").fetchall())
    assert got["i0"] == ('"A"', 1.0, "s2", "rules")
    assert got["i1"] == ('"B"', 1.0, "s2", "rules")
    assert got["i2"] == (None, 0.0, "s2", None)
    assert got["i3"] == ('"A"', 0.0, "s2", "rules")
    assert got["gone"] == ('"A"', 1.0, "s1", "rules")  # not in the data: untouched
    assert con.execute("SELECT prediction, scorer_version FROM results WHERE model = 'other'").fetchone() == (None, "s1")
    assert "length" in ds.finish_reasons  # the stored finish reason reached the scorer

    hist = dict((r[0], r[1:]) for r in con.execute(
        "SELECT item_id, prediction, score, scorer_version, extracted_by, rescore_id FROM results_history").fetchall())
    assert hist == {"i0": ('"B"', 0.0, "s1", "rules", "rs1"), "i1": (None, 0.0, "s1", None, "rs1"),
                    "i2": ('"A"', 1.0, "s1", "rules", "rs1"), "i3": ('"A"', 0.0, "s1", "rules", "rs1")}
    assert (tally["rows"], tally["changed"], tally["missing"]) == (4, 4, 1)
    assert (tally["unparsed_to_parsed"], tally["parsed_to_unparsed"], tally["answer_changed"],
            tally["score_changed"]) == (1, 1, 1, 3)
    # The views read results: the metric follows (i0, i1 right; gone right; i2 unanswered; i3 wrong).
    assert con.execute("SELECT value FROM metric_values WHERE model = 'm'").fetchone()[0] == 3 / 5
    assert con.execute("SELECT scorer_version FROM dataset_metrics WHERE dataset = 'letters'").fetchone()[0] == "s2"

    # A second pass changes nothing and stores no history.
    again = Tally()
    rescore_dataset(con, ds, ["m"], tmp_path, "rs2", again)
    assert (again["rows"], again["changed"]) == (4, 0)
    assert con.execute("SELECT count(*) FROM results_history WHERE rescore_id = 'rs2'").fetchone()[0] == 0


def test_a_stored_model_reading_of_the_same_answer_is_kept(tmp_path):
    """An answer the rules cannot read keeps the extractor model's reading, but only of that very text."""
    con = _db(tmp_path)
    con.execute("UPDATE results SET response = 'the second one', prediction = NULL, score = 0 WHERE item_id = 'i1'")
    con.execute("UPDATE results SET response = 'no idea', prediction = NULL, score = 0 WHERE item_id = 'i3'")
    for item, text, codes in (("i1", "the second one", ["B"]), ("i3", "an older answer", ["B"])):
        con.execute("INSERT INTO extractions (model, dataset, item_id, sample, extractor, prompt_version, answer_md5, "
                    "status, codes, attempts, finished_at) VALUES ('m', 'letters', ?, 0, 'x', 'v', md5(?), 'ok', ?, 1, "
                    "now())", [item, text, json.dumps(codes)])
    rescore_dataset(con, LetterDataset(), ["m"], tmp_path, "rs1", Tally())
    got = dict((r[0], r[1:]) for r in con.execute(
        "SELECT item_id, prediction, score, extracted_by FROM results WHERE model = 'm'").fetchall())
    assert got["i1"] == ('"B"', 1.0, "model")
    assert got["i3"] == (None, 0.0, None)  # the reading was of another text


@pytest.mark.slow
def test_worker_processes_write_what_scoring_in_this_process_writes(tmp_path):
    """`rescore --workers 2` scores pages in spawned processes: the stored rows and the tally are the same."""
    import shutil
    from datetime import UTC, datetime

    from benchmark import registry
    from engine.sweep.plan import load_dataset
    from engine.sweep.rescore import RescoreOptions, rescore
    from store.db import connect
    from store.results.writer import ResultRow, insert_rows
    from tests.benchmark.realdata import need
    from tests.conftest import DATA_DIR

    need("sst2")
    ds = registry.get("sst2")
    assert ds is not None
    now, rows = datetime.now(UTC), []
    for n, item in enumerate(load_dataset(ds, DATA_DIR, 120, 0).items):
        for m, text in enumerate(("The answer is (A).", "B", "I cannot tell.", f"Answer: {'AB'[n % 2]}")):
            rows.append(ResultRow(model=f"m{m}", dataset="sst2", item_id=item.id, sample=0, status="ok",
                                  error_class=None, error=None, attempts=1, response=text, prediction=None,
                                  gold=item.gold, score=0.0, measures=None, latency_ms=1.0, input_tokens=1,
                                  output_tokens=1, model_version="v", prompt_hash="p", suite_version="x",
                                  scorer_version="old", started_at=now, finished_at=now))
    one, two = tmp_path / "one.duckdb", tmp_path / "two.duckdb"
    con = connect(one)
    insert_rows(con, rows)
    con.close()
    shutil.copy(one, two)
    for db, workers in ((one, 1), (two, 2)):
        assert rescore(RescoreOptions(db=db, data_dir=DATA_DIR, quiet=True, workers=workers)) == 0
    read = "SELECT model, item_id, prediction, score, measures, scorer_version, extracted_by FROM results ORDER BY 1, 2"
    a, b = connect(one, read_only=True), connect(two, read_only=True)
    try:
        got = a.execute(read).fetchall()
        assert got == b.execute(read).fetchall() and len(got) == len(rows)
        assert {r[5] for r in got} == {ds.scorer_version}
        assert a.execute("SELECT count(*) FROM results_history").fetchone() == \
            b.execute("SELECT count(*) FROM results_history").fetchone()
    finally:
        a.close()
        b.close()
    from store.hierarchy.bootstrap import compute_intervals

    con = connect(one)
    try:  # the file's intervals were refreshed by the rescore: nothing left to recompute
        assert con.execute("SELECT count(*) FROM interval_state").fetchone() == (1,)
        assert not compute_intervals(con).recomputed
    finally:
        con.close()


def test_imported_rows_are_not_read_again(tmp_path):
    """Rows of import-items hold scores made elsewhere: rescore leaves them as imported."""
    con = connect(tmp_path / "r.duckdb")
    imported = replace(row(model="elsewhere", dataset="letters", item_id="i0", prediction=None, gold="A", score=0.7),
                       response="Answer: A", prompt_hash="imported", scorer_version="imported", extracted_by="imported")
    insert_rows(con, [imported])
    tally = Tally()
    rescore_dataset(con, LetterDataset(), ["elsewhere"], tmp_path, "rs1", tally)
    assert tally["rows"] == 0
    assert con.execute("SELECT score, scorer_version FROM results").fetchall() == [(0.7, "imported")]
    con.close()


def test_runs_a_killed_process_left_running_are_marked_interrupted_by_the_next_rescore(tmp_path):
    from store.results import history
    from store.results import runs

    from engine.sweep.rescore import RescoreOptions, rescore

    con = connect(tmp_path / "r.duckdb")
    insert_rows(con, [row(dataset="synthetic", item_id="s000001", prediction="A", gold="B", score=0.0)])
    history.start(con, "killed", "rescore (killed)")  # a rescore killed with -9 never wrote its outcome
    runs.start_run(con, "sweep-kill", command="m.toml", engine_version="x", suite="s", suite_version="1")
    con.close()
    rescore(RescoreOptions(db=tmp_path / "r.duckdb", datasets=["synthetic"], workers=1, quiet=True))
    con = duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True)
    assert dict(con.execute("SELECT rescore_id = 'killed', outcome FROM rescores").fetchall()) == {
        True: "interrupted", False: "complete"}
    assert con.execute("SELECT outcome FROM runs").fetchall() == [("interrupted",)]
    con.close()


def test_models_selects_a_stored_name_holding_a_comma(tmp_path, capsys):
    """A name stored before names were checked (a comma, an edge space) is still chosen with --models."""
    from engine.cli import main

    db = tmp_path / "r.duckdb"
    con = connect(db)
    insert_rows(con, [row(model=m, dataset="synthetic", item_id="s000001", prediction="A", gold="B", score=1.0)
                      for m in ("org,model", "other")])
    con.close()
    assert main(["rescore", str(db), "--models", "org,model", "--datasets", "synthetic", "--workers", "1",
                 "--quiet"]) == 0
    con = duckdb.connect(str(db), read_only=True)
    assert dict(con.execute("SELECT model, score FROM results").fetchall()) == {"org,model": 0.0, "other": 1.0}
    con.close()
    assert main(["rescore", str(db), "--models", "org", "--quiet"]) == 2  # a part of it is not a name
    assert "no stored rows for model(s) org" in capsys.readouterr().err

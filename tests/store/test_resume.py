from store.results import resume
from store.db import connect
from store.results.writer import insert_rows
from tests.store.helpers import row


def test_done_counts_only_ok_rows_of_planned_items(tmp_path):
    con = connect(tmp_path / "r.duckdb")
    insert_rows(con, [row(item_id="a"), row(item_id="b"), row(item_id="c", status="error"),
                      row(item_id="zz"),  # stored but no longer planned (e.g. a smaller --limit)
                      row(model="other", item_id="a")])
    counts = resume.done_counts(con, ["m"], {"d": ["a", "b", "c"]})
    assert counts == {("m", "d"): 2}
    assert resume.done_keys(con, "m", "d") == {("a", 0), ("b", 0), ("zz", 0)}


def test_stamp_conflicts(tmp_path):
    con = connect(tmp_path / "r.duckdb")
    insert_rows(con, [row(item_id="a", prompt_hash="old"), row(item_id="b")])
    assert resume.stamp_conflicts(con, {("m", "d"): ("p1", "s1")}) == ["m/d: 1 stored rows with prompt old -> p1"]
    assert resume.stamp_conflicts(con, {("m", "other"): ("p9", "s9")}) == []


def test_delete_rows_is_scoped(tmp_path):
    con = connect(tmp_path / "r.duckdb")
    insert_rows(con, [row(item_id="a"), row(dataset="keep", item_id="a"), row(model="keep", item_id="a")])
    assert resume.delete_rows(con, ["m"], ["d"]) == 1
    assert con.execute("SELECT count(*) FROM results").fetchone()[0] == 2

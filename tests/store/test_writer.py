import anyio

from store.db import connect
from store.results.writer import Writer, insert_rows
from tests.store.helpers import row


def test_rows_roundtrip_with_json_columns(tmp_path):
    con = connect(tmp_path / "r.duckdb")
    insert_rows(con, [row(item_id="a", prediction=["B", "C"], gold=["B"], measures={"tp": 1, "fp": 1, "fn": 0}),
                      row(item_id="b", prediction=None, score=0.0)])
    got = con.execute("SELECT item_id, prediction, gold, measures->>'tp', prediction IS NULL FROM results ORDER BY 1").fetchall()
    assert got == [("a", '["B","C"]', '["B"]', "1", False), ("b", None, '"A"', None, True)]


def test_retried_error_row_is_replaced_and_attempts_add_up(tmp_path):
    con = connect(tmp_path / "r.duckdb")
    insert_rows(con, [row(item_id="a", status="error", attempts=5, error="HTTP 503")])
    insert_rows(con, [row(item_id="a", attempts=2)])
    assert con.execute("SELECT count(*), any_value(status), any_value(attempts), any_value(error) FROM results").fetchone() == (1, "ok", 7, None)


def test_a_batch_mixing_new_and_stored_keys_keeps_every_row(tmp_path):
    # The plain INSERT tried first fails on the stored key: nothing of it may stay, and the upsert that
    # follows stores the new rows and adds up the retried one's attempts.
    con = connect(tmp_path / "r.duckdb")
    insert_rows(con, [row(item_id="a", status="error", attempts=3, error="HTTP 503"), row(item_id="b")])
    insert_rows(con, [row(item_id="c"), row(item_id="a", attempts=2), row(item_id="d", score=0.0)])
    got = con.execute("SELECT item_id, status, attempts, score FROM results ORDER BY 1").fetchall()
    assert got == [("a", "ok", 5, 1.0), ("b", "ok", 1, 1.0), ("c", "ok", 1, 1.0), ("d", "ok", 1, 0.0)]


async def test_writer_flushes_everything_on_close(tmp_path):
    con = connect(tmp_path / "r.duckdb")
    w = Writer(con, flush_s=0.05, batch_max=7)
    async with anyio.create_task_group() as tg:
        tg.start_soon(w.run)
        for i in range(100):
            await w.put(row(item_id=f"i{i}"))
        await w.close()
    assert w.rows_written == 100
    assert con.execute("SELECT count(*) FROM results").fetchone()[0] == 100


async def test_writer_commits_within_the_flush_interval(tmp_path):
    path = tmp_path / "r.duckdb"
    con = connect(path)
    w = Writer(con, flush_s=0.05)
    async with anyio.create_task_group() as tg:
        tg.start_soon(w.run)
        await w.put(row(item_id="x"))
        await anyio.sleep(0.5)
        # Visible to another connection before the writer closes: it is committed.
        other = con.cursor()
        assert other.execute("SELECT count(*) FROM results").fetchone()[0] == 1
        await w.close()


def test_metric_values_mean_and_micro_f1_over_ok_rows(tmp_path):
    con = connect(tmp_path / "r.duckdb")
    con.execute("INSERT INTO dataset_metrics VALUES ('acc', 'accuracy', 'mean', 'score', NULL, NULL, true, 's1'),"
                " ('ml', 'micro_f1', 'micro_f1', 'tp', 'fp', 'fn', true, 's1')")
    insert_rows(con, [
        row(dataset="acc", item_id="1", score=1.0), row(dataset="acc", item_id="2", score=0.0),
        row(dataset="acc", item_id="3", score=1.0), row(dataset="acc", item_id="4", status="error"),
        # tp=3 fp=1 fn=2 -> F1 = 6 / (6 + 3) = 0.6667
        row(dataset="ml", item_id="1", measures={"tp": 2, "fp": 0, "fn": 1}),
        row(dataset="ml", item_id="2", measures={"tp": 1, "fp": 1, "fn": 1}),
    ])
    got = dict(((d), (n, ok, round(cov, 4), round(s, 4))) for d, n, ok, cov, s in
               con.execute("SELECT dataset, n_items, n_ok, coverage, 100 * value FROM dataset_coverage "
                           "JOIN metric_values USING (model, dataset)").fetchall())
    assert got["acc"] == (4, 3, 0.75, round(200 / 3, 4))  # the error is excluded, not scored wrong
    assert got["ml"] == (2, 2, 1.0, round(200 / 3, 4))


def test_unreadable_database_is_a_clear_error(tmp_path):
    import pytest

    from store.db import StoreError

    bad = tmp_path / "bad.duckdb"
    bad.write_text("not a database")
    with pytest.raises(StoreError, match="cannot open database"):
        connect(bad)
    assert bad.read_text() == "not a database"  # nothing was overwritten


def test_coverage_counts_planned_items_never_attempted(tmp_path):
    con = connect(tmp_path / "r.duckdb")
    insert_rows(con, [row(item_id=str(i)) for i in range(30)])
    con.execute("INSERT INTO planned_items VALUES ('m', 'd', 120, NULL)")
    assert con.execute("SELECT n_items, n_ok, coverage FROM dataset_coverage").fetchall() == [(120, 30, 0.25)]

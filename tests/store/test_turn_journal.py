"""The turns' journal: each returned turn written before the episode's next call, replayed into `turns` when
the database is next opened for writing (a kill -9 between the call and the table's batch loses nothing)."""

from __future__ import annotations

from datetime import datetime, timezone

from store.db import connect
from store.results.turns import TurnJournal, TurnRow, insert_turns, journal_path, read_journal


def _row(turn: int, content: str | None = "hello") -> TurnRow:
    at = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)
    return TurnRow(model="m1", dataset="d", item_id="i1", sample=0, session=0, turn=turn, role="companion",
                   status="ok", content=content, emotion=None, reason=None, ended=None, error_class=None, error=None,
                   attempts=1, input_tokens=3, output_tokens=4, latency_ms=12.5, speaker="m1", model_version=None,
                   prompt_hash="h", identity=None, run_id="r", started_at=at, finished_at=at)


def test_a_record_cut_short_by_a_kill_is_left_out(tmp_path):
    path = tmp_path / "x.turns-journal"
    journal = TurnJournal(path)
    rows = [_row(1), _row(2, "你好"), _row(3, None)]
    for r in rows:
        journal.append(r)
    journal.close(remove=False)
    assert read_journal(path) == rows
    data = path.read_bytes()
    path.write_bytes(data[:-3])  # the last write cut short
    assert read_journal(path) == rows[:2]
    assert read_journal(tmp_path / "none") == []


def test_opening_the_database_replays_a_left_journal_once(tmp_path):
    db = tmp_path / "r.duckdb"
    connect(db).close()
    journal = TurnJournal(journal_path(db))
    journal.append(_row(1))
    journal.append(_row(1, "asked again, kept last"))
    journal.append(_row(2))
    journal.close(remove=False)
    con = connect(db)
    try:
        got = con.execute("SELECT turn, content, started_at FROM turns ORDER BY turn").fetchall()
    finally:
        con.close()
    assert [(t, c) for t, c, _ in got] == [(1, "asked again, kept last"), (2, "hello")]
    assert got[0][2] == _row(1).started_at
    assert not journal_path(db).exists()
    con = connect(db)  # nothing left to replay
    assert con.execute("SELECT count(*) FROM turns").fetchone() == (2,)
    con.close()


def test_a_run_that_stored_everything_removes_its_journal(tmp_path):
    path = tmp_path / "x.turns-journal"
    journal = TurnJournal(path)
    journal.append(_row(1))
    journal.close(remove=True)
    assert not path.exists()


def test_a_row_the_table_has_from_the_same_run_is_not_counted_twice(tmp_path):
    db = tmp_path / "r.duckdb"
    con = connect(db)
    insert_turns(con, [_row(1)])  # flushed by the killed run before the kill
    con.close()
    journal = TurnJournal(journal_path(db))
    journal.append(_row(1))
    journal.append(_row(2))
    journal.close(remove=False)
    con = connect(db)
    try:
        assert con.execute("SELECT turn, attempts FROM turns ORDER BY turn").fetchall() == [(1, 1), (2, 1)]
    finally:
        con.close()

"""The snapshot beside a database: a readable copy with the views, refreshed on a bounded schedule."""

from __future__ import annotations

import duckdb
import pytest

from store.db import StoreError, connect
from store.snapshot import Snapshots, open_for_reading, snapshot_path, write_snapshot


def test_snapshot_is_a_read_only_copy_with_tables_and_views(tmp_path):
    db = tmp_path / "r.duckdb"
    con = connect(db)
    con.execute("INSERT INTO runs (run_id, outcome) VALUES ('r1', 'running')")
    cur = con.cursor()
    write_snapshot(cur, db)
    con.execute("INSERT INTO runs (run_id, outcome) VALUES ('r2', 'running')")
    snap = duckdb.connect(str(snapshot_path(db)), read_only=True)
    assert snap.execute("SELECT run_id FROM runs").fetchall() == [("r1",)]  # as of the copy
    assert snap.execute("SELECT count(*) FROM leaderboard").fetchone() == (0,)
    snap.close()
    write_snapshot(cur, db)  # replaced atomically, no temporary file left
    assert sorted(p.name for p in tmp_path.iterdir() if "snapshot" in p.name) == ["r.duckdb.snapshot"]
    con.close()


def test_open_for_reading_is_read_only_and_says_when_it_reads_the_snapshot(tmp_path):
    db = tmp_path / "r.duckdb"
    connect(db).close()
    con, note = open_for_reading(db)
    with pytest.raises(duckdb.Error):
        con.execute("CREATE TABLE x (a INT)")
    con.close()
    assert note is None


def test_a_locked_database_without_snapshot_is_one_clear_error(tmp_path):
    # The lock is per process: another process holds it.
    import subprocess
    import sys

    db = tmp_path / "r.duckdb"
    code = (f"import duckdb, time; c = duckdb.connect({str(db)!r}); "
            "c.execute('CREATE TABLE results (a INT)'); print('ok', flush=True); time.sleep(30)")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ok"
        with pytest.raises(StoreError, match="no snapshot yet"):
            open_for_reading(db)
        duckdb.connect(str(snapshot_path(db))).execute("CREATE TABLE results AS SELECT 1 AS a").close()
        con, note = open_for_reading(db)
        assert "being written by a running sweep" in note and "(1 result rows)" in note
        con.close()
    finally:
        holder.kill()
        holder.wait()


def test_refresh_schedule_waits_for_new_rows_and_scales_with_cost():
    plan = Snapshots("x.duckdb", every_s=5)
    assert not plan.due(0, 0.0)  # nothing written yet: no copy
    assert plan.due(10, 0.0)
    plan.done(10, cost_s=2.0, now=0.0)
    assert not plan.due(10, 100.0)  # no new rows
    assert not plan.due(20, 9.9) and plan.due(20, 10.0)  # 5 x a 2 s copy
    plan.done(20, cost_s=0.1, now=10.0)
    assert not plan.due(30, 14.9) and plan.due(30, 15.0)  # at least every_s


def test_a_read_only_connection_sees_this_versions_views_not_the_stored_ones(tmp_path):
    db = tmp_path / "r.duckdb"
    con = connect(db)
    con.execute("CREATE OR REPLACE VIEW leaderboard AS SELECT 'stale' AS x")  # as an older engine left it
    con.close()
    con, _ = open_for_reading(db)
    assert "model" in [d[0] for d in con.execute("SELECT * FROM leaderboard").description]
    con.close()
    assert duckdb.connect(str(db), read_only=True).execute("SELECT * FROM leaderboard").fetchall() == [("stale",)]


def _contents(path, tables=("results", "runs", "judgements")):
    c = duckdb.connect(str(path), read_only=True)
    try:
        return {t: sorted(c.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in tables}
    finally:
        c.close()


@pytest.mark.parametrize("outside", [False, True], ids=["here", "child process"])
def test_a_refresh_brings_in_what_changed_as_a_whole_copy_would(tmp_path, monkeypatch, outside):
    from store import snapshot

    monkeypatch.setattr(snapshot, "OUTSIDE_BYTES", 0 if outside else 2**40)
    from store.results.writer import RESULT_KEY, insert_rows
    from tests.store.helpers import row

    db = tmp_path / "r.duckdb"
    con = connect(db)
    insert_rows(con, [row(item_id=f"i{i}") for i in range(5)])
    con.execute("INSERT INTO runs (run_id, outcome) VALUES ('r1', 'running')")
    cur = con.cursor()
    write_snapshot(cur, db)  # the first copy: whole
    # Then: new rows, a row replaced (a retried error: attempts add up in the database), the run's row changed.
    insert_rows(con, [row(item_id="i5"), row(item_id="i1", score=0.0)])
    insert_rows(con, [row(item_id="i1", score=0.5)])
    con.execute("UPDATE runs SET outcome = 'complete' WHERE run_id = 'r1'")
    changed = {("m", "d", "i5", 0), ("m", "d", "i1", 0)}
    write_snapshot(cur, db, {"results": (RESULT_KEY, set(changed))})
    refreshed = _contents(snapshot_path(db))
    # The same keys again (a flush journaled twice) change nothing: rows are read back, not replayed.
    write_snapshot(cur, db, {"results": (RESULT_KEY, set(changed))})
    assert _contents(snapshot_path(db)) == refreshed
    write_snapshot(cur, db)
    assert refreshed == _contents(snapshot_path(db))
    assert len(refreshed["results"]) == 6 and refreshed["runs"][0][:1] == ("r1",)
    con.close()


@pytest.mark.parametrize("outside", [False, True], ids=["here", "child process"])
def test_a_key_missed_by_the_journal_is_not_invented_and_a_new_table_forces_a_whole_copy(tmp_path, monkeypatch,
                                                                                        outside):
    from store import snapshot

    monkeypatch.setattr(snapshot, "OUTSIDE_BYTES", 0 if outside else 2**40)
    from store.results.writer import RESULT_KEY, insert_rows
    from tests.store.helpers import row

    db = tmp_path / "r.duckdb"
    con = connect(db)
    cur = con.cursor()
    write_snapshot(cur, db)
    insert_rows(con, [row(item_id="a")])
    write_snapshot(cur, db, {"results": (RESULT_KEY, set())})  # nothing journaled: nothing brought in
    assert _contents(snapshot_path(db))["results"] == []
    con.execute("CREATE TABLE later (x INT)")  # the schema moved on: the refresh copies everything
    write_snapshot(cur, db, {"results": (RESULT_KEY, set())})
    assert len(_contents(snapshot_path(db))["results"]) == 1
    con.close()


def test_the_journal_takes_each_flushed_key_once_and_starts_empty_again():
    from store.results.writer import RESULT_KEY
    from tests.store.helpers import row

    class W:
        table, key, on_flush = "results", RESULT_KEY, None

    plan, w = Snapshots("x.duckdb"), W()
    plan.track(w)
    w.on_flush([row(item_id="a"), row(item_id="a"), row(item_id="b")])
    assert plan.take() == {"results": (RESULT_KEY, {("m", "d", "a", 0), ("m", "d", "b", 0)})}
    assert plan.take() == {"results": (RESULT_KEY, set())}


def test_the_final_snapshot_is_written_even_before_the_first_tick(tmp_path):
    db = tmp_path / "r.duckdb"
    con = connect(db)
    con.execute("INSERT INTO runs (run_id, outcome) VALUES ('old', 'complete')")
    write_snapshot(con.cursor(), db)  # an earlier sweep's snapshot
    con.execute("INSERT INTO runs (run_id, outcome) VALUES ('new', 'complete')")
    plan = Snapshots(db)
    plan.final(con, rows=3)  # the sweep stored 3 rows and ended before keep_fresh copied anything
    assert {r[0] for r in _contents(snapshot_path(db), ("runs",))["runs"]} == {"old", "new"}
    con.close()


def test_the_final_whole_copy_is_the_checkpointed_file_with_what_is_committed(tmp_path):
    """At a sweep's end the whole copy is the database's file once checkpointed: every committed row, not
    what a transaction still open elsewhere wrote; the same tables, views and rows as a copy through
    DuckDB, which a database that is no file (or a refused CHECKPOINT) still gets."""
    from store import snapshot
    from store.results.writer import insert_rows
    from tests.store.helpers import row

    db = tmp_path / "r.duckdb"
    con = connect(db)
    insert_rows(con, [row(item_id=f"i{i}") for i in range(3)])
    con.execute("INSERT INTO runs (run_id, outcome) VALUES ('r1', 'complete')")
    other = con.cursor()
    other.execute("BEGIN TRANSACTION")
    other.execute("INSERT INTO runs (run_id, outcome) VALUES ('open', 'running')")
    con.execute("INSERT INTO runs (run_id, outcome) VALUES ('r2', 'complete')")
    tmp = tmp_path / "copy"
    assert snapshot._copy_checkpointed(con.cursor(), tmp)
    assert tmp.read_bytes() == db.read_bytes()  # checkpointed: the file is the committed state
    tmp.unlink()
    write_snapshot(con.cursor(), db, None, everything=True)
    other.execute("COMMIT")
    got = _contents(snapshot_path(db))
    assert len(got["results"]) == 3 and {r[0] for r in got["runs"]} == {"r1", "r2"}
    views = "SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1"
    snap = duckdb.connect(str(snapshot_path(db)), read_only=True)
    try:
        assert snap.execute(views).fetchall() == con.execute(views).fetchall()
        assert snap.execute("SELECT count(*) FROM leaderboard").fetchone() == (0,)
    finally:
        snap.close()
    mem = duckdb.connect(":memory:")
    mem.execute("CREATE TABLE runs (run_id VARCHAR)")
    mem.execute("INSERT INTO runs VALUES ('m1')")
    assert not snapshot._copy_checkpointed(mem, tmp) and not tmp.exists()
    write_snapshot(mem, tmp_path / "mem.duckdb", None, everything=True)  # through DuckDB
    assert _contents(snapshot_path(tmp_path / "mem.duckdb"), ("runs",)) == {"runs": [("m1",)]}
    con.close()


def test_a_database_named_with_quotes_gets_its_snapshot(tmp_path):
    db = tmp_path / """it's "mine".duckdb"""
    con = connect(db)
    con.execute("INSERT INTO runs (run_id, outcome) VALUES ('r1', 'complete')")
    write_snapshot(con.cursor(), db)
    con.close()
    snap = duckdb.connect(str(snapshot_path(db)), read_only=True)
    assert snap.execute("SELECT run_id FROM runs").fetchall() == [("r1",)]
    snap.close()


def test_git_ignores_the_snapshot_files_beside_a_database():
    """The quickstart left quickstart.duckdb.snapshot untracked in the checkout."""
    import shutil
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")
    snap = snapshot_path("quickstart.duckdb")
    names = [snap.name, snap.name + ".tmp", snap.name + ".tmp.wal"]
    done = subprocess.run(["git", "check-ignore", "--no-index", *names], cwd=root, capture_output=True, text=True)
    assert sorted(done.stdout.split()) == sorted(names)


def test_a_refresh_that_fails_in_its_process_says_why_and_leaves_no_file(tmp_path, monkeypatch):
    from store import snapshot

    monkeypatch.setattr(snapshot, "OUTSIDE_BYTES", 0)
    from store.results.writer import RESULT_KEY, insert_rows
    from tests.store.helpers import row

    db = tmp_path / "r.duckdb"
    con = connect(db)
    cur = con.cursor()
    write_snapshot(cur, db)
    snapshot_path(db).write_bytes(b"not a database")  # the copy the refresh starts from is broken
    insert_rows(con, [row(item_id="a")])
    with pytest.raises(OSError, match="snapshot refresh failed"):
        write_snapshot(cur, db, {"results": (RESULT_KEY, {("m", "d", "a", 0)})})
    assert sorted(p.name for p in tmp_path.iterdir() if "snapshot" in p.name) == ["r.duckdb.snapshot"]
    con.close()


@pytest.mark.parametrize("outside", [False, True], ids=["here", "child process"])
def test_rows_are_read_back_from_the_earliest_journaled_finish_on(tmp_path, monkeypatch, outside):
    from store import snapshot

    monkeypatch.setattr(snapshot, "OUTSIDE_BYTES", 0 if outside else 2**40)
    from datetime import timedelta

    from store.results.writer import RESULT_KEY, insert_rows
    from tests.store.helpers import NOW, row

    class W:
        table, key, on_flush = "results", RESULT_KEY, None

    def at(r, t):
        r.finished_at = t
        return r

    db = tmp_path / "r.duckdb"
    con = connect(db)
    cur = con.cursor()
    insert_rows(con, [at(row(item_id="old"), NOW - timedelta(hours=1))])
    write_snapshot(cur, db)
    plan, w = Snapshots(db), W()
    plan.track(w)
    later = [at(row(item_id="new"), NOW), at(row(item_id="old", score=0.0), NOW + timedelta(seconds=5))]
    insert_rows(con, later)
    w.on_flush(later)
    journal, since = plan.take_all()
    assert since == {"results": NOW - timedelta(seconds=1)}
    write_snapshot(cur, db, journal, since=since)
    assert _contents(snapshot_path(db))["results"] == sorted(con.execute("SELECT * FROM results").fetchall(), key=repr)
    # A key journaled from before `since` is not read back: the filter is applied (and prunes the scan).
    insert_rows(con, [at(row(item_id="past"), NOW - timedelta(hours=2))])
    write_snapshot(cur, db, {"results": (RESULT_KEY, {("m", "d", "past", 0)})}, since=since)
    assert "past" not in {r[2] for r in _contents(snapshot_path(db))["results"]}
    assert plan.take_all()[1] == {}  # taken: the next period starts without a bound
    con.close()

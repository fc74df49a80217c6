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


def test_the_final_snapshot_is_written_whatever_the_schedule_saw(tmp_path):
    """A sweep shorter than a tick left the previous sweep's snapshot in place."""
    db = tmp_path / "r.duckdb"
    con = connect(db)
    plan = Snapshots(db)
    con.execute("INSERT INTO runs (run_id, outcome) VALUES ('r1', 'complete')")
    plan.final(con, plan.rows)  # the schedule never counted a row
    snap = duckdb.connect(str(snapshot_path(db)), read_only=True)
    assert snap.execute("SELECT run_id FROM runs").fetchall() == [("r1",)]
    snap.close()
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

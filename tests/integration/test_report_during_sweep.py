"""Reading while a sweep writes: `report` reads the sweep's snapshot and says how old it is; it opens
databases read-only (a read-only file reports); plain DuckDB reads the snapshot."""

from __future__ import annotations

import re
import stat
import subprocess
import sys
import time

from simulator.server import SimServerProcess
from tests.integration.helpers import ROOT, query, run_cli


def models(path, url):
    path.write_text(f'[[models]]\nname = "slow"\nprovider = "openai"\nbase_url = "{url}"\nmodel = "slow"\n'
                    "max_tokens = 8\nmax_concurrency = 2\n")
    return path


def test_report_reads_while_a_sweep_writes_and_shows_progress(tmp_path):
    db = tmp_path / "r.duckdb"
    snap = tmp_path / "r.duckdb.snapshot"
    with SimServerProcess(mode="gold", latency_ms=100) as sim:
        m = models(tmp_path / "models.toml", sim.base_url)
        proc = subprocess.Popen([sys.executable, "-m", "engine", "sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "300", "--quiet"],
                                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            counts = []
            deadline = time.monotonic() + 60
            while len(counts) < 2 and time.monotonic() < deadline:
                time.sleep(1.0)
                assert proc.poll() is None, proc.communicate()
                if not snap.exists():
                    continue
                # The database itself is locked by the sweep: plain DuckDB reads the snapshot.
                (n,), = query(snap, "SELECT count(*) FROM results")
                if not n:
                    continue
                r = run_cli("report", str(db))
                assert r.returncode == 0, r.stderr
                seen = re.search(r"being written by a running sweep; showing its snapshot from \d+ s ago "
                                 r"\((\d+) result rows\)", " ".join(r.stdout.split()))
                assert seen, r.stdout
                if not counts or int(seen.group(1)) > counts[-1]:
                    counts.append(int(seen.group(1)))
            assert len(counts) == 2 and counts[0] < counts[1] < 300  # progress, seen during the sweep
        finally:
            proc.terminate()
            proc.communicate(timeout=60)
    assert proc.returncode == 130
    # After the sweep the snapshot holds its final state, runs row included.
    assert query(snap, "SELECT outcome FROM runs") == [("interrupted",)]
    assert query(snap, "SELECT count(*) FROM results") == query(db, "SELECT count(*) FROM results")


def test_report_opens_a_read_only_database(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold") as sim:
        m = models(tmp_path / "models.toml", sim.base_url)
        r = run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "10", "--quiet")
        assert r.returncode == 0, r.stderr
    before = db.read_bytes()
    db.chmod(stat.S_IRUSR | stat.S_IRGRP)
    tmp_path.chmod(stat.S_IRUSR | stat.S_IXUSR)  # no WAL file could be created beside it either
    try:
        r = run_cli("report", str(db), "--suite", "moodbench")
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip()
    finally:
        tmp_path.chmod(stat.S_IRWXU)
        db.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert db.read_bytes() == before

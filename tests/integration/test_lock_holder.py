"""A database another process holds: the one-line error names that process, whatever it is (not always a sweep)."""

from __future__ import annotations

import subprocess
import sys

from tests.integration.helpers import ROOT, run_cli
from tests.integration.report_db import free_port
from tests.engine.report.mini_db import mini_db


def test_a_writer_blocked_by_serve_is_told_it_is_serve(tmp_path):
    mini_db(tmp_path, {"m1": [0.7]}).close()
    db = tmp_path / "results.duckdb"
    scores = tmp_path / "scores.csv"
    scores.write_text("model,dataset,score\nm2,dvs,50\n")
    serve = subprocess.Popen([sys.executable, "-m", "engine", "serve", str(db), "--port", str(free_port())],
                             cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert serve.stderr is not None and "serving http://" in serve.stderr.readline()
        r = run_cli("import-scores", str(db), str(scores), "--suite", "mini")
        assert r.returncode == 2
        assert r.stderr.count("\n") == 1 and f"is in use by process {serve.pid} (" in r.stderr, r.stderr
        assert f"-m engine serve {db}" in r.stderr and "sweep" not in r.stderr
    finally:
        serve.terminate()
        serve.wait(30)

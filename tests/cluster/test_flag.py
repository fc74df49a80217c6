"""`--cluster` without Ray, and no Ray without `--cluster` (no cluster needed: these run everywhere)."""

from __future__ import annotations

import subprocess
import sys

from tests.cluster.conftest import ROOT

SCRIPT = """
import sys
sys.modules["ray"] = None  # as if the cluster extra were not installed
from engine.cli import main
sys.exit(main(["sweep", sys.argv[1], "--datasets", "synthetic", "--limit", "1", "--cluster", "local"]))
"""


def test_cluster_flag_without_ray_exits_2_saying_how_to_install(tmp_path):
    models = tmp_path / "models.toml"
    models.write_text('[[models]]\nname = "m"\nprovider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n')
    r = subprocess.run([sys.executable, "-c", SCRIPT, str(models)], cwd=tmp_path, capture_output=True, text=True,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == ["error: --cluster needs Ray, an optional extra: pip install -e '.[cluster]'"]
    assert not (tmp_path / "results.duckdb").exists()  # said before anything is planned or opened


def test_the_sweep_without_the_flag_never_imports_ray():
    code = ("import sys, engine.cli, engine.sweep.flags, engine.sweep.sweep, engine.run.local_server; "
            "from engine.cli import parse; parse(['sweep', 'm.toml']); print('ray' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.stdout.strip() == "False", r.stderr

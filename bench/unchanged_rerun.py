"""Behaviour unchanged across two trees: a sweep stored by OLD's code, rerun by NEW's with nothing to ask.

    git worktree add ../old <commit>
    ENGINE_SHARED_DIR=../shared .venv/bin/python -m bench.unchanged_rerun ../old .

A rerun across a scorer or prompt change stops, as it should (exit 2, said): compare trees that share
stamps. Prints the requests the rerun sent (none expected) and, table by table (results without timestamps,
judgements, dataset_scores, leaderboard, interval_bounds), whether the rows are identical, and where they are not,
whether they are equal to 12 significant digits (a view's float sums may differ in the last bit between two reads).
"""
import json, os, shutil, subprocess, sys, tempfile, time, urllib.request
from pathlib import Path

old, new = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
py = sys.executable
data = str((Path(os.environ.get("ENGINE_SHARED_DIR", "../shared")) / "datasets").resolve())
work = Path(tempfile.mkdtemp())
sys.path.insert(0, str(new))
from simulator.process import SimServerProcess

DATASETS = "sst2,mnli,lcsts,goemotions,ceval,emobench1,truthfulqa"
with SimServerProcess(mode="letter") as sim:
    models = work / "models.toml"
    models.write_text(f'''[[models]]
name = "m-letter"
provider = "openai"
base_url = "{sim.base_url}"
model = "m-letter"
max_concurrency = 8
[[models]]
name = "m-judge-too"
provider = "openai"
base_url = "{sim.base_url}"
model = "judge-sim"
max_concurrency = 8

[judge]
name = "sim-judge"
provider = "openai"
base_url = "{sim.base_url}"
model = "judge-sim"
max_concurrency = 8
''')
    db = work / "r.duckdb"
    env = {**os.environ, "PYTHONPATH": str(old)}
    cmd = [py, "-m", "engine", "sweep", str(models), str(db), "--data-dir", data, "--datasets", DATASETS,
           "--limit", "25", "--quiet"]
    p = subprocess.run(cmd, cwd=old, env=env, capture_output=True, text=True)
    print("old sweep exit", p.returncode, p.stderr[-400:] if p.returncode else "")
    snap = work / "old.duckdb"
    shutil.copy(db, snap)
    stats = lambda: json.load(urllib.request.urlopen(sim.base_url.rsplit("/v1", 1)[0] + "/_stats"))
    before = stats()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=new, env={**os.environ, "PYTHONPATH": str(new)}, capture_output=True, text=True)
    print("new rerun exit", p.returncode, f"{time.perf_counter() - t0:.2f}s", p.stderr[-600:] if p.returncode else "")
    after = stats()
    print("requests during rerun:", {k: after[k] for k in after if after[k] != before.get(k)} or "none")

import duckdb
a, b = duckdb.connect(str(snap), read_only=True), duckdb.connect(str(db), read_only=True)
def rows(c, sql):
    return sorted(c.execute(sql).fetchall(), key=repr)
def rounded(rs):
    return sorted((tuple(float(f"{v:.12g}") if isinstance(v, float) else v for v in r) for r in rs), key=repr)
def common(view):  # a column only the newer tree's views have (such as `estimated`) is left out
    cols = [[r[0] for r in c.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                                     "ORDER BY ordinal_position", [view]).fetchall()] for c in (a, b)]
    return f"SELECT {', '.join(x for x in cols[0] if x in cols[1])} FROM {view}"
for name, sql in [("results", "SELECT * EXCLUDE (started_at, finished_at) FROM results"),
                  ("judgements", "SELECT * FROM judgements"),
                  ("dataset_scores", common("dataset_scores")),
                  ("leaderboard", common("leaderboard")),
                  ("intervals", "SELECT * FROM interval_bounds")]:
    x, y = rows(a, sql), rows(b, sql)
    # A view read twice from one file can differ in a float's last bit (DuckDB sums in parallel, in no fixed
    # order: leaderboard's main_coverage flips between 0.050375 and 0.05037499999999999): said, not hidden.
    near = "" if x == y else f", equal to 12 significant digits={rounded(x) == rounded(y)}"
    print(f"{name}: {len(x)} rows old, {len(y)} new, identical={x == y}{near}")

"""Time the bootstrap intervals (store/hierarchy/bootstrap.py) over a full-size synthetic sweep.

    .venv/bin/python bench/intervals_bench.py [--models 30] [--items 300] [--replicates 1000]

Builds the same DuckDB file as bench/views_bench.py (30 models x the suite's
datasets x 300 items, 2 % error rows, micro-F1 datasets with JSON measures),
then times compute_intervals from scratch, a second call with unchanged inputs
(the fingerprint check only), and reading the `intervals` and `leaderboard` views.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.views_bench import build_db
from benchmark.suites.suite import load_suite
from store.hierarchy.bootstrap import compute_intervals


def _timed(fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _load() -> str:
    try:
        return "load average " + " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "load average unknown"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=30)
    ap.add_argument("--items", type=int, default=300)
    ap.add_argument("--replicates", type=int, default=1000)
    ap.add_argument("--suite", default="moodbench")
    ap.add_argument("--db", help="DuckDB file to build (default: a temporary file)")
    args = ap.parse_args()

    suite = load_suite(args.suite)
    tmp = tempfile.TemporaryDirectory()
    db = Path(args.db) if args.db else Path(tmp.name) / "bench.duckdb"
    con = build_db(db, suite, args.models, args.items)
    n_rows = con.execute("SELECT count(*) FROM results").fetchone()[0]
    print("command: " + " ".join([".venv/bin/python bench/intervals_bench.py", *sys.argv[1:]]))
    print(f"duckdb {duckdb.__version__}; {n_rows:,} item rows ({args.models} models x {len(suite.datasets)} "
          f"datasets x {args.items} items), {args.replicates} replicates")
    cpu0 = time.process_time()
    first, run = _timed(lambda: compute_intervals(con, replicates=args.replicates))
    cpu = time.process_time() - cpu0
    print(f"compute_intervals, from scratch      {first:8.2f} s  (CPU {cpu:.2f} s over all threads; {_load()})")
    for phase, s in run.phases.items():
        print(f"    {phase:<33}{s:8.2f} s")
    again, run = _timed(lambda: compute_intervals(con, replicates=args.replicates))
    print(f"compute_intervals, inputs unchanged  {again:8.2f} s  (recomputed: {run.recomputed})")
    t, rows = _timed(lambda: con.execute("SELECT * FROM intervals").fetchall())
    print(f"SELECT * FROM intervals              {t:8.2f} s  ({len(rows)} rows)")
    t, rows = _timed(lambda: con.execute("SELECT * FROM leaderboard").fetchall())
    print(f"SELECT * FROM leaderboard            {t:8.2f} s  ({len(rows)} rows)")
    con.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

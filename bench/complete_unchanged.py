"""Outputs for complete sweeps unchanged across two trees: each tree builds the same database with its own code
(views_bench's synthetic sweep: errors, micro-F1 datasets, a veto), computes the intervals, and writes what a
user reads; the files are compared byte by byte.

    mkdir ../old && git archive main | tar -x -C ../old
    .venv/bin/python bench/complete_unchanged.py ../old . [--models 8] [--items 40] [--replicates 200]

Written: report as text, markdown and csv; the drill-down of a model as text and csv; compare --json of two
models; the rows of dataset_scores, task_scores, ability_scores, leaderboard and intervals (without a column
only the newer tree has, such as `estimated`) and interval_bounds.
"""

from __future__ import annotations

import argparse
import contextlib
import filecmp
import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path

VIEWS = ("dataset_scores", "task_scores", "ability_scores", "leaderboard", "intervals", "interval_bounds")
NEW_COLUMNS = ("estimated",)  # columns the newer tree adds; left out so the rows compare


def _either(*modules: str):
    """The first of these modules the tree has."""
    import importlib

    for name in modules:
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError:
            continue
    raise ModuleNotFoundError(modules[0])


def dump(out: Path, models: int, items: int, replicates: int) -> None:
    """In the tree this file is run from: build, compute, write every output into `out`."""
    sys.path.insert(0, str(Path.cwd()))
    import duckdb

    # One thread: DuckDB's parallel float sums and unordered results differ in the last bits and order
    # from run to run of the same tree; on one thread a tree repeats itself exactly.
    connect = duckdb.connect

    def one_thread(*args, config=None, **kw):
        return connect(*args, config={**(config or {}), "threads": 1}, **kw)

    duckdb.connect = one_thread
    from bench.views_bench import build_db
    from engine.cli import main

    # Each under its name in either layout (store/ and benchmark/ moved into wings).
    load_suite = _either("benchmark.suites.suite", "benchmark.suite").load_suite
    compute_intervals = _either("store.hierarchy.bootstrap", "store.bootstrap").compute_intervals

    db = out / "r.duckdb"
    con = build_db(db, load_suite("moodbench"), models, items)
    con.execute("UPDATE suites SET tau = 45")  # some models vetoed
    compute_intervals(con, replicates=replicates)
    for view in VIEWS:
        cols = [c for (c,) in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                                          "ORDER BY ordinal_position", [view]).fetchall() if c not in NEW_COLUMNS]
        rows = con.execute(f"SELECT {', '.join(cols)} FROM {view} ORDER BY ALL").fetchall()
        (out / f"{view}.txt").write_text("\n".join(map(repr, rows)) + "\n")
    con.close()
    # model-3 and model-5 with the default 8 models; the last ones with fewer (names run model-0 .. model-{n-1}).
    drilled, other = f"model-{min(3, models - 1)}", f"model-{min(5, models - 1)}"
    runs = {"report.txt": ["report", str(db)], "report.md": ["report", str(db), "--format", "markdown"],
            "report.csv": ["report", str(db), "--format", "csv"],
            "drill.txt": ["report", str(db), "--model", drilled],
            "drill.csv": ["report", str(db), "--model", drilled, "--format", "csv"],
            "compare.json": ["compare", str(db), "model-1", other, "--replicates", "200", "--json"]}
    for name, argv in runs.items():
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(argv) == 0, argv
        (out / name).write_text(buf.getvalue())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--models", type=int, default=8)
    ap.add_argument("--items", type=int, default=40)
    ap.add_argument("--replicates", type=int, default=200)
    ap.add_argument("--dump", help=argparse.SUPPRESS)  # the worker: write the outputs here
    a = ap.parse_args()
    if a.models < 3:
        ap.error("--models must be at least 3 (a drill-down and a comparison of two models are written)")
    if a.dump:
        dump(Path(a.dump), a.models, a.items, a.replicates)
        return 0
    work = Path(tempfile.mkdtemp())
    for side in ("old", "new"):
        (work / side).mkdir()
        tree = Path(getattr(a, side)).resolve()
        subprocess.run([sys.executable, str(Path(__file__).resolve()), a.old, a.new, "--dump", str(work / side),
                        "--models", str(a.models), "--items", str(a.items), "--replicates", str(a.replicates)],
                       cwd=tree, check=True, env={**os.environ, "COLUMNS": "100"})
    names = sorted(p.name for p in (work / "old").iterdir() if p.suffix != ".duckdb")
    same, differ, _ = filecmp.cmpfiles(work / "old", work / "new", names, shallow=False)
    for n in names:
        print(f"{n:<22}{'identical' if n in same else 'DIFFERENT'}")
    print(f"{len(same)} of {len(names)} identical ({work})")
    return 0 if not differ else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""A model looping on one 64 KB line beside a healthy model (1.5 s answers, 5 s timeout, no retries).

    ENGINE_SHARED_DIR=/path/to/shared .venv/bin/python -m bench.long_answer [--items 8] [--kb 64]

Both answer `--items` COPA items (from `<ENGINE_SHARED_DIR>/datasets`, or `--data-dir`) on the
simulated server; the looping model's every answer is "The answer is A. " repeated over one line.
Prints the sweep's wall time and exit status, the healthy model's rows by status (every one
should be ok: its calls never wait on the looping answers' scoring) and its slowest call from
request to stored row, and the looping model's rows by status and error class (ok, or `scorer`
when the scoring cap stopped one).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from simulator.server import SimServerProcess

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--items", type=int, default=8)
    p.add_argument("--kb", type=int, default=64, help="length of the looping answer, in KB")
    p.add_argument("--data-dir", type=Path,
                   default=Path(os.environ.get("ENGINE_SHARED_DIR", ROOT.parent / "shared")) / "datasets")
    args = p.parse_args()
    loop = ("The answer is A. " * (args.kb * 1024 // 17 + 1))[: args.kb * 1024]
    tmp = Path(tempfile.mkdtemp(prefix="bench-long-answer-"))
    db, models = tmp / "r.duckdb", tmp / "models.toml"
    profiles = {"loop": {"mode": f"fixed:{loop}"}, "healthy": {"latency_ms": 1500, "mode": "letter"}}
    with SimServerProcess(profiles=profiles) as sim:
        common = f'provider = "openai"\nbase_url = "{sim.base_url}"\ntimeout_s = 5\nmax_retries = 0\nmax_concurrency = 8\n'
        models.write_text(f'[[models]]\nname = "loop"\nmodel = "loop"\nmax_tokens = {args.kb * 300}\n{common}\n'
                          f'[[models]]\nname = "healthy"\nmodel = "healthy"\n{common}\n')
        cmd = [sys.executable, "-m", "engine", "sweep", str(models), "--db", str(db), "--data-dir", str(args.data_dir),
               "--datasets", "copa", "--limit", str(args.items), "--quiet"]
        t0 = time.monotonic()
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        wall = time.monotonic() - t0
    if r.returncode != 0:
        print(r.stderr[-2000:])
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT model, status, coalesce(error_class, ''), count(*) FROM results GROUP BY ALL "
                       "ORDER BY 1, 2, 3").fetchall()
    (slowest,), = con.execute("SELECT max(epoch(finished_at) - epoch(started_at)) FROM results "
                              "WHERE model = 'healthy'").fetchall()
    con.close()
    print(f"# command: .venv/bin/python -m bench.long_answer --items {args.items} --kb {args.kb}")
    print(f"{args.items} items each, a {args.kb} KB looping line beside a 1.5 s model: exit {r.returncode}, "
          f"{wall:.1f} s wall; " + "; ".join(f"{m} {s}{'/' + c if c else ''} {n}" for m, s, c, n in rows)
          + f"; the healthy model's slowest call took {slowest:.1f} s (timeout 5 s)")


if __name__ == "__main__":
    main()

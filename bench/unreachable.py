"""A sweep of two models, one on a port where nothing listens, with the default give-up time.

    .venv/bin/python -m bench.unreachable [--items 300] [--unreachable-after-s 60]

Prints the sweep's wall time and exit status, how long the live model took,
and what was stored for the dead one (nothing: its items stay unasked); then
starts a server on the dead port and runs the same command again, printing
what it asked. Before the circuit breaker, 64 items on a refused port took
760 s (every item's 8 retries with backoff), and the sweep waited for them.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from simulator.server import SimServerProcess

ROOT = Path(__file__).resolve().parents[1]


def _model(name: str, url: str, extra: str) -> str:
    return (f'[[models]]\nname = "{name}"\nprovider = "openai"\nbase_url = "{url}"\nmodel = "{name}"\n'
            f'max_tokens = 8\n{extra}\n')


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--items", type=int, default=300)
    p.add_argument("--unreachable-after-s", type=float, default=None, help="default: the engine's (60 s)")
    args = p.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tmp = Path(tempfile.mkdtemp(prefix="bench-unreachable-"))
    db, models = tmp / "r.duckdb", tmp / "models.toml"
    extra = f"unreachable_after_s = {args.unreachable_after_s}" if args.unreachable_after_s else ""
    cmd = [sys.executable, "-m", "engine", "sweep", str(models), "--db", str(db), "--datasets", "synthetic",
           "--limit", str(args.items), "--quiet"]
    with SimServerProcess(mode="gold", latency_ms=50, jitter_ms=20) as live:
        models.write_text(_model("live", live.base_url, "max_concurrency = 8")
                          + _model("dead", f"http://127.0.0.1:{port}/v1", extra))
        t0 = time.monotonic()
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        wall = time.monotonic() - t0
    con = duckdb.connect(str(db), read_only=True)
    rows = dict(con.execute("SELECT model, count(*) FROM results GROUP BY 1").fetchall())
    (live_s,), = con.execute("SELECT epoch(max(finished_at)) - epoch(min(started_at)) FROM results "
                             "WHERE model = 'live'").fetchall()
    con.close()
    print(f"first run: exit {r.returncode}, {wall:.1f} s wall; live: {rows.get('live', 0)} rows in {live_s:.1f} s; "
          f"dead: {rows.get('dead', 0)} rows stored")
    print("  " + "\n  ".join(line for line in r.stderr.splitlines() if "unreachable" in line or "reached" in line))
    with SimServerProcess(mode="gold", port=port) as revived:
        t0 = time.monotonic()
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        wall = time.monotonic() - t0
        stats = revived.stats()
    print(f"second run (port answers): exit {r.returncode}, {wall:.1f} s wall; asked {stats['total']} "
          f"({dict(stats['by_model'])})")


if __name__ == "__main__":
    main()

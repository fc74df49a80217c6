"""Cost of the read-only snapshot a sweep writes beside its database (store/snapshot.py).

    python -m bench.snapshot_bench [--models 10] [--items 50000]

Builds a database of models x items completed rows (as the resume benchmark
does), then times `write_snapshot` a few times and prints the file sizes and
the interval the sweep would keep between copies (at least 5 s, or ten times
a copy's duration).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bench.throughput import seed_completed, write_models
from store.db import connect
from store.snapshot import Snapshots, snapshot_path, write_snapshot


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--items", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db, mfile = Path(tmp) / "big.duckdb", Path(tmp) / "models.toml"
        write_models(mfile, "http://127.0.0.1:9/v1", args.models, 8)
        t0 = time.perf_counter()
        seed_completed(db, mfile, args.models, args.items)
        print(f"built {args.models * args.items:,} rows in {time.perf_counter() - t0:.1f} s; "
              f"{db.stat().st_size / 1e6:.1f} MB")
        con = connect(db)
        cur = con.cursor()
        costs = [write_snapshot(cur, db) for _ in range(args.repeat)]
        con.close()
        plan = Snapshots()
        plan.done(0, max(costs), 0.0)
        print(f"snapshot: {min(costs):.2f} s best, {max(costs):.2f} s worst of {args.repeat}; "
              f"{snapshot_path(db).stat().st_size / 1e6:.1f} MB; next copy after {plan.next_at:.1f} s")


if __name__ == "__main__":
    main()

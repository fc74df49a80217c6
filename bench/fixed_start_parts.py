"""CPU of what only a new file pays at a sweep's start and end, in the tree it is run from (alternate two trees
for a before/after that load cannot skew: it is CPU time, medians of 5).

    cd TREE && PYTHONPATH=. python /path/to/bench/fixed_start_parts.py FILE.duckdb

FILE is a database a `sweep --limit 1` left (bench/README.md, "The fixed start on a new file, third pass").
Printed: compute_intervals (forced) on a copy of it, the end's snapshot (the whole copy, then close), connect()
on a new file (a copy of the schema template).
"""

import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, ".")
from store import snapshot  # noqa: E402 (the tree's own, after the path)
from store.db import connect  # noqa: E402
from store.hierarchy.bootstrap import compute_intervals  # noqa: E402


def cpu(f) -> float:
    c = time.process_time()
    f()
    return time.process_time() - c


def main() -> None:
    bounds, snap, new = [], [], []
    with tempfile.TemporaryDirectory() as d:
        connect(os.path.join(d, "warm.duckdb")).close()  # imports and the template, once
        for i in range(5):
            p = os.path.join(d, f"new{i}.duckdb")
            new.append(cpu(lambda: connect(p).close()))
            os.unlink(p)
            shutil.copy(sys.argv[1], p)
            con = connect(p)
            bounds.append(cpu(lambda: compute_intervals(con, force=True)))
            con.execute(f"INSERT INTO runs (run_id, outcome) VALUES ('x{i}', 'complete')")
            snap.append(cpu(lambda: (snapshot.Snapshots(p).final(con, 1), con.close())))

    def med(xs: list[float]) -> float:
        return sorted(xs)[len(xs) // 2]

    print(f"compute_intervals {med(bounds):.3f}  final snapshot + close {med(snap):.3f}  "
          f"connect (new file) {med(new):.3f} s CPU (medians of 5, load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()

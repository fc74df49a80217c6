"""Time `import-items` on a million rows and `estimate` on 30 models x 60 datasets, through the command line.

    .venv/bin/python bench/estimates_bench.py [--rows 1000000] [--models 30] [--datasets 60] [--items 300]

1. import-items: a CSV of --rows item rows (model, dataset, item_id, score, response), 0/1 scores
   drawn from a 2PL; the time of `python -m engine import-items DB FILE` (the process included).
2. estimate: a database holding --models models that answered every item of --datasets
   datasets of --items items and --models more that answered a seeded 10 % of each; the time of
   `python -m engine estimate DB --json` for the partial ones, first (the item models are fitted
   and stored) and again (they are read back).
Prints wall and CPU time and the machine's load average: on a shared 2-core machine at load 8-10 the
wall time is 3-4 x the CPU time.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> str:
    """Wall time and the child's CPU time (user + system) of one command, the process included."""
    t0, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run([sys.executable, "-m", "engine", *args], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    if r.returncode != 0:
        sys.exit(f"{args[0]} failed: {r.stderr.strip()[-300:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return f"{time.perf_counter() - t0:.1f} s wall, {cpu:.1f} s CPU"


def _matrix_csv(path: Path, models: int, datasets: int, items: int, shown: float, partial: int,
                response: bool) -> int:
    rng = np.random.default_rng(0)
    n = 0
    with open(path, "w") as fh:
        fh.write("model,dataset,item_id,score" + (",response\n" if response else "\n"))
        for d in range(datasets):
            b = rng.normal(0, 1, items)
            theta = rng.normal(0, 1, models + partial)
            right = rng.random((models + partial, items)) < 1 / (1 + np.exp(b - theta[:, None]))
            for m in range(models + partial):
                k = items if m < models else max(2, round(shown * items))
                tail = ",Answer: A" if response else ""
                fh.writelines(f"model-{m:03d},ds-{d:02d},item-{i:04d},{int(right[m, i])}{tail}\n" for i in range(k))
                n += k
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--models", type=int, default=30)
    ap.add_argument("--datasets", type=int, default=60)
    ap.add_argument("--items", type=int, default=300)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "items.csv"
        per = -(-a.rows // (a.models * a.datasets))  # items per dataset for about --rows rows
        n = _matrix_csv(big, a.models, a.datasets, per, 1.0, 0, response=True)
        s = _run("import-items", str(Path(tmp) / "big.duckdb"), str(big))
        print(f"import-items: {n:,} rows ({big.stat().st_size / 1e6:.0f} MB CSV): {s} "
              f"(load average {os.getloadavg()[0]:.1f})")
        small = Path(tmp) / "est.csv"
        n = _matrix_csv(small, a.models, a.datasets, a.items, 0.1, a.models, response=False)
        db = Path(tmp) / "est.duckdb"
        _run("import-items", str(db), str(small))
        partial = ",".join(f"model-{m:03d}" for m in range(a.models, 2 * a.models))
        first = _run("estimate", str(db), "--models", partial, "--json")
        again = _run("estimate", str(db), "--models", partial, "--json")
        print(f"estimate: {a.models} models x {a.datasets} datasets ({a.models} fitted models, {a.items} items, "
              f"{n:,} rows): {first} with the fits; {again} with stored fits "
              f"(load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()

"""Estimates from a fraction of the items against the plain mean, replayed on real per-item matrices.

    .venv/bin/python bench/efficient.py [--data FILE ...]   # default: $ENGINE_SHARED_DIR/efficient-dev/*.csv.gz [--fractions 0.05,0.1,0.2] [--folds 4] [--cut 300]
                                        [--seeds 1]

For each development matrix (default: ../shared/efficient-dev/*.csv.gz, columns model, dataset,
item_id, score) the models are split into folds; each fold's models are simulated as new: they
answer the first `fraction` of every dataset's items in the suite's seeded order (a sweep's
`--limit` prefix, benchmark/sampling.py), right exactly when the matrix says so, and every other
model answers everything. The rows go into an in-memory database and store/estimates.py
estimates the new models. Printed per fraction: the mean absolute error of the estimates and of
the answered mean (points on 0-100) and their ratio, the error of the equal-weight aggregate,
the 95 % intervals' coverage and mean width, and the time the estimation took.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import os
import random
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmark.sampling import sample_key  # noqa: E402
from store.db import ensure_schema  # noqa: E402
from store.estimates import compute_estimates  # noqa: E402

DEV = Path(os.environ.get("ENGINE_SHARED_DIR", ROOT.parent / "shared")) / "efficient-dev"  # as the tests find shared/


def read(path: Path) -> dict[str, dict[str, dict[str, float]]]:
    data: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
    with gzip.open(path, "rt", newline="") as fh:
        for r in csv.DictReader(fh):
            data[r["dataset"]].setdefault(r["model"], {})[r["item_id"]] = float(r["score"])
    return data


def replay(data, fraction: float, folds: int, cut: int, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    dsets = sorted(data)
    models = sorted(set.intersection(*(set(data[d]) for d in dsets)))
    items = {}
    for d in dsets:
        ids = sorted(set.intersection(*(set(data[d][m]) for m in models)))
        items[d] = sorted(rng.sample(ids, cut)) if cut and len(ids) > cut else ids
    # The sweep's order: a seeded hash of the item ids; a fraction is a prefix of it.
    order = {d: sorted(items[d], key=lambda i, d=d: sample_key(seed, d, i)) for d in dsets}
    shown = {d: order[d][:max(2, round(fraction * len(order[d])))] for d in dsets}
    truth = {m: {d: 100 * np.mean([data[d][m][i] for i in items[d]]) for d in dsets} for m in models}
    shuffled = models[:]
    rng.shuffle(shuffled)
    err, base, agg, inside, widths, seconds = [], [], [], 0, [], 0.0
    for k in range(folds):
        held = set(shuffled[k::folds])
        rows = [(m, d, i, data[d][m][i]) for d in dsets for m in models for i in (shown[d] if m in held else items[d])]
        con = duckdb.connect()
        ensure_schema(con)
        now = datetime.now(UTC)
        batch = pa.table({"model": [r[0] for r in rows], "dataset": [r[1] for r in rows],  # noqa: F841
                          "item_id": [r[2] for r in rows], "score": [r[3] for r in rows]})
        con.execute("INSERT INTO results (model, dataset, item_id, sample, status, attempts, score, prompt_hash, "
                    "suite_version, scorer_version, started_at, finished_at) "
                    "SELECT model, dataset, item_id, 0, 'ok', 1, score, 'p', 'v', 's', ?, ? FROM batch", [now, now])
        t0 = time.perf_counter()
        run = compute_estimates(con, sorted(held))
        seconds += time.perf_counter() - t0
        con.close()
        for m in held:
            e_agg, t_agg = [], []
            for d in dsets:
                e = run.estimates[m][d]
                t = truth[m][d]
                err.append(abs(e.estimate - t))
                base.append(abs(100 * np.mean([data[d][m][i] for i in shown[d]]) - t))
                inside += e.ci_low - 1e-9 <= t <= e.ci_high + 1e-9
                widths.append(e.ci_high - e.ci_low)
                e_agg.append(e.estimate)
                t_agg.append(t)
            agg.append(abs(np.mean(e_agg) - np.mean(t_agg)))
    return {"mae": float(np.mean(err)), "base": float(np.mean(base)), "agg": float(np.mean(agg)),
            "coverage": inside / len(err), "width": float(np.mean(widths)), "seconds": seconds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="*", type=Path, default=sorted(DEV.glob("*.csv.gz")))
    ap.add_argument("--fractions", default="0.05,0.1,0.2")
    ap.add_argument("--folds", type=int, default=4)
    ap.add_argument("--cut", type=int, default=300)
    ap.add_argument("--seeds", type=int, default=1, help="repeat with seeds 0..N-1 and average")
    a = ap.parse_args()
    if not a.data:
        sys.exit(f"no development matrices in {DEV}: give --data FILE or set ENGINE_SHARED_DIR")
    for path in a.data:
        data = read(path)
        print(f"{path.name}: {len(next(iter(data.values())))} models x {len(data)} datasets")
        print("  fraction  MAE est  MAE mean  ratio  aggregate MAE  coverage  width  seconds")
        for f in (float(x) for x in a.fractions.split(",")):
            rs = [replay(data, f, a.folds, a.cut, s) for s in range(a.seeds)]
            r = {k: float(np.mean([x[k] for x in rs])) for k in rs[0]}
            print(f"  {f:8.0%}  {r['mae']:7.2f}  {r['base']:8.2f}  {r['mae'] / r['base']:5.2f}  {r['agg']:13.2f}  "
                  f"{r['coverage']:8.1%}  {r['width']:5.1f}  {r['seconds']:7.1f}", flush=True)


if __name__ == "__main__":
    main()

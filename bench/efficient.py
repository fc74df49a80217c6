"""Estimates from a fraction of the items against the plain mean, replayed on real per-item matrices.

    .venv/bin/python bench/efficient.py [--data FILE ...]   # default: $ENGINE_SHARED_DIR/efficient-dev/*.csv.gz [--fractions 0.05,0.1,0.2] [--folds 4] [--cut 300]
                                        [--seeds 1]

For each development matrix (default: ../shared/efficient-dev/*.csv.gz, columns model, dataset,
item_id, score) the models are split into folds; each fold's models are simulated as new: they
answer the first `fraction` of every dataset's items in the suite's seeded order (a sweep's
`--limit` prefix, benchmark/sampling.py), right exactly when the matrix says so, and every other
model answers everything. The rows go into an in-memory database and store/estimates/scores.py
estimates the new models. Printed per fraction: the mean absolute error of the estimates and of
the answered mean (points on 0-100) and their ratio, the error of the equal-weight aggregate,
the 95 % intervals' coverage and mean width, and the time the estimation took.

    .venv/bin/python bench/efficient.py --until-stable [--data FILE ...] [--width 1] [--replay N]

replays the stopping rule of `sweep --until-stable` instead (replay_until_stable; docs/estimates.md):
the share of items asked and of new models placed within one rank of their full-sweep rank.
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
from store.estimates.scores import FULL_SHARE, MIN_MODELS, compute_estimates  # noqa: E402
from store.stats.estimator import Answered, Estimate, Population, choose_blend, estimate_model  # noqa: E402
from store.stats.item_model import fit_2pl  # noqa: E402
from store.stats.stopping import allocate, rank_of, round_budget, settled, spread, standing  # noqa: E402

DEV = Path(os.environ.get("ENGINE_SHARED_DIR", ROOT.parent / "shared")) / "efficient-dev"  # as the tests find shared/


def read(path: Path) -> dict[str, dict[str, dict[str, float]]]:
    data: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
    with gzip.open(path, "rt", newline="") as fh:
        for r in csv.DictReader(fh):
            data[r["dataset"]].setdefault(r["model"], {})[r["item_id"]] = float(r["score"])
    return data


def matrix(data, cut: int, seed: int, rng: random.Random
           ) -> tuple[list[str], list[str], dict[str, list[str]], dict[str, list[str]]]:
    """(datasets, models answering all of them, items per dataset cut to `cut` by `rng`, each in the sweep's order)."""
    dsets = sorted(data)
    models = sorted(set.intersection(*(set(data[d]) for d in dsets)))
    items = {}
    for d in dsets:
        ids = sorted(set.intersection(*(set(data[d][m]) for m in models)))
        items[d] = sorted(rng.sample(ids, cut)) if cut and len(ids) > cut else ids
    # The sweep's order: a seeded hash of the item ids; a fraction is a prefix of it.
    order = {d: sorted(items[d], key=lambda i, d=d: sample_key(seed, d, i)) for d in dsets}
    return dsets, models, items, order


def replay(data, fraction: float, folds: int, cut: int, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    dsets, models, items, order = matrix(data, cut, seed, rng)
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


def replay_until_stable(data, folds: int, cut: int, seed: int, share: float | None = None, width: int = 1,
                        replayed: int | None = None, share_cap: float = 0.3, level: float = 0.95,
                        stored: int | None = None) -> dict[str, float]:
    """Every model in turn new, asked in rounds as `sweep --until-stable` asks (store/stats/stopping.py).

    Its answers are the matrix's; it ranks among the other folds' models, whose overall is their
    full-matrix score (equal dataset weights). Estimated from what it answered with store/stats/estimator.py,
    the item models fitted and the blend chosen once per fold (the sweep refits when rows change).
    `width`: the rank range that stops it (the sweep's: 1), `level` its interval's (the sweep's: 0.95);
    `replayed`: only this many models (seeded); `stored`: the database holds only this many of the
    other folds' models (seeded, per fold), which fit the item models and rank the new one (the
    paper's scale is 30);
    `at_share`: the share within one rank had every model stopped at `share_cap` of the items."""
    rng = random.Random(seed)
    dsets, models, items, order = matrix(data, cut, seed, rng)
    truth = {m: {d: 100 * float(np.mean([data[d][m][i] for i in items[d]])) for d in dsets} for m in models}
    weights = {d: 1 / len(dsets) for d in dsets}
    overall = {m: sum(weights[d] * truth[m][d] for d in dsets) for m in models}
    sizes = {d: len(items[d]) for d in dsets}
    pos = {d: {i: k for k, i in enumerate(items[d])} for d in dsets}
    shuffled = models[:]
    rng.shuffle(shuffled)
    chosen = set(shuffled[:replayed])
    asked, within, exact, rounds, early, seconds = [], 0, 0, [], 0, 0.0
    at_share = 0  # within one rank where it had asked `share_cap` of the items (or stopped before)
    for k in range(folds):
        held = set(shuffled[k::folds])
        rest = [m for m in models if m not in held]
        if stored is not None:
            rest = sorted(random.Random(f"{seed}:{k}").sample(rest, min(stored, len(rest))))
        t0 = time.perf_counter()
        pops = {d: population(d, items[d], rest, data) for d in dsets}
        blend = choose_blend(list(pops.values()), {d: round(FULL_SHARE / 6 * sizes[d]) for d in dsets})
        others = [overall[m] for m in rest]
        for m in sorted(held & chosen):
            reach = {d: 0 for d in dsets}
            n_rounds = 0
            full = rank_of(overall[m], others)
            capped: bool | None = None
            while True:
                answers = {d: answered(data[d][m], order[d][:reach[d]], pos[d]) for d in dsets if reach[d]}
                est = estimate_model(answers, pops, blend, exclude=m) if answers else {}
                parts = {d: est.get(d) or Estimate(truth[m][d], truth[m][d], truth[m][d], sizes[d], sizes[d],
                                                   "complete") for d in answers}
                where = standing(parts, weights, others, level)
                if capped is None and sum(reach.values()) >= share_cap * sum(sizes.values()):
                    capped = abs(where.rank - full) <= 1
                if settled(where, width) or reach == sizes:
                    break
                reach = allocate(reach, sizes, weights, {d: spread(est.get(d)) for d in dsets},
                                 round_budget(sizes, share))
                n_rounds += 1
            within += abs(where.rank - full) <= 1
            at_share += abs(where.rank - full) <= 1 if capped is None else capped
            exact += where.rank == full
            asked.append(sum(reach.values()) / sum(sizes.values()))
            early += reach != sizes
            rounds.append(n_rounds)
        seconds += time.perf_counter() - t0
    n = len(asked)
    return {"models": n, "asked": float(np.mean(asked)), "within": within / n, "exact": exact / n,
            "early": early / n, "rounds": float(np.median(rounds)), "at_share": at_share / n, "seconds": seconds}


def population(d: str, items: list[str], models: list[str], data) -> Population:
    y = np.array([[data[d][m][i] for i in items] for m in models])
    pop = Population(d, items, models, y, np.ones(y.shape, dtype=bool))
    if len(models) >= MIN_MODELS:
        pop.fit = fit_2pl(y, pop.answered)
    return pop


def answered(scores: dict[str, float], shown: list[str], pos: dict[str, int]) -> Answered:
    at = sorted((pos[i], scores[i]) for i in shown)
    return Answered(np.array([k for k, _ in at], dtype=np.intp), np.array([y for _, y in at]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="*", type=Path, default=sorted(DEV.glob("*.csv.gz")))
    ap.add_argument("--fractions", default="0.05,0.1,0.2")
    ap.add_argument("--folds", type=int, default=4)
    ap.add_argument("--cut", type=int, default=300)
    ap.add_argument("--seeds", type=int, default=1, help="repeat with seeds 0..N-1 and average")
    ap.add_argument("--until-stable", action="store_true",
                    help="replay the stopping rule of sweep --until-stable instead of fixed fractions")
    ap.add_argument("--round-share", type=float, help="share of all items a round asks (default: the sweep's)")
    ap.add_argument("--width", type=int, default=1, help="rank range (places) that stops a model (the sweep's: 1)")
    ap.add_argument("--level", type=float, default=0.95, help="the stopping interval's level (the sweep's: 0.95)")
    ap.add_argument("--replay", type=int, metavar="N", help="replay only N seeded models of each matrix (default: all)")
    ap.add_argument("--stored", type=int, metavar="N",
                    help="--until-stable: the database holds N seeded models of the other folds (default: all of them)")
    a = ap.parse_args()
    if not a.data:
        sys.exit(f"no development matrices in {DEV}: give --data FILE or set ENGINE_SHARED_DIR")
    for path in a.data:
        data = read(path)
        print(f"{path.name}: {len(next(iter(data.values())))} models x {len(data)} datasets")
        if a.until_stable:
            print("  models  items asked  within one rank  exact rank  stopped early  rounds (median)  "
                  "within one at 30%  seconds")
            for s in range(a.seeds):
                r = replay_until_stable(data, a.folds, a.cut, s, a.round_share, a.width, a.replay, level=a.level,
                                        stored=a.stored)
                print(f"  {r['models']:6.0f}  {r['asked']:11.1%}  {r['within']:15.1%}  {r['exact']:10.1%}  "
                      f"{r['early']:13.1%}  {r['rounds']:15.0f}  {r['at_share']:17.1%}  {r['seconds']:7.1f}",
                      flush=True)
            continue
        print("  fraction  MAE est  MAE mean  ratio  aggregate MAE  coverage  width  seconds")
        for f in (float(x) for x in a.fractions.split(",")):
            rs = [replay(data, f, a.folds, a.cut, s) for s in range(a.seeds)]
            r = {k: float(np.mean([x[k] for x in rs])) for k in rs[0]}
            print(f"  {f:8.0%}  {r['mae']:7.2f}  {r['base']:8.2f}  {r['mae'] / r['base']:5.2f}  {r['agg']:13.2f}  "
                  f"{r['coverage']:8.1%}  {r['width']:5.1f}  {r['seconds']:7.1f}", flush=True)


if __name__ == "__main__":
    main()

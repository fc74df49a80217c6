"""Estimates in the hierarchy, on public per-item results: are an estimated model's overall interval, rank range
and P(veto) honest?

    .venv/bin/python bench/estimated_hierarchy.py [--data ../shared/efficient-dev/helm_lite.csv.gz]
        [--fraction 0.1] [--folds 4] [--cut 300] [--replicates 1000] [--seed 0]

The data's datasets (cut to --cut seeded items, as ours are) make a suite: the first becomes the gate (tau: the
median of the models' true scores on it, so the veto is in doubt for many), the others two abilities of equal
weight. The models are split into folds; per fold a database holds every item of the other models and, for the
fold's (held-out) models, the same seeded --fraction of each dataset (a sweep's --limit prefix). The held-out
models' overall score, 95 % interval, rank range and P(veto) are read from the views twice: scored on the answered
items only (before `estimate`), and with the estimates in the hierarchy (after). The truth is the same views over
every item. Printed: overall error, how often the interval holds the true overall score and the rank range the
true rank, the veto decisions and P(veto)'s calibration (Brier score).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.csv as pacsv

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark.suites.suite import load_suite  # noqa: E402
from store.hierarchy.bootstrap import compute_intervals  # noqa: E402
from store.db import connect  # noqa: E402
from store.estimates.scores import compute_estimates  # noqa: E402
from store.hierarchy.suite_tables import load_suite_tables  # noqa: E402

BOARD = ("SELECT model, raw_total, rank, vetoed, ci_low, ci_high, rank_low, rank_high, p_veto, estimated "
         "FROM leaderboard")


def read(path: str) -> dict[str, dict[str, dict[str, float]]]:
    """dataset -> model -> item -> score."""
    t = pacsv.read_csv(path)
    data: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for m, d, i, s in zip(*(t.column(c).to_pylist() for c in ("model", "dataset", "item_id", "score"))):
        data[d][m][str(i)] = float(s)
    return data


def suite_toml(dsets: list[str], tau: float) -> str:
    gate, rest = dsets[0], dsets[1:]
    half = (len(rest) + 1) // 2
    groups = {"gate": [gate], "a": rest[:half], "b": rest[half:]}
    out = [f'[suite]\nname = "dev"\nversion = "1"\n[scoring]\ngate = "gate"\ntau = {tau}']
    for aid, ds in groups.items():
        out.append(f'[[ability]]\nid = "{aid}"' + ("" if aid == "gate" else "\nweight = 1.0"))
        out.append(f'[[ability.sub_ability]]\nid = "{aid}_s"\n[[ability.sub_ability.task]]\nid = "{aid}_t"\n'
                   f'level = "L"\ndatasets = {ds!r}'.replace("'", '"'))
    out.append("[datasets]\n" + "\n".join(f'"{d}" = "{d}"' for d in dsets))
    return "\n".join(out) + "\n"


def build(path: Path, suite_file: Path, rows: list[tuple[str, str, str, float]]) -> duckdb.DuckDBPyConnection:
    con = connect(path)
    load_suite_tables(con, load_suite(str(suite_file)))
    t = pa.table({k: [r[j] for r in rows] for j, k in enumerate(("model", "dataset", "item_id", "score"))})
    con.register("fresh", t)
    con.execute("INSERT INTO dataset_metrics SELECT DISTINCT dataset, 'accuracy', 'mean', 'score', NULL, NULL, "
                "true, 'bench' FROM fresh")
    con.execute("INSERT INTO results (model, dataset, item_id, sample, status, attempts, prediction, score) "
                "SELECT model, dataset, item_id, 0, 'ok', 1, '\"x\"', score FROM fresh")
    con.unregister("fresh")
    return con


def board(con: duckdb.DuckDBPyConnection) -> dict[str, dict]:
    cur = con.execute(BOARD)
    names = [d[0] for d in cur.description]
    return {r[0]: dict(zip(names, r)) for r in cur.fetchall()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(Path(os.environ.get("ENGINE_SHARED_DIR", "../shared"))
                                          / "efficient-dev/helm_lite.csv.gz"))
    ap.add_argument("--fraction", type=float, default=0.1)
    ap.add_argument("--folds", type=int, default=4)
    ap.add_argument("--cut", type=int, default=300)
    ap.add_argument("--replicates", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    t0 = time.perf_counter()
    rng = random.Random(a.seed)
    data = read(a.data)
    dsets = sorted(data)
    models = sorted(set.intersection(*(set(data[d]) for d in dsets)))
    items = {}
    for d in dsets:
        ids = sorted(set.intersection(*(set(data[d][m]) for m in models)))
        items[d] = sorted(rng.sample(ids, a.cut)) if a.cut and len(ids) > a.cut else ids
    shown = {d: sorted(rng.sample(items[d], max(2, round(a.fraction * len(items[d]))))) for d in dsets}
    gate_scores = sorted(100 * sum(data[dsets[0]][m][i] for i in items[dsets[0]]) / len(items[dsets[0]])
                         for m in models)
    tau = round(gate_scores[len(gate_scores) // 2], 2)
    order = models[:]
    rng.shuffle(order)
    folds = [set(order[k::a.folds]) for k in range(a.folds)]
    out: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        suite_file = Path(tmp) / "dev.toml"
        suite_file.write_text(suite_toml(dsets, tau))
        every = [(m, d, i, data[d][m][i]) for d in dsets for m in models for i in items[d]]
        con = build(Path(tmp) / "truth.duckdb", suite_file, every)
        truth = board(con)
        con.close()
        for k, held in enumerate(folds):
            rows = [(m, d, i, data[d][m][i]) for d in dsets for m in models for i in (shown[d] if m in held else items[d])]
            con = build(Path(tmp) / f"fold{k}.duckdb", suite_file, rows)
            compute_intervals(con, replicates=a.replicates, seed=a.seed)
            before = board(con)
            compute_estimates(con, sorted(held))
            compute_intervals(con, replicates=a.replicates, seed=a.seed)
            after = board(con)
            con.close()
            out.update({m: {"before": before[m], "after": after[m]} for m in held})
    n = len(out)
    print(f"data {Path(a.data).name}: {len(models)} models x {len(dsets)} datasets x <= {a.cut} items; gate {dsets[0]} "
          f"(tau {tau}), abilities of {', '.join(dsets[1:])}; {a.fraction:.0%} shown to {n} held-out models in "
          f"{a.folds} folds; {a.replicates} replicates")
    print(f"{'held-out models scored':<34}{'overall MAE':>12}{'CI holds':>10}{'CI width':>10}{'ranks hold':>12}"
          f"{'rank width':>12}{'veto right':>12}{'Brier':>8}")
    for when, label in (("before", "on the answered items"), ("after", "with the estimates")):
        err = [abs(v[when]["raw_total"] - truth[m]["raw_total"]) for m, v in out.items()]
        holds = [v[when]["ci_low"] - 1e-9 <= truth[m]["raw_total"] <= v[when]["ci_high"] + 1e-9 for m, v in out.items()]
        width = [v[when]["ci_high"] - v[when]["ci_low"] for v in out.values()]
        # the true rank among every model, where the truth ranks it (not vetoed)
        ranked = [(m, v) for m, v in out.items() if truth[m]["rank"] is not None and v[when]["rank_low"] is not None]
        ranks = [v[when]["rank_low"] <= truth[m]["rank"] <= v[when]["rank_high"] for m, v in ranked]
        rwidth = [v[when]["rank_high"] - v[when]["rank_low"] for _, v in ranked]
        veto = [v[when]["vetoed"] == truth[m]["vetoed"] for m, v in out.items()]
        brier = [(v[when]["p_veto"] - float(truth[m]["vetoed"])) ** 2 for m, v in out.items()]
        print(f"{label:<34}{sum(err) / n:>12.2f}{sum(holds) / n:>10.0%}{sum(width) / n:>10.1f}"
              f"{sum(ranks) / max(1, len(ranks)):>12.0%}{sum(rwidth) / max(1, len(rwidth)):>12.1f}"
              f"{sum(veto) / n:>12.0%}{sum(brier) / n:>8.3f}")
    assert all(v["after"]["estimated"] for v in out.values())
    print(f"({time.perf_counter() - t0:.0f} s; ranks hold: of the {len(ranked)} held-out models the truth ranks)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The real workload's calling phase for two trees and the bare loop, alternated against one server.

    python bench/calling_phase.py OLD_TREE NEW_TREE [--rounds 3] [--data-dir ../shared/datasets]

Each round runs this tree's `bench/throughput.py --child --tree TREE` for each tree (the engine imported
from TREE; 10 models x sst2, bbq, crows_pairs, cmmlu, goemotions x 300 items, 32/model, a new DuckDB file)
and then the bare aiohttp + orjson loop of the same shape, all against one zero-latency simulator; it
prints items/s of each calling phase, the CPU per item of the calling phase (the run loop and the
writer's thread, planning and the end of the run left out) and of the whole child, and the bare loop's
requests/s; then the medians over the rounds, and whether every tree stored the same rows as the first
(the last round's files; every column but the times, the latency and the run id). Make the old tree with
`git archive COMMIT | tar -x -C DIR`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# What a row says that does not depend on when it was made.
STORED = ("model, dataset, item_id, sample, status, error_class, error, attempts, response, prediction, gold, score, "
          "measures, input_tokens, output_tokens, model_version, prompt_hash, suite_version, scorer_version, "
          "finish_reason, blocked, cost_usd, identity, extracted_by")


def stored_rows(db: Path) -> list[tuple]:
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(f"SELECT {STORED} FROM results ORDER BY model, dataset, item_id, sample").fetchall()


def main() -> None:
    from bench.throughput import REAL, bare_loop_cpu, write_models
    from simulator.server import SimServerProcess

    ap = argparse.ArgumentParser()
    ap.add_argument("trees", nargs="+")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--data-dir", default=str(Path(os.environ.get("ENGINE_SHARED_DIR", "../shared")) / "datasets"))
    args = ap.parse_args()
    rate: dict[str, list[float]] = {t: [] for t in args.trees}
    phase_cpu: dict[str, list[float]] = {t: [] for t in args.trees}
    share: dict[str, list[float]] = {t: [] for t in args.trees}
    loads: list[float] = []
    bare_cpu: list[float] = []  # the bare loop's client CPU per request, over its requests
    with SimServerProcess(latency_ms=0, mode="letter") as sim:
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            models = Path(d) / "m.toml"
            write_models(models, sim.base_url, 10, 32)
            for rnd in range(args.rounds):
                loads.append(os.getloadavg()[0])
                line = [f"round {rnd + 1} load {loads[-1]:.2f}"]
                got = {}
                dbs = {}
                for tree in args.trees:
                    db = dbs[tree] = Path(d) / f"r{rnd}-{len(line)}.duckdb"
                    env = dict(os.environ, PYTHONPATH=str(Path(tree).resolve()))
                    env.pop("PYTHONDONTWRITEBYTECODE", None)
                    out = subprocess.run([sys.executable, str(ROOT / "bench" / "throughput.py"), "--child",
                                          "--tree", str(Path(tree).resolve()),
                                          "--models", str(models), "--db", str(db), "--items", "300",
                                          "--data-dir", args.data_dir, "--datasets", REAL],
                                         check=True, capture_output=True, text=True, cwd=tree, env=env).stdout
                    r = json.loads(out.strip().splitlines()[-1])
                    got[tree] = r["rows"] / r["run_s"]
                    rate[tree].append(got[tree])
                    phase_cpu[tree].append(1e6 * r["phase_cpu_s"] / r["rows"])
                    line.append(f"{tree}: {got[tree]:,.0f} items/s, CPU {phase_cpu[tree][-1]:.0f} us/item in the "
                                f"calling phase ({1e6 * r['cpu_s'] / r['rows']:.0f} whole child)")
                bare, bare_us = bare_loop_cpu(sim.base_url, 15000, 10, 32)
                bare_cpu.append(bare_us)
                for tree in args.trees:
                    share[tree].append(got[tree] / bare)
                line.append(f"bare {bare:,.0f} req/s, CPU {bare_us:.0f} us/req")
                print(" | ".join(line), flush=True)
            first = stored_rows(dbs[args.trees[0]])
            for tree in args.trees[1:]:
                same = stored_rows(dbs[tree]) == first
                print(f"stored rows of {tree}: {'identical to' if same else 'DIFFERENT from'} {args.trees[0]}'s "
                      f"({len(first):,} rows)")
    bare_us = statistics.median(bare_cpu)
    print(f"medians of {args.rounds} rounds (load {min(loads):.2f}-{max(loads):.2f}); bare loop CPU {bare_us:.0f} us/req:")
    for tree in args.trees:
        # On a loaded machine the rates swing with the neighbours; the CPU ratio is what a calling phase
        # bound by its own core reaches of the bare loop's rate.
        us = statistics.median(phase_cpu[tree])
        print(f"  {tree}: {statistics.median(rate[tree]):,.0f} items/s = {100 * statistics.median(share[tree]):.0f}% "
              f"of the bare loop, calling phase CPU {us:.0f} us/item (bare / engine CPU: {100 * bare_us / us:.0f}%)")


if __name__ == "__main__":
    main()

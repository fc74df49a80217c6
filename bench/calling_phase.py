"""The real workload's calling phase for two trees and the bare loop, alternated against one server.

    python bench/calling_phase.py OLD_TREE NEW_TREE [--rounds 3] [--data-dir ../shared/datasets]

Each round runs `bench/throughput.py --child` of each tree (10 models x sst2, bbq, crows_pairs, cmmlu,
goemotions x 300 items, 32/model, a new DuckDB file) and then the bare aiohttp + orjson loop of the same
shape, all against one zero-latency simulator; it prints items/s of each calling phase, the engine's CPU
per item and the bare loop's requests/s. Make the old tree with `git archive COMMIT | tar -x -C DIR`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    from bench.throughput import REAL, bare_loop, write_models
    from simulator.server import SimServerProcess

    ap = argparse.ArgumentParser()
    ap.add_argument("trees", nargs="+")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--data-dir", default=str(Path(os.environ.get("ENGINE_SHARED_DIR", "../shared")) / "datasets"))
    args = ap.parse_args()
    with SimServerProcess(latency_ms=0, mode="letter") as sim:
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            models = Path(d) / "m.toml"
            write_models(models, sim.base_url, 10, 32)
            for rnd in range(args.rounds):
                line = [f"round {rnd + 1} load {os.getloadavg()[0]:.2f}"]
                for tree in args.trees:
                    db = Path(d) / f"r{rnd}-{len(line)}.duckdb"
                    env = dict(os.environ, PYTHONPATH=str(Path(tree).resolve()))
                    env.pop("PYTHONDONTWRITEBYTECODE", None)
                    out = subprocess.run([sys.executable, str(Path(tree) / "bench" / "throughput.py"), "--child",
                                          "--models", str(models), "--db", str(db), "--items", "300",
                                          "--data-dir", args.data_dir, "--datasets", REAL],
                                         check=True, capture_output=True, text=True, cwd=tree, env=env).stdout
                    r = json.loads(out.strip().splitlines()[-1])
                    line.append(f"{tree}: {r['rows'] / r['run_s']:,.0f} items/s, CPU {1e6 * r['cpu_s'] / r['rows']:.0f} us/item")
                line.append(f"bare {bare_loop(sim.base_url, 15000, 10, 32):,.0f} req/s")
                print(" | ".join(line), flush=True)


if __name__ == "__main__":
    main()

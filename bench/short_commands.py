"""The two short commands of issue 30, for two trees in turns: `sweep --limit 1` on a new file, and a resume
over 500,000 stored rows that asks nothing (the whole command, process start to exit).

    python bench/short_commands.py OLD_TREE NEW_TREE [--rounds 7] [--data-dir ../shared/datasets]

Each round runs each tree once on each command against one zero-latency simulator (10 models; the five
real datasets of `bench/throughput.py --only real` for the first, synthetic x 50,000 for the second, its
rows written once, its bounds computed by two warm-up runs); alternating keeps the machine's load from
favouring one tree. Prints the medians and every round's wall seconds. Make the old tree with
`git archive COMMIT | tar -x -C DIR`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.throughput import REAL, seed_completed, write_models  # noqa: E402
from simulator.server import SimServerProcess  # noqa: E402

RESUME_ITEMS = 50_000


def timed(tree: str, args: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "engine", *args], cwd=tree, env={**os.environ, "PYTHONPATH": tree},
                   check=True, capture_output=True)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trees", nargs=2)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--data-dir", default=str(Path(os.environ.get("ENGINE_SHARED_DIR", "../shared")) / "datasets"))
    args = ap.parse_args()
    trees = [str(Path(t).resolve()) for t in args.trees]
    start: dict[str, list[float]] = {t: [] for t in trees}
    resume: dict[str, list[float]] = {t: [] for t in trees}
    with tempfile.TemporaryDirectory() as d, SimServerProcess(latency_ms=0, mode="letter") as sim:
        tmp = Path(d)
        models = tmp / "m.toml"
        write_models(models, sim.base_url, 10, 32)
        seeded = tmp / "seeded.duckdb"
        seed_completed(seeded, models, 10, RESUME_ITEMS)
        new = ["sweep", str(models), "--data-dir", args.data_dir, "--datasets", REAL, "--quiet", "--limit", "1"]
        again = ["sweep", str(models), "--datasets", "synthetic", "--limit", str(RESUME_ITEMS), "--quiet"]
        stored = {}
        for i, t in enumerate(trees):  # bytecode compiled, bounds computed: as a user's second run finds them
            stored[t] = tmp / f"resume-{i}.duckdb"
            shutil.copyfile(seeded, stored[t])
            timed(t, [*new, "--db", str(tmp / f"warm-{i}.duckdb")])
            for _ in range(2):
                timed(t, [*again, "--db", str(stored[t])])
        sim.reset()
        for r in range(args.rounds):
            for i, t in enumerate(trees):
                start[t].append(timed(t, [*new, "--db", str(tmp / f"new-{r}-{i}.duckdb")]))
                resume[t].append(timed(t, [*again, "--db", str(stored[t])]))
        asked = sim.stats()["total"]
    print(f"# {args.rounds} rounds in turns, load {os.getloadavg()[0]:.1f}; {asked:,} calls (the new files' only)")
    for t in trees:
        print(f"{t}: sweep --limit 1, new file {statistics.median(start[t]):.2f} s; resume over "
              f"{10 * RESUME_ITEMS:,} rows {statistics.median(resume[t]):.2f} s (medians)")
        print(f"  rounds: new file {', '.join(f'{w:.2f}' for w in start[t])}; resume "
              f"{', '.join(f'{w:.2f}' for w in resume[t])}")


if __name__ == "__main__":
    main()

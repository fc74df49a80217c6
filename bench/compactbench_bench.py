"""CompactBench on the engine: the full public run against the simulated server.

    .venv/bin/python bench/compactbench_bench.py                 # compat, zero latency
    .venv/bin/python bench/compactbench_bench.py --mode strict --latency-ms 20

All 24 public templates (suites starter + elite_practice) x 5 case slots x
2 drift cycles (3 cycles per case) x the 4 built-in compactors, one target
model, through the real CLI (`python -m engine compactbench run`) in a child
process, into a new DuckDB file; then the same command again (a resume with
nothing to ask). The simulated server runs in its own process in `echo` mode.
Target: the first run under 60 s at zero latency.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def models_toml(path: Path, base_url: str, mode: str, concurrency: int) -> None:
    path.write_text(f"""[[models]]
name = "sim"
provider = "openai"
base_url = "{base_url}"
model = "sim"
max_concurrency = {concurrency}

[compactbench]
mode = "{mode}"
suite = ["starter", "elite_practice"]
difficulty = "medium"
case_slots = 5
drift_cycles = 2
""")


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """(wall s, child CPU s, stderr) of one CLI run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"run failed ({out.returncode}):\n{out.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out.stderr


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=("compat", "strict"), default="compat")
    p.add_argument("--latency-ms", type=float, default=0.0)
    p.add_argument("--concurrency", type=int, default=32, help="max_concurrency of the target model")
    p.add_argument("--benchmarks-dir", help="folder of suite folders (default: the CLI's)")
    args = p.parse_args()

    from simulator.server import SimServerProcess

    with tempfile.TemporaryDirectory() as tmp, SimServerProcess(mode="echo", latency_ms=args.latency_ms) as sim:
        models, db = Path(tmp) / "models.toml", Path(tmp) / "results.duckdb"
        models_toml(models, sim.base_url, args.mode, args.concurrency)
        cmd = [sys.executable, "-m", "engine", "compactbench", "run", str(models), "--db", str(db), "--quiet"]
        if args.benchmarks_dir:
            cmd += ["--benchmarks-dir", args.benchmarks_dir]
        wall, cpu, _ = timed(cmd)
        calls = sim.stats()["total"]
        sim.reset()
        wall2, cpu2, err2 = timed(cmd)
        calls2 = sim.stats()["total"]

        import duckdb

        con = duckdb.connect(str(db), read_only=True)
        items, ok = con.execute("SELECT count(*), count(*) FILTER (WHERE status = 'ok') FROM compact_items").fetchone()
        steps, = con.execute("SELECT count(*) FROM compact_steps").fetchone()
        cases, units = con.execute("SELECT count(DISTINCT case_id), count(*) FROM compact_plan").fetchone()
        con.close()
        size_mb = db.stat().st_size / 2**20

    print(f"bench:   {' '.join([os.path.relpath(sys.executable, ROOT), 'bench/compactbench_bench.py', *sys.argv[1:]])}")
    print(f"engine:  python {' '.join(cmd[1:])}")
    print(f"         (24 templates x 5 slots x drift_cycles 2 x 4 built-in compactors, mode {args.mode}, "
          f"max_concurrency {args.concurrency}; sim server: echo, latency {args.latency_ms} ms)")
    print(f"plan: {cases} cases, {units} units, {items} item rows ({ok} ok), {steps} step rows; "
          f"{calls} model calls; db {size_mb:.1f} MiB")
    print(f"first run:  {wall:6.2f} s wall, {cpu:6.2f} s CPU (engine), {calls / wall:7.0f} calls/s, "
          f"{items / wall:7.0f} items/s, {1e3 * cpu / max(calls, 1):.2f} ms CPU per call")
    print(f"resume run: {wall2:6.2f} s wall, {cpu2:6.2f} s CPU, {calls2} model calls ({err2.strip().splitlines()[-1]})")
    print(f"target: first run < 60 s: {'met' if wall < 60 else 'NOT met'}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONPATH", str(ROOT))
    main()

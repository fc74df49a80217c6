"""The two-stage bootstrap of scenarios played several times (docs/suites.md, "Intervals", Plays): its cost
and its width against the one-stage draw of the same rows.

    .venv/bin/python bench/intervals_plays.py [--models 10] [--scenarios 2000] [--plays 3] [--replicates 1000]

One dataset, each (model, scenario, play) scored by a seeded hash in 0..0.99 (independent plays, no
scenario effect: the case where the two-stage draw is most conservative). The same rows are scored once
with kind `mean` (every row of an item resampled together: the one-stage bootstrap) and once with
`play_mean` (scenarios, then plays). Prints wall and CPU seconds of compute_intervals, its phases, and the
mean width of the dataset intervals; the width ratio against the theory's sqrt((2K - 1) / K).
"""

from __future__ import annotations

import argparse
import math
import resource
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark.suites.suite import load_suite  # noqa: E402
from store.hierarchy.bootstrap import compute_intervals  # noqa: E402
from store.hierarchy.suite_tables import load_suite_tables  # noqa: E402
from store.hierarchy.views import ensure_views  # noqa: E402

SUITE = """[suite]
name = "plays"
[[ability]]
id = "a"
[[ability.sub_ability]]
id = "sa"
[[ability.sub_ability.task]]
id = "t"
level = "M"
datasets = ["d"]
[datasets]
d = "episodes"
"""


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run(kind: str, models: int, scenarios: int, plays: int, replicates: int, where: Path) -> float:
    con = duckdb.connect(str(where / f"{kind}.duckdb"))
    ensure_views(con)
    (where / "suite.toml").write_text(SUITE)
    load_suite_tables(con, load_suite(str(where / "suite.toml")))
    con.execute("INSERT INTO dataset_metrics VALUES ('d', 'final_emotion', ?, 'score', NULL, NULL, true, 'bench')",
                [kind])
    con.execute(f"""INSERT INTO results (model, dataset, item_id, sample, status, attempts, prediction, score)
        SELECT 'm' || m, 'd', 's' || lpad(i::VARCHAR, 6, '0'), p, 'ok', 1, '1', (hash(m, i, p) % 100) / 100.0
        FROM range({models}) a(m), range({scenarios}) b(i), range({plays}) c(p)""")
    cpu, t0 = _cpu(), time.perf_counter()
    r = compute_intervals(con, replicates=replicates, seed=0, force=True)
    wall, cpu = time.perf_counter() - t0, _cpu() - cpu
    width = con.execute("SELECT avg(ci_high - ci_low) FROM intervals WHERE level = 'dataset'").fetchone()[0]
    con.close()
    print(f"{kind:9s} wall {wall:5.2f} s  CPU {cpu:5.2f} s  mean width {width:5.2f}   "
          + ", ".join(f"{k} {v:.2f}" for k, v in r.phases.items()))
    return width


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--scenarios", type=int, default=2000)
    ap.add_argument("--plays", type=int, default=3)
    ap.add_argument("--replicates", type=int, default=1000)
    a = ap.parse_args()
    print(f"duckdb {duckdb.__version__}; {a.models} models x {a.scenarios} scenarios x {a.plays} plays, "
          f"B = {a.replicates}; load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    with tempfile.TemporaryDirectory() as d:
        one = run("mean", a.models, a.scenarios, a.plays, a.replicates, Path(d))
        two = run("play_mean", a.models, a.scenarios, a.plays, a.replicates, Path(d))
    k = a.plays
    print(f"width ratio two-stage / one-stage {two / one:.3f} (theory, no scenario effect: "
          f"sqrt((2K - 1) / K) = {math.sqrt((2 * k - 1) / k):.3f})")


if __name__ == "__main__":
    main()

"""Time every aggregation view over a full-size synthetic sweep.

    .venv/bin/python bench/views_bench.py [--models 30] [--items 300] [--suite moodbench]

Builds a DuckDB file (30 models x the suite's datasets x 300 items = 540,000
item rows for MoodBench, 2 % error rows, micro-F1 datasets with JSON measures),
loads the suite, then times ``SELECT *`` of each view, fully fetched, best of
--repeat runs, each view computed from scratch (views are not materialised).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark.suites.suite import load_suite  # noqa: E402
from store.hierarchy.suite_tables import load_suite_tables  # noqa: E402
from store.hierarchy.views import ensure_views  # noqa: E402

VIEWS = (
    "metric_values",
    "dataset_coverage",
    "method_scores",
    "dataset_scores",
    "task_scores",
    "level_scores",
    "sub_ability_scores",
    "ability_scores",
    "leaderboard",
)
# Datasets scored by micro-F1 over tp/fp/fn in `measures` (JSON extraction path).
F1_DATASETS = ("multirc", "record", "goemotions")


def populate(con: duckdb.DuckDBPyConnection, datasets: tuple[str, ...], models: int, items: int) -> None:
    con.execute("CREATE TEMP TABLE ds AS SELECT unnest(?::VARCHAR[]) AS dataset", [list(datasets)])
    con.execute(
        """
        INSERT INTO dataset_metrics
        SELECT dataset, 'accuracy', 'mean', 'score', NULL, NULL, dataset NOT IN ?, 'bench' FROM ds
        UNION ALL
        SELECT dataset, 'micro_f1', 'micro_f1', 'tp', 'fp', 'fn', true, 'bench' FROM ds WHERE dataset IN ?
        """,
        [list(F1_DATASETS), list(F1_DATASETS)],
    )
    con.execute(
        """
        INSERT INTO results (model, dataset, item_id, sample, status, error_class, error, attempts,
                             response, prediction, gold, score, measures, latency_ms,
                             input_tokens, output_tokens, prompt_hash, suite_version, scorer_version)
        SELECT 'model-' || m.i, d.dataset, 'item-' || k.i, 0,
               CASE WHEN h % 50 = 0 THEN 'error' ELSE 'ok' END,
               CASE WHEN h % 50 = 0 THEN 'transient' END,
               CASE WHEN h % 50 = 0 THEN 'HTTP 503' END,
               1,
               CASE WHEN h % 50 <> 0 THEN 'The answer is B.' END,
               CASE WHEN h % 50 <> 0 THEN '"B"'::JSON END,
               '"B"'::JSON,
               CASE WHEN h % 50 <> 0 THEN CAST((h // 7) % 100 < 40 + m.i AS DOUBLE) END,
               CASE WHEN h % 50 <> 0 AND d.dataset IN ? THEN
                   json_object('tp', (h // 3) % 3, 'fp', (h // 5) % 2, 'fn', (h // 11) % 2) END,
               100 + h % 900, 200, 5, 'p0', '1.0', 'bench'
        FROM range(?) m(i), ds d, range(?) k(i),
             LATERAL (SELECT hash(m.i, d.dataset, k.i) AS h)
        """,
        [list(F1_DATASETS), models, items],
    )


def build_db(db: Path, suite, models: int, items: int) -> duckdb.DuckDBPyConnection:
    """A fresh DuckDB file at `db` with the suite loaded and the synthetic sweep stored."""
    db.unlink(missing_ok=True)
    con = duckdb.connect(str(db))
    ensure_views(con)
    load_suite_tables(con, suite)
    populate(con, suite.datasets, models, items)
    con.execute("CHECKPOINT")
    return con


def time_view(con: duckdb.DuckDBPyConnection, view: str, repeat: int) -> tuple[float, float, int]:
    """(first run, best run, rows) in seconds."""
    times, n = [], 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        n = len(con.execute(f"SELECT * FROM {view}").fetchall())
        times.append(time.perf_counter() - t0)
    return times[0], min(times), n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=30)
    ap.add_argument("--items", type=int, default=300)
    ap.add_argument("--suite", default="moodbench")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--db", help="DuckDB file to build (default: a temporary file)")
    args = ap.parse_args()

    suite = load_suite(args.suite)
    tmp = tempfile.TemporaryDirectory()
    db = Path(args.db) if args.db else Path(tmp.name) / "bench.duckdb"
    t0 = time.perf_counter()
    con = build_db(db, suite, args.models, args.items)
    n_rows = con.execute("SELECT count(*) FROM results").fetchone()[0]
    print("command: " + " ".join([".venv/bin/python bench/views_bench.py", *sys.argv[1:]]))
    print(f"duckdb {duckdb.__version__}, db {db}")
    print(
        f"{n_rows:,} item rows ({args.models} models x {len(suite.datasets)} datasets x {args.items} items), "
        f"built in {time.perf_counter() - t0:.2f} s"
    )
    print(f"{'view':<22}{'rows':>8}{'first s':>10}{'best s':>10}   (SELECT *, fully fetched, {args.repeat} runs)")
    first_total = best_total = 0.0
    for view in VIEWS:
        first, best, n = time_view(con, view, args.repeat)
        first_total += first
        best_total += best
        print(f"{view:<22}{n:>8}{first:>10.3f}{best:>10.3f}")
    print(f"{'sum of all views':<30}{first_total:>10.3f}{best_total:>10.3f}")
    con.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

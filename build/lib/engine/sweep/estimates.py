"""`python -m engine estimate DB`: dataset scores of models that answered part of the items.

    python -m engine estimate results.duckdb [--models A,B] [--json]

For every (model, dataset) where the model answered a subset of the items: the model-assisted
estimate on the dataset's 0-100 scale, its 95 % interval, n, n_total and the method
(store/stats/estimator.py, docs/estimates.md). Not `sweep --estimate`, the cost forecast
(engine/sweep/forecast.py). The estimates and the item models are stored (tables `estimates`,
`item_fits`, view `dataset_estimates`), and the file's bootstrap bounds, if it has any, are
recomputed with them (dataset_scores uses them); while a sweep holds the database they are
computed from its read-only copy and not stored.
"""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb
import msgspec

from engine.report.estimated import relation_exists
from store.hierarchy.bootstrap import refresh_intervals
from store.db import StoreError, StoreLocked, connect
from store.estimates.scores import EstimateRun, compute_estimates


class EstimateOptions(msgspec.Struct, frozen=True):
    db: Path
    models: list[str] | None = None
    json_out: bool = False


def estimate(opts: EstimateOptions) -> int:
    if not opts.db.exists():  # connecting would create an empty one
        raise StoreError(f"database {opts.db} does not exist")
    try:
        con, store = connect(opts.db), True
    except StoreLocked:
        con, store = connect(opts.db, read_only=True), False
    try:
        run = compute_estimates(con, opts.models, store=store)
        # The views' dataset scores now use these estimates: bounds the file holds are brought up to
        # date with them (a file without any keeps none; `report` computes its own when it reads).
        if store and con.execute("SELECT count(*) FROM interval_state").fetchone() != (0,):
            refresh_intervals(con)
        unused = _not_in_the_views(con, {d for per in run.estimates.values() for d in per})
    finally:
        con.close()
    if unused:  # stderr: stdout stays the table or the JSON
        print(f"estimates not used by the views (the suite's score of the dataset is not the mean item score): "
              f"{', '.join(unused)}", file=sys.stderr)
    if opts.json_out:
        sys.stdout.write(msgspec.json.encode(run.estimates).decode() + "\n")
    else:
        _print(run)
    return 0


def _not_in_the_views(con: duckdb.DuckDBPyConnection, datasets: set[str]) -> list[str]:
    """The estimated datasets a loaded suite has whose score there is not the mean item score
    (store/hierarchy/views.sql: estimable_datasets): the views keep the answered items' score for them."""
    if not relation_exists(con, "estimable_datasets"):  # a read-only file made before the estimates' views
        return []
    rows = con.execute("""
        SELECT DISTINCT d.suite || ' ' || d.version || ': ' || d.dataset FROM suite_datasets d
        WHERE d.dataset IN (SELECT unnest(?::VARCHAR[]))
          AND NOT EXISTS (SELECT 1 FROM estimable_datasets x
                          WHERE x.suite = d.suite AND x.version = d.version AND x.dataset = d.dataset)
        ORDER BY 1""", [sorted(datasets)]).fetchall()
    return [r[0] for r in rows]


def _print(run: EstimateRun) -> None:
    rows = [(m, d, e) for m, per in run.estimates.items() for d, e in sorted(per.items())]
    if not rows:
        print("no model answered part of a dataset: nothing to estimate")
        return
    wm = max(len("model"), *(len(m) for m, _, _ in rows))
    wd = max(len("dataset"), *(len(d) for _, d, _ in rows))
    print(f"{'model':<{wm}}  {'dataset':<{wd}}  estimate  95% interval    n/total  method")
    for m, d, e in rows:
        print(f"{m:<{wm}}  {d:<{wd}}  {e.estimate:8.2f}  [{e.ci_low:5.1f}, {e.ci_high:5.1f}]  "
              f"{f'{e.n}/{e.n_total}':>9}  {e.method}")
    b = run.blend
    if b.loss is not None:
        print(f"item predictions: {b.alpha:g} x 2PL + {1 - b.alpha:g} x neighbours (kappa {b.kappa:g}); "
              f"cross-validated squared error {b.loss:.4f} (2PL alone {b.loss_2pl:.4f}, answered mean "
              f"{b.loss_mean:.4f})", file=sys.stderr)

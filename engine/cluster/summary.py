"""What a cluster sweep says at its end: the progress summary, the budget, and which units ran on which node."""

from __future__ import annotations

from collections import Counter

import duckdb

from engine.run.progress import Progress, log
from engine.sweep.plan import SweepOptions
from store.side import cluster as units_table


def say_summary(con: duckdb.DuckDBPyConnection, run_id: str, progress: Progress,
                budget_state: tuple[float, bool] | None, opts: SweepOptions) -> None:
    for line in progress.summary_lines():
        log(line, quiet=opts.quiet)
    if budget_state is not None and opts.budget_usd is not None:
        spent, stopped = budget_state
        if stopped:
            log(f"budget reached: ${spent:.4f} spent of ${opts.budget_usd:g} on the cluster; stopped "
                "dispatching (run again with a larger --budget to continue)")
        else:
            log(f"budget: ${spent:.4f} spent of ${opts.budget_usd:g} on the cluster", quiet=opts.quiet)
    per_node: dict[str, Counter[str]] = {}
    for node, model, _ds, _attempt, status in units_table.where_units_ran(con, run_id):
        per_node.setdefault(node[:8], Counter())[f"{model} {status}"] += 1
    for node, what in sorted(per_node.items()):
        log(f"node {node}: " + ", ".join(f"{k} x{n}" for k, n in sorted(what.items())), quiet=opts.quiet)

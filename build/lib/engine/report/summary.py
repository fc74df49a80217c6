"""What a sweep prints at its end: how its run went (per-model counts, throttling, endpoints given up, the
budget), per-dataset lines, then the suite's leaderboard."""

from __future__ import annotations

import sys
from itertools import groupby
from pathlib import Path

from engine.report import unparsed_notes
from engine.report.episode_outcomes import outcome_lines
from engine.report.table import Column, output_width, render, text_table
from engine.report.terminal import one_line
from engine.run.context import Budget
from engine.run.progress import Progress, log
from providers.breaker import Breaker
from providers.limits import Limits
from store.db import connect


def log_run_end(progress: Progress, limits: dict[str, Limits], gone: dict[str, Breaker], budget: Budget | None, *,
                helper: str | None, quiet: bool) -> None:
    """How the calling phase went, on stderr. A stop the user must act on (an endpoint given up, the budget
    reached) is said even with --quiet: the sweep did not finish, and this is why."""
    for line in progress.summary_lines():
        log(line, quiet=quiet)
    for name, lim in limits.items():
        if lim.throttled:
            now = f"; concurrency now {lim.concurrency}" if lim.concurrency is not None else ""
            log(f"{name}: rate-limited {lim.throttled} time(s) (429){now}", quiet=quiet)
    for name, b in gone.items():
        c = progress.counters.get(name) or progress.counters.get(helper or "")
        left = f"; {c.total - c.done} item(s) not asked" if c else ""
        log(f"unreachable: {name}: {b.endpoint} could not be reached for {b.unreachable_after_s:g} s ({b.reason})"
            f"{left}: run the same command again once it answers")
    if budget is None:
        return
    if budget.stopped:
        not_asked = sum(c.total - c.done for c in progress.counters.values())
        log(f"budget reached: ${budget.spent:.4f} spent of ${budget.limit:g}; stopped dispatching, "
            f"{not_asked} item(s) not asked (run again with a larger --budget to continue)")
    else:
        log(f"budget: ${budget.spent:.4f} spent of ${budget.limit:g}", quiet=quiet)


def print_summary(db: Path, suite: str | None) -> None:
    print_dataset_scores(db)
    if suite:
        from engine.report.leaderboard import leaderboard

        con = connect(db, read_only=True)
        try:
            name, _, version = suite.partition("@")
            sheet = leaderboard(con, (name, version))
            warnings = unparsed_notes.warnings(con, (name, version))
        finally:
            con.close()
        sys.stderr.write(render(sheet, "text", output_width(sys.stderr)))
        sys.stderr.write("".join(one_line(w) + "\n" for w in warnings))


def print_dataset_scores(db: Path) -> None:
    con = connect(db, read_only=True)
    try:
        # Suite-independent on purpose: a dataset run outside any suite still gets its line.
        rows = con.execute(
            """
            SELECT c.model, c.dataset, c.n_items, c.n_ok, c.n_unparsed, c.coverage, 100 * v.value
            FROM dataset_coverage c
            LEFT JOIN metric_values v ON v.model = c.model AND v.dataset = c.dataset AND v.is_primary
            ORDER BY 1, 2
            """
        ).fetchall()
        episodes = outcome_lines(con)  # interactive datasets: how episodes ended (none: nothing printed)
    finally:
        con.close()
    # One table per model under its name: a long model name beside a long dataset id would not fit 80 columns.
    width, out = output_width(sys.stderr), [f"dataset scores ({db})"]
    heads = ("dataset", "items", "ok", "unparsed", "coverage", "primary metric")
    for model, group in groupby(rows, key=lambda r: r[0]):
        cells = list(zip(*((ds, str(n), str(ok), str(unp), f"{cov:.0%}", "-" if score is None else f"{score:.2f}")
                           for _, ds, n, ok, unp, cov, score in group)))
        table, _ = text_table([Column(h, c, right=h != "dataset") for h, c in zip(heads, cells)], width, keys=1)
        out += ["", one_line(model), *table]
    if episodes:
        out += ["", *(one_line(x) for x in episodes)]
    sys.stderr.write("\n".join(out) + "\n")

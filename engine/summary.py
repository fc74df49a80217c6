"""What a sweep prints at its end: per-dataset lines, then the suite's leaderboard."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from store.db import connect


def print_summary(db: Path, suite: str | None) -> None:
    print_dataset_scores(db)
    if suite:
        from engine.report import leaderboard_table

        con = connect(db, read_only=True)
        try:
            table, notes = leaderboard_table(con, tuple(suite.split("@", 1)))
        finally:
            con.close()
        console = Console(stderr=True)
        console.print(table)
        for n in notes:
            console.print(n, markup=False)


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
    finally:
        con.close()
    table = Table(title=f"dataset scores ({db})")
    for col in ("model", "dataset", "items", "ok", "unparsed", "coverage", "primary metric"):
        table.add_column(col, justify="left" if col in ("model", "dataset") else "right")
    for model, ds, n, ok, unparsed, cov, score in rows:
        table.add_row(model, ds, str(n), str(ok), str(unparsed), f"{cov:.0%}", "-" if score is None else f"{score:.2f}")
    Console(stderr=True).print(table)

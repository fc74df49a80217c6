"""The short table printed at the end of a sweep."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from store.db import connect


def print_dataset_scores(db: Path) -> None:
    con = connect(db, read_only=True)
    try:
        rows = con.execute(
            "SELECT model, dataset, n_items, n_ok, n_unparsed, coverage, score FROM dataset_scores ORDER BY model, dataset"
        ).fetchall()
    finally:
        con.close()
    table = Table(title=f"dataset scores ({db})")
    for col in ("model", "dataset", "items", "ok", "unparsed", "coverage", "score"):
        table.add_column(col, justify="left" if col in ("model", "dataset") else "right")
    for model, ds, n, ok, unparsed, cov, score in rows:
        table.add_row(model, ds, str(n), str(ok), str(unparsed), f"{cov:.0%}", "-" if score is None else f"{score:.2f}")
    Console(stderr=True).print(table)

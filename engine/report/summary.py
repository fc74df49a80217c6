"""What a sweep prints at its end: per-dataset lines, then the suite's leaderboard."""

from __future__ import annotations

import sys
from itertools import groupby
from pathlib import Path

from engine.report import unparsed_notes
from engine.report.table import Column, output_width, render, text_table
from store.db import connect


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
        sys.stderr.write("".join(w + "\n" for w in warnings))


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
    # One table per model under its name: a long model name beside a long dataset id would not fit 80 columns.
    width, out = output_width(sys.stderr), [f"dataset scores ({db})"]
    heads = ("dataset", "items", "ok", "unparsed", "coverage", "primary metric")
    for model, group in groupby(rows, key=lambda r: r[0]):
        cells = list(zip(*((ds, str(n), str(ok), str(unp), f"{cov:.0%}", "-" if score is None else f"{score:.2f}")
                           for _, ds, n, ok, unp, cov, score in group)))
        table, _ = text_table([Column(h, c, right=h != "dataset") for h, c in zip(heads, cells)], width, keys=1)
        out += ["", model, *table]
    sys.stderr.write("\n".join(out) + "\n")

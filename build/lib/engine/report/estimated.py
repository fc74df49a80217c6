"""Scores an estimate from part of a dataset's items went into (store/hierarchy/views.sql: `estimated`), as the report shows them."""

from __future__ import annotations

import duckdb

from store.query import single

ESTIMATED_MARK = "≈"
ESTIMATED_NOTE = (f"{ESTIMATED_MARK} estimated: a dataset score estimated from part of its items went in "
                  "(docs/estimates.md)")


def marked(estimated: bool | None, x: float | None) -> str:
    """The score, after the estimate's mark when an estimated dataset score went into it."""
    return (ESTIMATED_MARK if estimated and x is not None else "") + ("—" if x is None else f"{x:.2f}")


def relation_exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    """A table or view of that name (views made by other modules may not exist in older files)."""
    n = single(con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]).fetchone())
    return n > 0


def stale_notes(con: duckdb.DuckDBPyConnection, shown: set[str]) -> list[str]:
    """A line per model shown whose stored estimates no longer hold for the rows, on a dataset it still
    answered only part of: there the views fall back to the answered items until `estimate` runs again."""
    if not relation_exists(con, "estimates"):
        return []
    rows = con.execute("""
        SELECT e.model, list(e.dataset ORDER BY e.dataset)
        FROM estimates e JOIN dataset_item_stats s ON s.model = e.model AND s.dataset = e.dataset
        WHERE e.signature <> estimate_signature() AND s.n_ok < e.n_total
        GROUP BY e.model ORDER BY e.model""").fetchall()
    return [f"{m}: its estimates of {', '.join(ds)} are out of date (rows changed since `estimate` ran): "
            "scored on the answered items until `python -m engine estimate DB` runs again"
            for m, ds in rows if m in shown]

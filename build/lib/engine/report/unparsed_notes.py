"""What `report` says about unread answers (views of store/hierarchy/unparsed.sql): warnings."""

from __future__ import annotations

import duckdb


def warnings(con: duckdb.DuckDBPyConnection, suite: tuple[str, str], model: str | None = None) -> list[str]:
    """One line per (model, dataset) of the suite with > 5 % unread answers or a score they move > 1 point."""
    rows = con.execute(
        """SELECT f.model, f.dataset, f.n_unparsed, f.n_ok, f.unparsed_share, f.delta_points,
                  f.flagged_share, f.flagged_moves
           FROM unparsed_flags f SEMI JOIN suite_datasets d ON d.dataset = f.dataset AND d.suite = ? AND d.version = ?
           WHERE ? IS NULL OR f.model = ?
           ORDER BY f.model, f.unparsed_share DESC, f.dataset""", [*suite, model, model]).fetchall()
    out = []
    for m, ds, n_un, n_ok, share, delta, over, moves in rows:
        parts = []
        if over:
            parts.append(f"{100 * share:.1f}% of answers unread ({n_un}/{n_ok}, over 5%)")
        if moves:
            parts.append(f"its score moves {delta:+.1f} points when unread answers are left out")
        out.append(f"warning: {m} on {ds}: " + "; ".join(parts))
    return out

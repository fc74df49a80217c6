"""Episodes as transcripts for the item browser: the `turns` rows (store/results/turns.sql) of an interactive
dataset, per model and item key, in the order they were said.

Each turn is [session, turn, role, status, content, emotion, reason]; the page draws the seeker's
emotions as the episode's curve. Absent `turns` table (a database from before episodes): nothing.
"""

from __future__ import annotations

from typing import Any

import duckdb

from engine.report.estimated import relation_exists

_SQL = """
SELECT dataset, model, item_id, sample, session, turn, role, status, content, emotion, reason
FROM turns {where}
ORDER BY dataset, model, item_id, sample, session, turn, role = 'seeker'  -- the companion speaks, then the seeker answers
"""


def selection(dataset: str | None, models: list[str] | None) -> tuple[str, list[str]]:
    """The WHERE clause (or "") and its parameters for one dataset and some models, as the item queries take."""
    where, params = [], []
    if dataset is not None:
        where.append("dataset = ?")
        params.append(dataset)
    if models:
        where.append(f"model IN ({', '.join('?' for _ in models)})")
        params.extend(models)
    return ("WHERE " + " AND ".join(where)) if where else "", params


def transcripts(con: duckdb.DuckDBPyConnection, *, dataset: str | None = None, models: list[str] | None = None,
                max_chars: int | None = None) -> dict[str, dict[str, dict[str, list[list[Any]]]]]:
    """dataset -> model -> item key (as items.py keys it) -> turns; contents cut to max_chars."""
    if not relation_exists(con, "turns"):
        return {}
    where, params = selection(dataset, models)
    out: dict[str, dict[str, dict[str, list[list[Any]]]]] = {}
    cur = con.execute(_SQL.format(where=where), params)
    while batch := cur.fetchmany(20_000):
        for ds, model, item_id, sample, session, turn, role, status, content, emotion, reason in batch:
            key = item_id if not sample else f"{item_id}#{sample}"
            if max_chars is not None and content is not None and len(content) > max_chars:
                content = content[:max_chars] + "…"
            out.setdefault(ds, {}).setdefault(model, {}).setdefault(key, []).append(
                [session, turn, role, status, content, emotion, reason])
    return out

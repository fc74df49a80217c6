"""Resume: what is already done, and whether continuing would mix stamps."""

from __future__ import annotations

import duckdb
import pyarrow as pa

from store.query import single

# The stamp of rows imported from elsewhere (store/estimates/import_items.py: prompt_hash, scorer_version,
# extracted_by). They count as answered, and no prompt, scorer or identity of ours made them:
# the stamp and identity checks of a resume leave them out.
IMPORTED = "imported"


def done_counts(con: duckdb.DuckDBPyConnection, models: list[str],
                items: dict[str, list[str]]) -> dict[tuple[str, str], int]:
    """Per (model, dataset): how many planned items already have an `ok` row (sample 0..)."""
    if not models or not items:
        return {}
    plan = pa.table({
        "dataset": [d for d, ids in items.items() for _ in ids],
        "item_id": [i for ids in items.values() for i in ids],
    })
    wanted = pa.table({"model": models})
    rows = con.execute(
        """
        SELECT r.model, r.dataset, count(*)
        FROM results r
        SEMI JOIN wanted w ON w.model = r.model
        SEMI JOIN plan p ON p.dataset = r.dataset AND p.item_id = r.item_id
        WHERE r.status = 'ok'
        GROUP BY ALL
        """
    ).fetchall()
    del plan, wanted
    return {(m, d): n for m, d, n in rows}


def done_keys(con: duckdb.DuckDBPyConnection, model: str, dataset: str) -> set[tuple[str, int]]:
    rows = con.execute(
        "SELECT item_id, sample FROM results WHERE model = ? AND dataset = ? AND status = 'ok'",
        [model, dataset],
    ).fetchall()
    return {(i, s) for i, s in rows}


def stamp_conflicts(con: duckdb.DuckDBPyConnection,
                    expected: dict[tuple[str, str], tuple[str, str]]) -> list[str]:
    """Describe stored `ok` rows whose prompt hash or scorer version differs from this run's."""
    if not expected:
        return []
    exp = pa.table({
        "model": [m for m, _ in expected], "dataset": [d for _, d in expected],
        "prompt_hash": [p for p, _ in expected.values()], "scorer_version": [s for _, s in expected.values()],
    })
    rows = con.execute(
        """
        SELECT r.model, r.dataset, r.prompt_hash, r.scorer_version, e.prompt_hash, e.scorer_version, count(*)
        FROM results r JOIN exp e ON e.model = r.model AND e.dataset = r.dataset
        WHERE r.status = 'ok' AND (r.prompt_hash <> e.prompt_hash OR r.scorer_version <> e.scorer_version)
          AND r.prompt_hash IS DISTINCT FROM $imported
        GROUP BY ALL ORDER BY 1, 2
        """, {"imported": IMPORTED}
    ).fetchall()
    del exp
    out = []
    for model, ds, ph, sv, eph, esv, n in rows:
        what = []
        if ph != eph:
            what.append(f"prompt {ph} -> {eph}")
        if sv != esv:
            what.append(f"scorer {sv} -> {esv}")
        out.append(f"{model}/{ds}: {n} stored rows with {', '.join(what)}")
    return out


def delete_rows(con: duckdb.DuckDBPyConnection, models: list[str], datasets: list[str]) -> int:
    sel = pa.table({"model": models})
    dsel = pa.table({"dataset": datasets})
    n = single(con.execute(
        "DELETE FROM results WHERE model IN (SELECT model FROM sel) AND dataset IN (SELECT dataset FROM dsel)"
    ).fetchone())
    del sel, dsel
    return int(n)

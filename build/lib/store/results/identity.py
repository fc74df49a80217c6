"""Identity stamps in the store: what answered each row, and whether a resume would change it.

`results.identity` holds a hash; `identities` maps it to its detail (JSON:
provider, base_url without credentials, model id, context_tokens, derivation).
Rows written before the column existed have NULL: they are compared with the
`models` table (what models.toml said when they were made), then adopted.
"""

from __future__ import annotations

from typing import Any

import duckdb
import orjson
import pyarrow as pa

from store.results.resume import IMPORTED
from store.transaction import transaction


def record(con: duckdb.DuckDBPyConnection, details: dict[str, dict[str, Any]]) -> None:
    """Store each identity hash's detail (known ones are kept)."""
    with transaction(con):
        for h, detail in details.items():
            con.execute("INSERT OR IGNORE INTO identities VALUES (?, ?)", [h, orjson.dumps(detail).decode()])


def stored_identities(con: duckdb.DuckDBPyConnection,
                      expected: dict[tuple[str, str], str]) -> list[tuple[str, str, str | None, int]]:
    """(model, dataset, stored identity, rows) for `ok` rows whose identity is not this run's."""
    if not expected:
        return []
    exp = pa.table({"model": [m for m, _ in expected], "dataset": [d for _, d in expected],
                    "identity": list(expected.values())})
    rows = con.execute(
        """
        SELECT r.model, r.dataset, r.identity, count(*)
        FROM results r JOIN exp e ON e.model = r.model AND e.dataset = r.dataset
        WHERE r.status = 'ok' AND r.identity IS DISTINCT FROM e.identity
          AND r.prompt_hash IS DISTINCT FROM $imported  -- imported rows: no identity of ours answered them
        GROUP BY ALL ORDER BY 1, 2
        """, {"imported": IMPORTED}
    ).fetchall()
    del exp
    return rows


def detail_of(con: duckdb.DuckDBPyConnection, identity: str) -> dict[str, Any]:
    row = con.execute("SELECT detail FROM identities WHERE identity = ?", [identity]).fetchone()
    return orjson.loads(row[0]) if row else {}


def legacy_detail(con: duckdb.DuckDBPyConnection, model: str) -> dict[str, Any]:
    """What models.toml said for this name when rows without identity were made (`models` table)."""
    row = con.execute("SELECT provider, base_url, model_id FROM models WHERE name = ?", [model]).fetchone()
    if row is None:
        return {}
    return {"provider": row[0], "base_url": row[1], "model": row[2]}


def adopt(con: duckdb.DuckDBPyConnection, model: str, dataset: str, identity: str, old: str | None = None) -> int:
    """Stamp a model's rows without identity (or with identity `old`) with this run's (they were found to agree)."""
    n = con.execute("UPDATE results SET identity = ? WHERE model = ? AND dataset = ? "
                    "AND identity IS NOT DISTINCT FROM ?", [identity, model, dataset, old]).fetchone()
    return int(n[0]) if n else 0


def model_versions(con: duckdb.DuckDBPyConnection, models: list[str]) -> dict[str, set[str]]:
    """The model versions each model's stored answers report (`ok` rows that report one)."""
    rows = con.execute("SELECT model, model_version FROM results WHERE status = 'ok' AND model_version IS NOT NULL "
                       "AND model IN (SELECT unnest(?::VARCHAR[])) GROUP BY ALL", [models]).fetchall()
    out: dict[str, set[str]] = {m: set() for m in models}
    for model, version in rows:
        out[model].add(version)
    return out


def judge_detail(con: duckdb.DuckDBPyConnection, judge: str) -> dict[str, Any] | None:
    """The stored identity of a judge that has settled verdicts (None: it has none)."""
    has = con.execute("SELECT 1 FROM judgements WHERE judge = ? AND status <> 'error' LIMIT 1", [judge]).fetchone()
    row = con.execute("SELECT provider, base_url, model_id FROM judges WHERE judge = ?", [judge]).fetchone()
    if not has or row is None:
        return None
    return {"provider": row[0], "base_url": row[1], "model": row[2]}

"""Re-scoring in place: the rescores log, and results rows updated with their old values kept (history.sql)."""

from __future__ import annotations

from datetime import datetime, timezone

import duckdb
import pyarrow as pa

from store.transaction import transaction

_FIELDS: list[tuple[str, pa.DataType]] = [  # annotated: the checker cannot infer a list of mixed types
    ("model", pa.string()), ("dataset", pa.string()), ("item_id", pa.string()), ("sample", pa.int32()),
    ("prediction", pa.string()), ("score", pa.float64()), ("measures", pa.string()),
    ("scorer_version", pa.string()), ("extracted_by", pa.string()),
]
_SCHEMA = pa.schema(_FIELDS)
_KEY = "r.model = u.model AND r.dataset = u.dataset AND r.item_id = u.item_id AND r.sample = u.sample"


def start(con: duckdb.DuckDBPyConnection, rescore_id: str, command: str) -> None:
    con.execute("INSERT INTO rescores VALUES (?, ?, NULL, ?, 0, 0, 'running')",
                [rescore_id, datetime.now(timezone.utc), command])


def close_stale(con: duckdb.DuckDBPyConnection) -> int:
    """Rescores left `running` by a killed process become `interrupted` (the caller holds the write lock)."""
    n = con.execute("UPDATE rescores SET outcome = 'interrupted' WHERE outcome = 'running'").fetchone()
    return int(n[0]) if n else 0


def finish(con: duckdb.DuckDBPyConnection, rescore_id: str, n_rows: int, n_changed: int, outcome: str) -> None:
    con.execute("UPDATE rescores SET finished_at = ?, n_rows = ?, n_changed = ?, outcome = ? WHERE rescore_id = ?",
                [datetime.now(timezone.utc), n_rows, n_changed, outcome, rescore_id])


def replace_values(con: duckdb.DuckDBPyConnection, rescore_id: str, rows: list[tuple]) -> None:
    """Store the current values of these rows in results_history, then set the new ones; one transaction.

    ``rows``: (model, dataset, item_id, sample, prediction JSON text, score, measures JSON text,
    scorer_version, extracted_by), the new values.
    """
    if not rows:
        return
    upd = pa.Table.from_arrays([pa.array(c, type=f.type) for c, f in zip(zip(*rows), _SCHEMA)],  # noqa: F841
                               schema=_SCHEMA)
    now = datetime.now(timezone.utc)
    with transaction(con):
        con.execute(f"""INSERT INTO results_history
            SELECT ?, ?, r.model, r.dataset, r.item_id, r.sample, r.prediction, r.score, r.measures,
                   r.scorer_version, r.extracted_by
            FROM results r JOIN upd u ON {_KEY}""", [rescore_id, now])
        con.execute(f"""UPDATE results r SET prediction = u.prediction, score = u.score, measures = u.measures,
                           scorer_version = u.scorer_version, extracted_by = u.extracted_by
                        FROM upd u WHERE {_KEY}""")

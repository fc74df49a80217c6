"""The `turns` table (store/results/turns.sql): an episode's messages, batch upsert for the Writer, resume reads.

An episode (engine/lanes/episode.py) stores each call as it returns; a rerun reads the `ok` and
`blocked` turns of its unfinished episodes (``stored_turns``) and goes on after the last one.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from pathlib import Path

import duckdb
import msgspec
import pyarrow as pa

from store.transaction import transaction
from store.upsert import arrow_batch, upsert_sql

_SQL = Path(__file__).with_name("turns.sql")


class TurnRow(msgspec.Struct, array_like=True):
    """One row of `turns`, in column order (store/results/turns.sql)."""

    model: str
    dataset: str
    item_id: str
    sample: int
    session: int
    turn: int
    role: str
    status: str
    content: str | None
    emotion: int | None
    reason: str | None
    ended: bool | None
    error_class: str | None
    error: str | None
    attempts: int
    input_tokens: int | None
    output_tokens: int | None
    latency_ms: float | None
    speaker: str
    model_version: str | None
    prompt_hash: str
    identity: str | None
    run_id: str | None
    started_at: datetime
    finished_at: datetime


_TS = pa.timestamp("us", tz="UTC")
_FIELDS: list[tuple[str, pa.DataType]] = [
    ("model", pa.string()), ("dataset", pa.string()), ("item_id", pa.string()), ("sample", pa.int32()),
    ("session", pa.int32()), ("turn", pa.int32()), ("role", pa.string()), ("status", pa.string()),
    ("content", pa.string()), ("emotion", pa.int32()), ("reason", pa.string()), ("ended", pa.bool_()),
    ("error_class", pa.string()), ("error", pa.string()), ("attempts", pa.int32()), ("input_tokens", pa.int32()),
    ("output_tokens", pa.int32()), ("latency_ms", pa.float64()), ("speaker", pa.string()),
    ("model_version", pa.string()), ("prompt_hash", pa.string()), ("identity", pa.string()), ("run_id", pa.string()),
    ("started_at", _TS), ("finished_at", _TS),
]
_SCHEMA = pa.schema(_FIELDS)
KEY = ("model", "dataset", "item_id", "sample", "session", "turn", "role")
_COLUMNS = [f.name for f in _SCHEMA]
_UPSERT = upsert_sql("turns", _COLUMNS, len(KEY))
KEPT = ("ok", "blocked")  # statuses a resume keeps (the others are asked again)


def ensure_turn_tables(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(_SQL.read_text(encoding="utf-8"))


def insert_turns(con: duckdb.DuckDBPyConnection, rows: list[TurnRow]) -> None:
    """Upsert rows in one transaction (the insert function of the turns' Writer)."""
    batch = arrow_batch(rows, _SCHEMA, frozenset())  # noqa: F841 - read by name in the SQL
    with transaction(con):
        con.execute(_UPSERT)


def turns_arrow(rows: list[TurnRow]) -> pa.Table:
    """Rows as the Arrow table a cluster host lands as Parquet (engine/cluster/units.py)."""
    return arrow_batch(rows, _SCHEMA, frozenset())


def upsert_turns_batch(con: duckdb.DuckDBPyConnection, batch: pa.Table) -> None:
    """Upsert a landed Arrow batch of turns in the caller's transaction (store/side/cluster.py)."""
    con.execute(_UPSERT)  # `batch` is referenced by name in the SQL


Key = tuple[str, int]  # (item_id, sample)


def stored_turns(con: duckdb.DuckDBPyConnection, model: str, dataset: str) -> dict[Key, list[TurnRow]]:
    """The kept turns of this model's episodes of ``dataset`` that have no `ok` results row yet, in order."""
    rows = con.execute(
        f"""
        SELECT {", ".join("t." + c for c in _COLUMNS)} FROM turns t
        ANTI JOIN (SELECT item_id, sample FROM results WHERE model = $m AND dataset = $d AND status = 'ok') r
            ON r.item_id = t.item_id AND r.sample = t.sample
        WHERE t.model = $m AND t.dataset = $d AND t.status IN ('ok', 'blocked')
        ORDER BY t.item_id, t.sample, t.session, t.turn, t.role = 'seeker'
        """, {"m": model, "d": dataset}).fetchall()
    out: dict[Key, list[TurnRow]] = defaultdict(list)
    for r in rows:
        row = TurnRow(*r)
        out[(row.item_id, row.sample)].append(row)
    return dict(out)


def delete_turns(con: duckdb.DuckDBPyConnection, models: list[str], datasets: list[str]) -> int:
    """--fresh: the stored turns of these models and datasets."""
    sel, dsel = pa.table({"model": models}), pa.table({"dataset": datasets})  # noqa: F841 - read by name
    n = con.execute("DELETE FROM turns WHERE model IN (SELECT model FROM sel) "
                    "AND dataset IN (SELECT dataset FROM dsel)").fetchone()
    return int(n[0]) if n else 0

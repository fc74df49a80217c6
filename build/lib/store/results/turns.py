"""The `turns` table (store/results/turns.sql): an episode's messages, batch upsert for the Writer, resume reads.

An episode (engine/lanes/episode.py) stores each call as it returns; a rerun reads the `ok` and
`blocked` turns of its unfinished episodes (``stored_turns``) and goes on after the last one.

Between the call and the table, a turn goes through the run's journal (``TurnJournal``, ``<db>.turns-journal``):
one write(2) of the row before the episode's next call, so a kill -9 loses no returned turn (the kernel
has the bytes) while no episode waits for a DuckDB commit (~10-100 ms on a loaded machine). The Writer
upserts the same rows in batches; a run that ends removes its journal, the next run after a kill replays
it into the table before reading anything (``replay_journal``: upserts are idempotent).
"""

from __future__ import annotations

import os
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


_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(TurnRow)


def journal_path(db: str | Path) -> Path:
    return Path(f"{db}.turns-journal")


class TurnJournal:
    """Turns appended to a file as they return: a length (4 bytes, little-endian), then the row (msgpack)."""

    def __init__(self, path: Path):
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def append(self, row: TurnRow) -> None:
        data = _ENCODER.encode(row)
        view = memoryview(len(data).to_bytes(4, "little") + data)
        while view:  # a regular file takes it in one write; a short one is finished, never left half
            view = view[os.write(self._fd, view):]

    def close(self, *, remove: bool) -> None:
        """``remove``: every row is in the table (the run's writer flushed all it was given)."""
        os.close(self._fd)
        if remove:
            self.path.unlink(missing_ok=True)


def read_journal(path: Path) -> list[TurnRow]:
    """The whole records of a journal; a last one cut short by a kill is left out (its call was in flight)."""
    data = path.read_bytes() if path.is_file() else b""
    rows, at = [], 0
    while at + 4 <= len(data):
        end = at + 4 + int.from_bytes(data[at:at + 4], "little")
        if end > len(data):
            break
        try:
            rows.append(_DECODER.decode(data[at + 4:end]))
        except msgspec.DecodeError:
            break
        at = end
    return rows


def replay_journal(con: duckdb.DuckDBPyConnection, path: Path, batch: int = 5000) -> int:
    """Upsert into `turns` the rows a killed run left in its journal, then remove it: how many."""
    # One row per key, the last written (one batch's upsert would not order two rows of a key); none the
    # table has from the same run already (the upsert sums a key's attempts over runs: not twice for one).
    rows = list({tuple(getattr(r, k) for k in KEY): r for r in read_journal(path)}.values())
    runs = sorted({r.run_id for r in rows if r.run_id is not None})
    have = set(con.execute(f"SELECT {', '.join(KEY)}, run_id FROM turns WHERE list_contains($runs, run_id)",
                           {"runs": runs}).fetchall()) if runs else set()
    rows = [r for r in rows if (*(getattr(r, k) for k in KEY), r.run_id) not in have]
    for at in range(0, len(rows), batch):
        insert_turns(con, rows[at:at + batch])
    path.unlink(missing_ok=True)
    return len(rows)

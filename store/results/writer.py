"""The one writer: every result row goes through it, in batches, to DuckDB."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Callable

import anyio
import duckdb
import msgspec
import orjson
import pyarrow as pa
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from store.memory import checkpoint_if_due, database_path, with_room, writing
from store.transaction import transaction


class ResultRow(msgspec.Struct, array_like=True):
    """One row of `results`, in column order (store/results/schema.sql)."""

    model: str
    dataset: str
    item_id: str
    sample: int
    status: str
    error_class: str | None
    error: str | None
    attempts: int
    response: str | None
    prediction: Any
    gold: Any
    score: float | None
    measures: dict[str, float] | None
    latency_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    model_version: str | None
    prompt_hash: str
    suite_version: str
    scorer_version: str
    started_at: datetime
    finished_at: datetime
    finish_reason: str | None = None
    blocked: str | None = None  # refusal / safety block reason (status stays 'ok')
    cost_usd: float | None = None
    run_id: str | None = None
    identity: str | None = None  # identities.identity of what answered (engine/sweep/identity.py)
    # 'rules' | 'model'; None: derived on insert ('rules' when an ok row has a prediction).
    extracted_by: str | None = None


RESULT_KEY = ("model", "dataset", "item_id", "sample")  # results' primary key (store/results/schema.sql)
_TS = pa.timestamp("us", tz="UTC")
_FIELDS: list[tuple[str, pa.DataType]] = [  # annotated: the checker cannot infer a list of mixed types
    ("model", pa.string()), ("dataset", pa.string()), ("item_id", pa.string()), ("sample", pa.int32()),
    ("status", pa.string()), ("error_class", pa.string()), ("error", pa.string()), ("attempts", pa.int32()),
    ("response", pa.string()), ("prediction", pa.string()), ("gold", pa.string()), ("score", pa.float64()),
    ("measures", pa.string()), ("latency_ms", pa.float64()), ("input_tokens", pa.int32()),
    ("output_tokens", pa.int32()), ("model_version", pa.string()), ("prompt_hash", pa.string()),
    ("suite_version", pa.string()), ("scorer_version", pa.string()), ("started_at", _TS), ("finished_at", _TS),
    ("finish_reason", pa.string()), ("blocked", pa.string()), ("cost_usd", pa.float64()), ("run_id", pa.string()),
    ("identity", pa.string()),
    ("extracted_by", pa.string()),
]
_SCHEMA = pa.schema(_FIELDS)
_JSON_COLUMNS = {"prediction", "gold", "measures"}
_COLUMNS = [f.name for f in _SCHEMA]

# A retried row replaces the earlier error row; attempts add up over runs.
# Columns are named: a file migrated by ALTER TABLE may order them otherwise.
_INSERT = f"INSERT INTO results ({', '.join(_COLUMNS)}) SELECT * FROM batch"
_UPSERT = f"""
{_INSERT}
ON CONFLICT (model, dataset, item_id, sample) DO UPDATE SET
  {", ".join(f"{c} = excluded.{c}" for c in _COLUMNS[4:] if c != "attempts")},
  attempts = results.attempts + excluded.attempts
"""


def _json(v: Any) -> str | None:
    return None if v is None else orjson.dumps(v).decode()


def to_arrow(rows: list[ResultRow]) -> pa.Table:
    cols = list(zip(*(msgspec.structs.astuple(r) for r in rows)))
    arrays = []
    values: Sequence[Any]  # a column of the rows, or the column as stored
    for name, field, values in zip(_COLUMNS, _SCHEMA, cols):
        if name in _JSON_COLUMNS:
            values = [_json(v) for v in values]
        elif name == "extracted_by":
            values = [v or ("rules" if r.status == "ok" and r.prediction is not None else None)
                      for v, r in zip(values, rows)]
        arrays.append(pa.array(values, type=field.type))
    return pa.Table.from_arrays(arrays, schema=_SCHEMA)


def insert_rows(con: duckdb.DuckDBPyConnection, rows: list[ResultRow]) -> None:
    """Upsert rows in one transaction (also used by tests and benchmarks).

    Tried as a plain INSERT first: a batch of new keys (a sweep's rows, nearly always) is stored at a
    third of the upsert's CPU, which also grows with the table (bench/README.md, "The calling phase,
    third pass"). A batch holding a stored key (a retried error row) fails as a whole, is rolled
    back, and goes through the upsert: the same rows either way."""
    batch = to_arrow(rows)
    try:
        with transaction(con):
            con.execute(_INSERT)  # `batch` is referenced by name in the SQL
        return
    except duckdb.ConstraintException:
        pass  # a key is stored already: rolled back, upserted below
    with transaction(con):
        upsert_batch(con, batch)


def upsert_batch(con: duckdb.DuckDBPyConnection, batch: pa.Table) -> None:
    """Upsert an Arrow batch of `results` rows (``to_arrow``'s schema) in the caller's transaction: a
    retried row replaces the earlier error row, attempts adding up (store/side/cluster.py ingests landed files so)."""
    con.execute(_UPSERT)  # `batch` is referenced by name in the SQL


GATHER_S = 0.05  # how often the writer takes the rows put since, until its batch is full or due


class Writer:
    """Receives rows from many workers; appends them in batches from one thread.

    A batch is flushed when it is full (seen within GATHER_S) or ``flush_s`` after its first row, so a
    kill loses at most the rows of the last fraction of a second (and the
    calls in flight).
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, *, flush_s: float = 0.5, batch_max: int = 5000,
                 buffer: int = 20000, insert: Callable[[duckdb.DuckDBPyConnection, list[Any]], None] | None = None,
                 table: str = "results", key: tuple[str, ...] = RESULT_KEY):
        self._con = con
        # Its database's file, for the checkpoints of a bounded run (None: a cluster host's, landing files).
        self._path = database_path(con) if con is not None else None
        self._insert = insert or insert_rows  # another table's rows bring their own batch insert
        self.table, self.key = table, key  # where the rows go, and the table's primary key
        # Called with each batch once it is stored (on the event loop): the snapshot's journal.
        self.on_flush: Callable[[list[Any]], None] | None = None
        self._flush_s = flush_s
        self._batch_max = batch_max
        self._send: MemoryObjectSendStream[Any]
        self._recv: MemoryObjectReceiveStream[Any]
        self._send, self._recv = anyio.create_memory_object_stream(buffer)
        self.rows_written = 0
        self._rows_put = 0
        self.finished = anyio.Event()
        self._flushed = anyio.Event()  # set (and replaced) at each flush: `stored` waits on it

    async def put(self, row: Any) -> None:
        # No checkpoint while the buffer has room: the caller has just awaited its call, and
        # another pass through the event loop per row is measurable at thousands of rows a second.
        self._rows_put += 1
        try:
            self._send.send_nowait(row)
        except anyio.WouldBlock:
            await self._send.send(row)

    async def synced(self, poll_s: float = 0.05) -> None:
        """Wait until every row put so far is in the database (rows are written in the order put)."""
        target = self._rows_put
        while self.rows_written < target and not self.finished.is_set():
            await anyio.sleep(poll_s)

    @property
    def rows_put(self) -> int:
        return self._rows_put

    async def stored(self, n: int) -> None:
        """Wait until the first ``n`` rows put are in the database (or the writer ended), woken by the flush
        itself: an episode waits for its turn's row before its next call (engine/lanes/episode.py)."""
        while self.rows_written < n and not self.finished.is_set():
            await self._flushed.wait()

    async def close(self) -> None:
        """No more rows: the run loop flushes what it has and returns."""
        await self._send.aclose()

    async def run(self) -> None:
        try:
            await self._run()
        finally:
            self.finished.set()
            self._flushed.set()

    def _store(self, batch: list[Any]) -> None:
        if self._con is None:  # a cluster host's writer lands files: no database here
            self._insert(self._con, batch)
            return
        with writing:
            with_room(self._con, self._insert, self._con, batch)
            checkpoint_if_due(self._con, self._path)

    async def _run(self) -> None:
        async with self._recv:
            while True:
                try:
                    first = await self._recv.receive()
                except anyio.EndOfStream:
                    return
                batch = [first]
                deadline = time.monotonic() + self._flush_s
                closed = False
                # Rows arrive one by one: waiting on the stream for each cost a cancel scope, a timer
                # and a task switch per row. The batch takes what has arrived, then sleeps a little.
                while True:
                    try:
                        while len(batch) < self._batch_max:
                            batch.append(self._recv.receive_nowait())
                    except anyio.WouldBlock:
                        pass
                    except anyio.EndOfStream:
                        closed = True
                    remaining = deadline - time.monotonic()
                    if closed or len(batch) >= self._batch_max or remaining <= 0:
                        break
                    await anyio.sleep(min(remaining, GATHER_S))
                # Shielded: once a batch is taken off the stream it must reach the database.
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(self._store, batch)
                self.rows_written += len(batch)
                self._flushed.set()
                self._flushed = anyio.Event()
                if self.on_flush is not None:
                    self.on_flush(batch)
                if closed:
                    return

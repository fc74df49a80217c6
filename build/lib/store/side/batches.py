"""Provider batches as data (store/side/batches.sql): recorded before submission, re-attached after a crash.

Named functions with named columns; the engine never writes SQL for these tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

import duckdb
import msgspec
import pyarrow as pa

from store.transaction import transaction

SUBMITTING = "submitting"  # recorded, not yet known to be created at the provider
NOT_SUBMITTED = "not_submitted"  # never reached the provider (create failed, or not found after a crash)
STALE = "stale"  # made with other prompt stamps or another endpoint than the current run's: never collected


class ItemKey(msgspec.Struct, frozen=True, array_like=True):
    """The results key of the item a request carries."""

    dataset: str
    item_id: str
    sample: int


class AnswerKey(msgspec.Struct, frozen=True, array_like=True):
    """The results key of the answer a judge's or an extractor's request is about (``model`` answered it)."""

    model: str
    dataset: str
    item_id: str
    sample: int


MODEL, JUDGE, EXTRACTOR = "model", "judge", "extractor"  # the lanes a batch may belong to


class BatchRecord(msgspec.Struct, kw_only=True):
    label: str
    run_id: str | None
    model: str
    provider: str
    batch_id: str | None
    status: str
    provider_status: str | None
    n_requests: int
    stamp: str | None
    succeeded: int | None
    failed: int | None
    est_cost_usd: float | None
    submitted_at: datetime | None
    ended_at: datetime | None
    collected: bool
    lane: str = MODEL


_FIELDS = list(BatchRecord.__struct_fields__)


def _now() -> datetime:
    return datetime.now(UTC)


def record_batch(con: duckdb.DuckDBPyConnection, *, label: str, run_id: str | None, model: str, provider: str,
                 items: Mapping[str, ItemKey | AnswerKey], est_cost_usd: float | None, stamp: str | None = None,
                 lane: str = MODEL) -> None:
    """A batch about to be submitted and the items it carries (custom_id -> key), in one transaction.

    A model's batch carries its own items (ItemKey); a judge's or extractor's, answers of any model (AnswerKey)."""
    rows = pa.table({  # noqa: F841 - referenced by name in the SQL
        "label": [label] * len(items), "custom_id": list(items),
        "model": [k.model if isinstance(k, AnswerKey) else model for k in items.values()],
        "dataset": [k.dataset for k in items.values()], "item_id": [k.item_id for k in items.values()],
        "sample": pa.array([k.sample for k in items.values()], pa.int32()),
    })
    with transaction(con):
        con.execute("INSERT INTO batches (label, run_id, model, provider, batch_id, status, n_requests, stamp, "
                    "est_cost_usd, submitted_at, collected, lane) VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, false, ?)",
                    [label, run_id, model, provider, SUBMITTING, len(items), stamp, est_cost_usd, _now(), lane])
        con.execute("INSERT INTO batch_items (label, custom_id, model, dataset, item_id, sample) "
                    "SELECT label, custom_id, model, dataset, item_id, sample FROM rows")


def set_created(con: duckdb.DuckDBPyConnection, label: str, batch_id: str, *, status: str = "running",
                provider_status: str | None = None) -> None:
    """The provider created the batch: its id, stored before the engine waits on it."""
    con.execute("UPDATE batches SET batch_id = ?, status = ?, provider_status = ? WHERE label = ?",
                [batch_id, status, provider_status, label])


def set_status(con: duckdb.DuckDBPyConnection, label: str, *, status: str, provider_status: str | None,
               succeeded: int | None = None, failed: int | None = None, ended: bool = False) -> None:
    con.execute("UPDATE batches SET status = ?, provider_status = ?, succeeded = coalesce(?, succeeded), "
                "failed = coalesce(?, failed), ended_at = CASE WHEN ? THEN coalesce(ended_at, ?) ELSE ended_at END "
                "WHERE label = ?", [status, provider_status, succeeded, failed, ended, _now(), label])


def set_not_submitted(con: duckdb.DuckDBPyConnection, label: str, why: str, *, status: str = NOT_SUBMITTED) -> None:
    """The batch never reached the provider (or is ``STALE``): closed, its items free to go in another one."""
    con.execute("UPDATE batches SET status = ?, provider_status = ?, collected = true, ended_at = ? WHERE label = ?",
                [status, why[:200], _now(), label])


def mark_collected(con: duckdb.DuckDBPyConnection, label: str) -> None:
    con.execute("UPDATE batches SET collected = true, ended_at = coalesce(ended_at, ?) WHERE label = ?",
                [_now(), label])


def _records(con: duckdb.DuckDBPyConnection, where: str, params: list) -> list[BatchRecord]:
    rows = con.execute(f"SELECT {', '.join(_FIELDS)} FROM batches {where} ORDER BY submitted_at, label",
                       params).fetchall()
    return [BatchRecord(**dict(zip(_FIELDS, r))) for r in rows]


def open_batches(con: duckdb.DuckDBPyConnection, model: str, lane: str = MODEL) -> list[BatchRecord]:
    """This model's (judge's, extractor's) batches whose outcomes are not stored yet (in flight, or ended
    while nobody watched)."""
    return _records(con, "WHERE model = ? AND lane = ? AND NOT collected", [model, lane])


def list_batches(con: duckdb.DuckDBPyConnection, model: str | None = None) -> list[BatchRecord]:
    if model is None:
        return _records(con, "", [])
    return _records(con, "WHERE model = ?", [model])


def known_batch_ids(con: duckdb.DuckDBPyConnection, provider: str) -> frozenset[str]:
    """Every provider id the database holds for ``provider``, whatever the lane or model: a batch whose
    create answer was lost is none of these (what ``find`` needs where the API keeps no label)."""
    rows = con.execute("SELECT DISTINCT batch_id FROM batches WHERE provider = ? AND batch_id IS NOT NULL",
                       [provider]).fetchall()
    return frozenset(r[0] for r in rows)


def batch_items(con: duckdb.DuckDBPyConnection, label: str) -> dict[str, ItemKey]:
    rows = con.execute("SELECT custom_id, dataset, item_id, sample FROM batch_items WHERE label = ?",
                       [label]).fetchall()
    return {c: ItemKey(d, i, s) for c, d, i, s in rows}


def batch_answers(con: duckdb.DuckDBPyConnection, label: str) -> dict[str, AnswerKey]:
    """The answers a judge's or extractor's batch asks about (custom_id -> key)."""
    rows = con.execute("SELECT custom_id, model, dataset, item_id, sample FROM batch_items WHERE label = ?",
                       [label]).fetchall()
    return {c: AnswerKey(m, d, i, s) for c, m, d, i, s in rows}


def answered(con: duckdb.DuckDBPyConnection, model: str, label: str) -> set[str]:
    """custom_ids of the batch whose item already has an `ok` row: a second collection skips them."""
    rows = con.execute(
        "SELECT b.custom_id FROM batch_items b JOIN results r ON r.model = b.model AND r.dataset = b.dataset "
        "AND r.item_id = b.item_id AND r.sample = b.sample WHERE b.label = ? AND b.model = ? AND r.status = 'ok'",
        [label, model]).fetchall()
    return {c for (c,) in rows}


def batched_summary(con: duckdb.DuckDBPyConnection, model: str | None = None
                    ) -> list[tuple[str, str, str, int, int, int]]:
    """Per lane and model (judge, extractor): (lane, model, provider, batches, distinct items they carried,
    batches still open), counting the batches that reached the provider."""
    rows = con.execute(
        "SELECT coalesce(b.lane, 'model') AS lane, b.model, any_value(b.provider), count(DISTINCT b.label), "
        "count(DISTINCT (i.model, i.dataset, i.item_id, i.sample)), "
        "count(DISTINCT b.label) FILTER (WHERE NOT b.collected) "
        "FROM batches b JOIN batch_items i USING (label) WHERE b.status NOT IN (?, ?) AND (? IS NULL OR b.model = ?) "
        "GROUP BY lane, b.model ORDER BY lane <> 'model', lane, b.model", [NOT_SUBMITTED, STALE, model, model]).fetchall()
    return [(lane, m, p, int(n), int(items), int(open_)) for lane, m, p, n, items, open_ in rows]

"""The batches a database records, as lines: the `batches` listing and what `report` says was batched.

Read-only: cancelling batches is the `batches` command's (engine/sweep/batches.py).
"""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb

from store.side import batches as store
from store.side.batches import BatchRecord


def _age(rec: BatchRecord, now: datetime) -> str:
    if rec.submitted_at is None:
        return "-"
    s = int(((rec.ended_at or now) - rec.submitted_at).total_seconds())
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def _time(t: datetime | None) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%d %H:%M") if t is not None else "-"


def table(recs: list[BatchRecord], now: datetime | None = None) -> list[str]:
    """The listing, one line per batch (age: submitted until ended, or until now while in flight)."""
    now = now or datetime.now(UTC)
    head = ("model", "lane", "provider", "batch id", "status", "provider status", "requests", "ok", "failed",
            "submitted (UTC)", "ended (UTC)", "age", "collected")
    body = [(r.model, r.lane, r.provider, r.batch_id or "-", r.status, r.provider_status or "-", str(r.n_requests),
             "-" if r.succeeded is None else str(r.succeeded), "-" if r.failed is None else str(r.failed),
             _time(r.submitted_at), _time(r.ended_at), _age(r, now), "yes" if r.collected else "no") for r in recs]
    widths = [max(len(row[i]) for row in (head, *body)) for i in range(len(head))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in (head, *body)]


def report_lines(con: duckdb.DuckDBPyConnection, model: str | None = None) -> list[str]:
    """What `report` says was batched: a line per model."""
    try:
        rows = store.batched_summary(con, model)
    except duckdb.CatalogException:  # a database made before batches existed
        return []
    what = {store.JUDGE: "answer(s) judged", store.EXTRACTOR: "answer(s) read"}
    return [f"batched: {'' if lane == store.MODEL else lane + ' '}{m} ({provider}): {items} "
            f"{what.get(lane, 'item(s)')} via its batch API in {n} batch(es)"
            + (f", {left} still open (run the sweep again to collect them)" if left else "")
            for lane, m, provider, n, items, left in rows]

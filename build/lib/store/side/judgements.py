"""The judgements table: batch upsert (for store.results.writer.Writer), the judge's resume queries, metrics."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import msgspec
import orjson
import pyarrow as pa

from store.query import single
from store.transaction import transaction
from store.upsert import arrow_batch, upsert_sql

_SQL = Path(__file__).with_name("judgements.sql")


class JudgementRow(msgspec.Struct, array_like=True):
    """One row of `judgements`, in column order (store/side/judgements.sql)."""

    model: str
    dataset: str
    item_id: str
    sample: int
    judge: str
    rubric: str
    answer_md5: str
    status: str
    reason: str | None
    error_class: str | None
    verdict: dict[str, float] | None
    score: float | None
    raw: str | None
    prompt_truncated: bool | None
    attempts: int
    latency_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    judge_version: str | None
    run_id: str | None
    started_at: datetime
    finished_at: datetime


_TS = pa.timestamp("us", tz="UTC")
_FIELDS: list[tuple[str, pa.DataType]] = [  # annotated: the checker cannot infer a list of mixed types
    ("model", pa.string()), ("dataset", pa.string()), ("item_id", pa.string()), ("sample", pa.int32()),
    ("judge", pa.string()), ("rubric", pa.string()), ("answer_md5", pa.string()), ("status", pa.string()),
    ("reason", pa.string()), ("error_class", pa.string()), ("verdict", pa.string()), ("score", pa.float64()),
    ("raw", pa.string()), ("prompt_truncated", pa.bool_()), ("attempts", pa.int32()), ("latency_ms", pa.float64()),
    ("input_tokens", pa.int32()), ("output_tokens", pa.int32()), ("judge_version", pa.string()),
    ("run_id", pa.string()), ("started_at", _TS), ("finished_at", _TS),
]
_SCHEMA = pa.schema(_FIELDS)
KEY = ("model", "dataset", "item_id", "sample", "judge")  # the primary key (store/side/judgements.sql)
_COLUMNS = [f.name for f in _SCHEMA]
# A new verdict replaces the earlier row (an error, or a verdict on an older answer); attempts add up.
_UPSERT = upsert_sql("judgements", _COLUMNS, 5)


def answer_md5(response: str | None) -> str:
    """What ties a verdict to the answer it judged; equal to DuckDB's md5(coalesce(response, ''))."""
    return hashlib.md5((response or "").encode("utf-8")).hexdigest()


def ensure_judgement_tables(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(_SQL.read_text(encoding="utf-8"))


def insert_judgements(con: duckdb.DuckDBPyConnection, rows: list[JudgementRow]) -> None:
    """Upsert rows in one transaction (the insert function of the judge's Writer)."""
    batch = arrow_batch(rows, _SCHEMA, frozenset({"verdict"}))  # noqa: F841 - read by name in the SQL
    with transaction(con):
        con.execute(_UPSERT)


def record_judge(con: duckdb.DuckDBPyConnection, name: str, provider: str, base_url: str | None, model_id: str,
                 generation: dict[str, Any], context_tokens: int | None) -> None:
    con.execute("INSERT OR REPLACE INTO judges VALUES (?, ?, ?, ?, ?, ?, ?)",
                [name, provider, base_url, model_id, orjson.dumps(generation).decode(), context_tokens,
                 datetime.now(timezone.utc)])


def declare_metrics(con: duckdb.DuckDBPyConnection, dataset: str, rubric: Any, judge: str | None) -> None:
    """Write a dataset's judge metrics. Without a judge, rows already naming one are kept."""
    with transaction(con):  # one commit, not one per statement
        for spec in rubric.metrics:
            if spec.kind != "mean":
                raise ValueError(f"judge metric {dataset}.{spec.name}: only kind 'mean' is supported")
            if judge is None:
                con.execute("INSERT OR IGNORE INTO judge_metrics VALUES (?, ?, ?, ?, ?, NULL)",
                            [dataset, spec.name, spec.kind, spec.a, rubric.version])
            else:
                con.execute("INSERT OR REPLACE INTO judge_metrics VALUES (?, ?, ?, ?, ?, ?)",
                            [dataset, spec.name, spec.kind, spec.a, rubric.version, judge])


def _wanted(models: list[str], rubrics: dict[str, str]) -> pa.Table:
    return pa.table({
        "model": [m for m in models for _ in rubrics],
        "dataset": [d for _ in models for d in rubrics],
        "rubric": [r for _ in models for r in rubrics.values()],
    })


# Ok answers of the wanted (model, dataset)s among the planned items, stored before this
# run, without a settled verdict by this judge and rubric on that very answer.
_PENDING = """
SELECT r.model, r.dataset, r.item_id, r.sample, r.response, r.prediction
FROM results r
JOIN wanted w ON w.model = r.model AND w.dataset = r.dataset
SEMI JOIN plan_t p ON p.dataset = r.dataset AND p.item_id = r.item_id
WHERE r.status = 'ok' AND r.run_id IS DISTINCT FROM $run
  AND r.extracted_by IS DISTINCT FROM 'imported'  -- scores made elsewhere (store/estimates/import_items.py): not ours to judge
  AND NOT EXISTS (
      SELECT 1 FROM judgements j
      WHERE j.model = r.model AND j.dataset = r.dataset AND j.item_id = r.item_id AND j.sample = r.sample
        AND j.judge = $judge AND j.rubric = w.rubric AND j.status IN ('ok', 'empty', 'unparsed', 'refused', 'unjudgeable')
        AND j.answer_md5 = md5(coalesce(r.response, '')))
"""


def pending_count(con: duckdb.DuckDBPyConnection, judge: str, run_id: str, models: list[str],
                  rubrics: dict[str, str], plan: dict[str, list[str]]) -> int:
    wanted = _wanted(models, rubrics)  # noqa: F841 - read by name in the SQL
    plan_t = _plan(plan)  # noqa: F841 - read by name in the SQL
    return single(con.execute(f"SELECT count(*) FROM ({_PENDING})", {"run": run_id, "judge": judge}).fetchone())


def pending_page(con: duckdb.DuckDBPyConnection, judge: str, run_id: str, models: list[str],
                 rubrics: dict[str, str], plan: dict[str, list[str]], after: tuple = ("", "", "", -1),
                 page: int = 256) -> list[tuple]:
    """One page of the backlog after the key ``after`` (keyset pagination): memory holds a page."""
    wanted = _wanted(models, rubrics)  # noqa: F841 - read by name in the SQL
    plan_t = _plan(plan)  # noqa: F841
    sql = (_PENDING + " AND (r.model, r.dataset, r.item_id, r.sample) > ($m, $d, $i, $s)"
           + f" ORDER BY r.model, r.dataset, r.item_id, r.sample LIMIT {int(page)}")
    params = {"run": run_id, "judge": judge, "m": after[0], "d": after[1], "i": after[2], "s": after[3]}
    return con.execute(sql, params).fetchall()


def pending(con: duckdb.DuckDBPyConnection, judge: str, run_id: str, models: list[str],
            rubrics: dict[str, str], plan: dict[str, list[str]], page: int = 256) -> Iterator[tuple]:
    """The whole backlog, page by page."""
    after: tuple = ("", "", "", -1)
    while True:
        rows = pending_page(con, judge, run_id, models, rubrics, plan, after, page)
        yield from rows
        if len(rows) < page:
            return
        after = rows[-1][:4]


def other_rubrics(con: duckdb.DuckDBPyConnection, judge: str, rubrics: dict[str, str]) -> int:
    """Judgements by this judge on these datasets made with another rubric version."""
    cur = pa.table({"dataset": list(rubrics), "rubric": list(rubrics.values())})  # noqa: F841 - read by name in the SQL
    return int(single(con.execute("SELECT count(*) FROM judgements j JOIN cur c ON c.dataset = j.dataset "
                                  "WHERE j.judge = ? AND j.rubric <> c.rubric", [judge]).fetchone()))


def _plan(plan: dict[str, list[str]]) -> pa.Table:
    return pa.table({"dataset": [d for d, ids in plan.items() for _ in ids],
                     "item_id": [i for ids in plan.values() for i in ids]})


def delete_judgements(con: duckdb.DuckDBPyConnection, models: list[str], datasets: list[str]) -> int:
    sel = pa.table({"model": models})  # noqa: F841 - read by name in the SQL
    dsel = pa.table({"dataset": datasets})  # noqa: F841 - read by name in the SQL
    return int(single(con.execute("DELETE FROM judgements WHERE model IN (SELECT model FROM sel) "
                                  "AND dataset IN (SELECT dataset FROM dsel)").fetchone()))

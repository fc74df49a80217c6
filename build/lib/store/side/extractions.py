"""The extractions table (extractions.sql): batch upsert, the extractor's backlog, readings applied to results."""

from __future__ import annotations

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

_SQL = Path(__file__).with_name("extractions.sql")
# Statuses that settle an answer for good; 'error' is retried on the next run.
DONE = ("ok", "none", "unparsed", "refused", "not_choice")


class ExtractionRow(msgspec.Struct, array_like=True):
    """One row of `extractions`, in column order."""

    model: str
    dataset: str
    item_id: str
    sample: int
    extractor: str
    prompt_version: str
    answer_md5: str
    status: str
    codes: list[str] | None
    prediction: Any
    score: float | None
    measures: dict[str, float] | None
    scorer_version: str | None
    raw: str | None
    error_class: str | None
    error: str | None
    attempts: int
    latency_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    extractor_version: str | None
    run_id: str | None
    started_at: datetime
    finished_at: datetime


_TS = pa.timestamp("us", tz="UTC")
_FIELDS: list[tuple[str, pa.DataType]] = [  # annotated: the checker cannot infer a list of mixed types
    ("model", pa.string()), ("dataset", pa.string()), ("item_id", pa.string()), ("sample", pa.int32()),
    ("extractor", pa.string()), ("prompt_version", pa.string()), ("answer_md5", pa.string()),
    ("status", pa.string()), ("codes", pa.string()), ("prediction", pa.string()), ("score", pa.float64()),
    ("measures", pa.string()), ("scorer_version", pa.string()), ("raw", pa.string()), ("error_class", pa.string()),
    ("error", pa.string()), ("attempts", pa.int32()), ("latency_ms", pa.float64()), ("input_tokens", pa.int32()),
    ("output_tokens", pa.int32()), ("cost_usd", pa.float64()), ("extractor_version", pa.string()),
    ("run_id", pa.string()), ("started_at", _TS), ("finished_at", _TS),
]
_SCHEMA = pa.schema(_FIELDS)
KEY = ("model", "dataset", "item_id", "sample", "extractor")  # the primary key (store/side/extractions.sql)
_JSON = frozenset({"codes", "prediction", "measures"})
_COLUMNS = [f.name for f in _SCHEMA]
_UPSERT = upsert_sql("extractions", _COLUMNS, 5)
# A reading of the very answer stored, scored by the scorer the row was scored by, replaces "unread".
_APPLY = """
UPDATE results r SET prediction = e.prediction, score = e.score, measures = e.measures, extracted_by = 'model'
FROM {source} e
WHERE r.model = e.model AND r.dataset = e.dataset AND r.item_id = e.item_id AND r.sample = e.sample
  AND e.status = 'ok' AND e.prediction IS NOT NULL AND r.status = 'ok' AND r.prediction IS NULL
  AND e.answer_md5 = md5(coalesce(r.response, '')) AND e.scorer_version = r.scorer_version
"""


def ensure_extraction_tables(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(_SQL.read_text(encoding="utf-8"))


def insert_extractions(con: duckdb.DuckDBPyConnection, rows: list[ExtractionRow]) -> None:
    """Upsert rows and apply their readings to `results`, in one transaction (the lane Writer's insert)."""
    batch = arrow_batch(rows, _SCHEMA, _JSON)  # noqa: F841 - read by name in the SQL
    with transaction(con):
        con.execute(_UPSERT)
        # A row stored in this run may not be in `results` yet (another writer): apply_readings
        # after the sweep catches those.
        con.execute(_APPLY.format(source="batch"))


def apply_readings(con: duckdb.DuckDBPyConnection) -> int:
    """Apply every stored reading to the unread answers it read; returns the rows updated."""
    return int(single(con.execute(_APPLY.format(source="extractions")).fetchone()))


def record_extractor(con: duckdb.DuckDBPyConnection, name: str, provider: str, base_url: str, model_id: str,
                     generation: dict[str, Any], prompt_version: str) -> None:
    con.execute("INSERT OR REPLACE INTO extractors VALUES (?, ?, ?, ?, ?, ?, ?)",
                [name, provider, base_url, model_id, orjson.dumps(generation).decode(), prompt_version,
                 datetime.now(timezone.utc)])


# Unread ok answers of the wanted (model, dataset)s among the planned items, stored before this run,
# that the extractor may read (text, not blocked, not cut off) and has not settled for that very answer.
_PENDING = f"""
SELECT r.model, r.dataset, r.item_id, r.sample, r.response, r.finish_reason
FROM results r
SEMI JOIN wanted w ON w.model = r.model AND w.dataset = r.dataset
SEMI JOIN plan_t p ON p.dataset = r.dataset AND p.item_id = r.item_id
WHERE r.status = 'ok' AND r.prediction IS NULL AND r.blocked IS NULL
  AND r.extracted_by IS DISTINCT FROM 'imported'  -- imported rows (store/estimates/import_items.py) are not ours to read
  AND r.response IS NOT NULL AND regexp_matches(r.response, '\\S')
  AND NOT list_contains($cut::VARCHAR[], coalesce(r.finish_reason, ''))
  AND r.run_id IS DISTINCT FROM $run
  AND NOT EXISTS (
      SELECT 1 FROM extractions e
      WHERE e.model = r.model AND e.dataset = r.dataset AND e.item_id = r.item_id AND e.sample = r.sample
        AND e.extractor = $ex AND e.prompt_version = $pv AND e.status IN {DONE}
        AND e.answer_md5 = md5(coalesce(r.response, '')))
"""


def _tables(models: list[str], plan: dict[str, list[str]]) -> tuple[pa.Table, pa.Table]:
    wanted = pa.table({"model": [m for m in models for _ in plan], "dataset": [d for _ in models for d in plan]})
    plan_t = pa.table({"dataset": [d for d, ids in plan.items() for _ in ids],
                       "item_id": [i for ids in plan.values() for i in ids]})
    return wanted, plan_t


def pending_count(con: duckdb.DuckDBPyConnection, extractor: str, prompt_version: str, run_id: str,
                  models: list[str], plan: dict[str, list[str]], cut: list[str]) -> int:
    wanted, plan_t = _tables(models, plan)  # noqa: F841 - read by name in the SQL
    params = {"run": run_id, "ex": extractor, "pv": prompt_version, "cut": cut}
    return int(single(con.execute(f"SELECT count(*) FROM ({_PENDING})", params).fetchone()))


def pending_page(con: duckdb.DuckDBPyConnection, extractor: str, prompt_version: str, run_id: str,
                 models: list[str], plan: dict[str, list[str]], cut: list[str], after: tuple = ("", "", "", -1),
                 page: int = 256) -> list[tuple]:
    """One page of the backlog after the key ``after`` (keyset pagination)."""
    wanted, plan_t = _tables(models, plan)  # noqa: F841 - read by name in the SQL
    sql = (_PENDING + " AND (r.model, r.dataset, r.item_id, r.sample) > ($m, $d, $i, $s)"
           + f" ORDER BY r.model, r.dataset, r.item_id, r.sample LIMIT {int(page)}")
    params = {"run": run_id, "ex": extractor, "pv": prompt_version, "cut": cut,
              "m": after[0], "d": after[1], "i": after[2], "s": after[3]}
    return con.execute(sql, params).fetchall()


def stored_readings(con: duckdb.DuckDBPyConnection, dataset: str) -> dict[tuple[str, str, int], tuple[str, list]]:
    """(model, item_id, sample) -> (answer_md5, codes) of the latest ok reading of each answer of a dataset."""
    rows = con.execute("""SELECT model, item_id, sample, answer_md5, codes FROM extractions
                          WHERE dataset = ? AND status = 'ok' AND codes IS NOT NULL
                          QUALIFY row_number() OVER (PARTITION BY model, item_id, sample
                                                     ORDER BY finished_at DESC) = 1""", [dataset]).fetchall()
    return {(m, i, s): (h, orjson.loads(c)) for m, i, s, h, c in rows}


def delete_extractions(con: duckdb.DuckDBPyConnection, models: list[str], datasets: list[str]) -> int:
    return int(single(con.execute("DELETE FROM extractions WHERE model IN (SELECT unnest(?::VARCHAR[])) "
                                  "AND dataset IN (SELECT unnest(?::VARCHAR[]))", [models, datasets]).fetchone()))

"""Batches of a helper's rows (judgements, extractions): Arrow tables and the upsert that stores them."""

from __future__ import annotations

from typing import Any

import msgspec
import orjson
import pyarrow as pa


def upsert_sql(table: str, columns: list[str], key: int) -> str:
    """Insert `batch`; a row whose first ``key`` columns exist replaces it, its attempts adding up."""
    return f"""
INSERT INTO {table} ({", ".join(columns)}) SELECT * FROM batch
ON CONFLICT ({", ".join(columns[:key])}) DO UPDATE SET
  {", ".join(f"{c} = excluded.{c}" for c in columns[key:] if c != "attempts")},
  attempts = {table}.attempts + excluded.attempts
"""


def arrow_batch(rows: list[Any], schema: pa.Schema, json_columns: frozenset[str]) -> pa.Table:
    """Array-like msgspec rows, in the schema's column order, as an Arrow table (JSON columns as text)."""
    cols = list(zip(*(msgspec.structs.astuple(r) for r in rows)))
    arrays = [pa.array([None if v is None else orjson.dumps(v).decode() for v in values], type=f.type)
              if f.name in json_columns else pa.array(values, type=f.type)
              for f, values in zip(schema, cols)]
    return pa.Table.from_arrays(arrays, schema=schema)

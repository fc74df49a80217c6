"""Import per-item results made elsewhere as rows of `results`, like a sweep's.

    python -m engine import-items results.duckdb items.csv[.gz] | items.jsonl[.gz] | items.parquet

Columns: model, dataset, item_id, score (0..1); optional response, prediction, gold. The whole
file is read and checked before anything is written, and everything is written in one
transaction: a bad file (missing or unknown column, empty key, a score that is not a number
in 0..1, a duplicate key, an unreadable file, an item a known dataset does not have) is one
UserError naming the line (CSV, JSONL) or row (Parquet) and leaves the database as it was.

An imported row is an `ok` row, sample 0, marked as imported: prompt_hash, scorer_version and
extracted_by are IMPORTED and `identity` names the file. The resume checks skip such rows
(store/results/resume.py, store/results/identity.py), so a sweep counts them as answered and never asks them
again unless --fresh deletes them; the views never count them as unparsed (the other harness
read the answer, or did not say). Importing a key again replaces its imported row (or an error
row); a key a sweep answered is refused: that row was measured here.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import orjson
import pyarrow as pa

from store.estimates.item_files import FORMATS, ItemFileError, ItemTable, read_file
from store.results.resume import IMPORTED
from store.transaction import transaction

__all__ = ["FORMATS", "ItemFileError", "ItemTable", "check_items", "read_items", "write_items"]


def read_items(path: Path) -> ItemTable:
    """Read and check the whole file (not yet against the datasets' items: check_items)."""
    items = read_file(path)
    _no_duplicates(items)
    return items


def _no_duplicates(items: ItemTable) -> None:
    keys = items.table.select(["model", "dataset", "item_id"]).append_column(  # noqa: F841 - read by the SQL
        "pos", pa.array(range(items.table.num_rows), pa.int64()))
    with duckdb.connect() as con:  # in memory: nothing is written before the file is known good
        if not con.execute("SELECT count(*) > 0 FROM (SELECT 1 FROM keys GROUP BY model, dataset, item_id "
                           "HAVING count(*) > 1)").fetchall()[0][0]:
            return  # the common case, one hash aggregate; where the first one is, only when there is one
        row = con.execute("SELECT pos, first FROM (SELECT pos, min(pos) OVER (PARTITION BY model, dataset, item_id) "
                          "AS first FROM keys) WHERE pos > first ORDER BY pos LIMIT 1").fetchone()
    if row is not None:
        again, first = int(row[0]), int(row[1])
        k = items.table.slice(again, 1).to_pylist()[0]
        raise ItemFileError(f"{items.where(again)}: {k['model']}/{k['dataset']}/{k['item_id']} already given "
                            f"on {items.at(first)}")


def check_items(items: ItemTable, known: Mapping[str, set[str]], suite: str) -> None:
    """Each row of a dataset in `known` (the suite's datasets: id -> its item ids) names one of its items."""
    datasets = items.table.column("dataset").to_pylist()
    ids = items.table.column("item_id").to_pylist()
    for k, (d, i) in enumerate(zip(datasets, ids)):
        if d is not None and d in known and i not in known[d]:
            raise ItemFileError(f"{items.where(k)}: item {i!r} is not an item of dataset {d} (suite {suite})")


def write_items(con: duckdb.DuckDBPyConnection, items: ItemTable, *, source: Path, suite_version: str,
                identity: str) -> int:
    """Store the rows in one transaction; returns how many. Refuses keys a sweep answered."""
    t = items.table
    n = t.num_rows
    now = datetime.now(UTC)
    fresh = pa.table({  # noqa: F841 - read by the SQL; the results row of store/results/schema.sql, as a sweep writes it
        "model": t.column("model"), "dataset": t.column("dataset"), "item_id": t.column("item_id"),
        "score": t.column("score"), "response": t.column("response"), "prediction": t.column("prediction"),
        "gold": t.column("gold"), "pos": pa.array(range(n), pa.int64()),
    })
    with transaction(con):
        clash = con.execute(
            """
            SELECT f.pos FROM fresh f JOIN results r USING (model, dataset, item_id)
            WHERE r.status = 'ok' AND r.prompt_hash IS DISTINCT FROM ? ORDER BY f.pos LIMIT 1
            """, [IMPORTED]).fetchone()
        if clash is not None:
            k = t.slice(int(clash[0]), 1).to_pylist()[0]
            raise ItemFileError(f"{items.where(int(clash[0]))}: {k['model']}/{k['dataset']}/{k['item_id']} was "
                                "answered by a sweep; its row is kept (delete it, or import under another model name)")
        con.execute("DELETE FROM results r USING fresh f "
                    "WHERE r.model = f.model AND r.dataset = f.dataset AND r.item_id = f.item_id")
        con.execute(
            """
            INSERT INTO results (model, dataset, item_id, sample, status, attempts, response, prediction, gold,
                                 score, prompt_hash, suite_version, scorer_version, started_at, finished_at,
                                 identity, extracted_by)
            SELECT model, dataset, item_id, 0, 'ok', 0, response, prediction::JSON, gold::JSON, score,
                   $imported, $suite_version, $imported, $now, $now, $identity, $imported
            FROM fresh
            """, {"imported": IMPORTED, "suite_version": suite_version, "now": now, "identity": identity})
        con.execute("INSERT OR IGNORE INTO identities VALUES (?, ?)",
                    [identity, orjson.dumps({"provider": IMPORTED, "file": str(source)}).decode()])
    return n

"""Import per-item results made elsewhere as rows of `results`, like a sweep's.

    python -m engine import-items results.duckdb items.csv[.gz] | items.jsonl[.gz] | items.parquet

Columns: model, dataset, item_id, score (0..1); optional response, prediction, gold. The whole
file is read and checked before anything is written, and everything is written in one
transaction: a bad file (missing or unknown column, empty key, a score that is not a number
in 0..1, a duplicate key, an unreadable file, an item a known dataset does not have) is one
UserError naming the line (CSV, JSONL) or row (Parquet) and leaves the database as it was.

An imported row is an `ok` row, sample 0, marked as imported: prompt_hash, scorer_version and
extracted_by are IMPORTED and `identity` names the file. The resume checks skip such rows
(store/resume.py, store/identity.py), so a sweep counts them as answered and never asks them
again unless --fresh deletes them; the views never count them as unparsed (the other harness
read the answer, or did not say). Importing a key again replaces its imported row (or an error
row); a key a sweep answered is refused: that row was measured here.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from benchmark.errors import UserError
from store.resume import IMPORTED
from store.transaction import transaction

REQUIRED = ("model", "dataset", "item_id", "score")
OPTIONAL = ("response", "prediction", "gold")
FORMATS = (".csv", ".csv.gz", ".jsonl", ".jsonl.gz", ".parquet")


class ItemFileError(UserError):
    """Bad input; the message is one line naming the file and the line, row or column."""


class ItemTable:
    """The file's rows as Arrow columns, and where each came from (for messages)."""

    def __init__(self, table: pa.Table, path: Path, unit: str, lines: list[int]):
        self.table, self.path, self.unit, self.lines = table, path, unit, lines

    def at(self, k: int) -> str:
        """Row position k in the file's terms: 'line 12' (CSV, JSONL) or 'row 12' (Parquet)."""
        return f"{self.unit} {self.lines[k]}"

    def where(self, k: int) -> str:
        return f"{self.path}:{self.lines[k]}" if self.unit == "line" else f"{self.path}: row {self.lines[k]}"


def read_items(path: Path) -> ItemTable:
    """Read and check the whole file (not yet against the datasets' items: check_items)."""
    name = path.name.lower()
    fmt = next((f for f in sorted(FORMATS, key=len, reverse=True) if name.endswith(f)), None)
    if fmt is None:
        raise ItemFileError(f"{path}: unknown format: the name must end in {', '.join(FORMATS)}")
    try:
        if fmt == ".parquet":
            items = _parquet(path)
        else:
            with (gzip.open(path, "rb") if fmt.endswith(".gz") else open(path, "rb")) as raw:
                text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
                items = _csv(path, text) if fmt.startswith(".csv") else _jsonl(path, text)
    except (OSError, EOFError, UnicodeDecodeError, pa.ArrowException) as e:
        raise ItemFileError(f"{path}: cannot read: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    if items.table.num_rows == 0:
        raise ItemFileError(f"{path}: no rows")
    _no_duplicates(items)
    return items


def _columns(path: Path, names: list[str], where: str) -> None:
    unknown = [n for n in names if n not in REQUIRED + OPTIONAL]
    if unknown:
        raise ItemFileError(f"{where}: unknown column {unknown[0]!r} (columns: {', '.join(REQUIRED + OPTIONAL)})")
    missing = [n for n in REQUIRED if n not in names]
    if missing:
        raise ItemFileError(f"{where}: missing column {missing[0]!r} (required: {', '.join(REQUIRED)})")


def _score(raw: Any, where: str) -> float:
    if isinstance(raw, bool) or raw is None or raw == "":
        raise ItemFileError(f"{where}: score {raw!r} is not a number")
    try:
        v = float(raw)
    except (TypeError, ValueError):
        raise ItemFileError(f"{where}: score {raw!r} is not a number") from None
    if not (math.isfinite(v) and 0 <= v <= 1):
        raise ItemFileError(f"{where}: score {raw} is outside 0..1")
    return v


def _key(values: tuple[Any, ...], where: str) -> tuple[str, str, str]:
    for col, v in zip(REQUIRED, values):
        if not isinstance(v, (str, int)) or isinstance(v, bool) or not str(v).strip():
            raise ItemFileError(f"{where}: empty or invalid {col} {v!r}")
    m, d, i = (str(v).strip() for v in values)
    return m, d, i


class _Columns:
    """Rows accumulated column by column (a list per column: a dict per row would be slower)."""

    def __init__(self) -> None:
        self.cols: dict[str, list[Any]] = {c: [] for c in REQUIRED + OPTIONAL}
        self.lines: list[int] = []

    def add(self, key: tuple[str, str, str], score: float, extra: Mapping[str, Any], line: int) -> None:
        for c, v in zip(REQUIRED, (*key, score)):
            self.cols[c].append(v)
        for c in OPTIONAL:
            self.cols[c].append(extra.get(c))
        self.lines.append(line)

    def table(self, path: Path, unit: str) -> ItemTable:
        t = pa.table({**{c: pa.array(self.cols[c], pa.string()) for c in REQUIRED[:3]},
                      "score": pa.array(self.cols["score"], pa.float64()),
                      **{c: pa.array(self.cols[c], pa.string()) for c in OPTIONAL}})
        return ItemTable(t, path, unit, self.lines)


def _csv(path: Path, text: io.TextIOWrapper) -> ItemTable:
    reader = csv.reader(text)
    try:
        header = [h.strip().lower() for h in next(reader)]
    except StopIteration:
        raise ItemFileError(f"{path}: empty file (expected a header: {','.join(REQUIRED)})") from None
    except csv.Error as e:
        raise ItemFileError(f"{path}:1: malformed CSV: {e}") from None
    _columns(path, header, f"{path}:1")
    at = {c: header.index(c) for c in header}
    key_at = [at[c] for c in REQUIRED[:3]]
    score_at, extra_at = at["score"], [(c, at[c]) for c in OPTIONAL if c in at]
    out, start = _Columns(), reader.line_num + 1
    for fields in _csv_rows(path, reader):
        where = f"{path}:{start}"
        if len(fields) == 1 and not fields[0].strip():
            start = reader.line_num + 1
            continue  # a blank line
        if len(fields) != len(header):
            raise ItemFileError(f"{where}: expected {len(header)} fields, got {len(fields)}")
        key = _key(tuple(fields[k] for k in key_at), where)
        # An empty optional field is absent; text stays text (prediction and gold become JSON strings).
        out.add(key, _score(fields[score_at].strip(), where),
                {c: orjson.dumps(fields[k]).decode() if c != "response" else fields[k]
                 for c, k in extra_at if fields[k] != ""}, start)
        start = reader.line_num + 1
    return out.table(path, "line")


def _csv_rows(path: Path, reader: Any) -> Iterator[list[str]]:
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise ItemFileError(f"{path}:{reader.line_num}: malformed CSV: {e}") from None


def _jsonl(path: Path, text: io.TextIOWrapper) -> ItemTable:
    out = _Columns()
    for line, raw in enumerate(text, start=1):
        if not raw.strip():
            continue
        where = f"{path}:{line}"
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            raise ItemFileError(f"{where}: not JSON: {e}") from None
        if not isinstance(obj, dict):
            raise ItemFileError(f"{where}: expected an object with {', '.join(REQUIRED)}")
        _columns(path, list(obj), where)
        extra = {c: obj[c] if c == "response" else orjson.dumps(obj[c]).decode()
                 for c in OPTIONAL if obj.get(c) is not None}
        if "response" in extra and not isinstance(extra["response"], str):
            raise ItemFileError(f"{where}: response must be a string")
        out.add(_key((obj["model"], obj["dataset"], obj["item_id"]), where), _score(obj["score"], where), extra, line)
    return out.table(path, "line")


def _parquet(path: Path) -> ItemTable:
    table = pq.read_table(path)
    _columns(path, table.column_names, str(path))
    out = _Columns()
    cols = {c: table.column(c).to_pylist() for c in table.column_names}
    for k in range(table.num_rows):
        where = f"{path}: row {k + 1}"
        extra = {c: cols[c][k] if c == "response" else orjson.dumps(cols[c][k]).decode()
                 for c in OPTIONAL if c in cols and cols[c][k] is not None}
        out.add(_key((cols["model"][k], cols["dataset"][k], cols["item_id"][k]), where),
                _score(cols["score"][k], where), extra, k + 1)
    return out.table(path, "row")


def _no_duplicates(items: ItemTable) -> None:
    keys = items.table.select(["model", "dataset", "item_id"]).append_column(  # noqa: F841 - read by the SQL
        "pos", pa.array(range(items.table.num_rows), pa.int64()))
    with duckdb.connect() as con:  # in memory: nothing is written before the file is known good
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
    fresh = pa.table({  # noqa: F841 - read by the SQL; the results row of store/schema.sql, as a sweep writes it
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

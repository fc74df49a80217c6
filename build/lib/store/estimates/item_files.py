"""Reading per-item result files for import-items (store/estimates/import_items.py): CSV, JSONL, Parquet.

Fast path first: the file is read by pyarrow (C++, all columns at once) and normalised and checked
by one DuckDB query over it. When that finds anything wrong, or pyarrow cannot parse the file,
the row-by-row reader reads it again and raises on the first problem with its line (CSV, JSONL:
quoted newlines counted) or row (Parquet); an error costs a second read, a good file does not.
Line numbers of a good file are worked out only when a later check (a duplicate key, an item a
dataset does not have) needs one.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq

from benchmark.errors import UserError
from benchmark.names import name_problem

REQUIRED = ("model", "dataset", "item_id", "score")
OPTIONAL = ("response", "prediction", "gold")
FORMATS = (".csv", ".csv.gz", ".jsonl", ".jsonl.gz", ".parquet")


class ItemFileError(UserError):
    """Bad input; the message is one line naming the file and the line, row or column."""


class ItemTable:
    """The file's rows as Arrow columns (REQUIRED + OPTIONAL, keys as text, score a double,
    prediction and gold as JSON text), and where each came from (for messages)."""

    def __init__(self, table: pa.Table, path: Path, fmt: str, lines: list[int] | None = None):
        self.table, self.path, self.fmt, self._lines = table, path, fmt, lines

    def line(self, k: int) -> int:
        """The file's line (CSV, JSONL) or row (Parquet) of row position k."""
        if self.fmt == ".parquet":
            return k + 1
        if self._lines is None:
            self._lines = _line_map(self.path, self.fmt)
        return self._lines[k]

    def at(self, k: int) -> str:
        """Row position k in the file's terms: 'line 12' (CSV, JSONL) or 'row 12' (Parquet)."""
        return f"{'row' if self.fmt == '.parquet' else 'line'} {self.line(k)}"

    def where(self, k: int) -> str:
        return f"{self.path}: row {k + 1}" if self.fmt == ".parquet" else f"{self.path}:{self.line(k)}"


def read_file(path: Path) -> ItemTable:
    """The whole file, checked row by row (not yet for duplicates or against the datasets' items)."""
    name = path.name.lower()
    fmt = next((f for f in sorted(FORMATS, key=len, reverse=True) if name.endswith(f)), None)
    if fmt is None:
        raise ItemFileError(f"{path}: unknown format: the name must end in {', '.join(FORMATS)}")
    try:
        items = _fast(path, fmt)
        if items is None:  # something is off: the row-by-row reader says what, and where
            if fmt == ".parquet":
                items = _parquet(path)
            else:
                with _text(path, fmt) as text:
                    items = _csv(path, text) if fmt.startswith(".csv") else _jsonl(path, text)
    except (OSError, EOFError, UnicodeDecodeError, pa.ArrowException) as e:
        raise ItemFileError(f"{path}: cannot read: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    if items.table.num_rows == 0:
        raise ItemFileError(f"{path}: no rows")
    _check_models(items)
    return items


def _check_models(items: ItemTable) -> None:
    """Every distinct model name against the rule a models.toml name keeps (benchmark/names.py)."""
    models = items.table.column("model")
    for name in pc.unique(models).to_pylist():
        if problem := name_problem(str(name)):
            first = int(pc.index(models, name).as_py())
            raise ItemFileError(f"{items.where(first)}: model {str(name)[:60]!r} {problem}")


def _text(path: Path, fmt: str) -> io.TextIOWrapper:
    raw = gzip.open(path, "rb") if fmt.endswith(".gz") else open(path, "rb")
    return io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")


# One pass over the file as pyarrow read it: keys trimmed, the score a double, empty CSV fields absent,
# prediction and gold as JSON text; `bad` counts the rows the row-by-row reader would refuse.
_NORMALISE = """
SELECT trim(model::VARCHAR) AS model, trim(dataset::VARCHAR) AS dataset, trim(item_id::VARCHAR) AS item_id,
       TRY_CAST(trim(score::VARCHAR) AS DOUBLE) AS score, {response} AS response,
       {prediction} AS prediction, {gold} AS gold
FROM raw
"""
_BAD = """
SELECT count(*) FROM norm
WHERE model = '' OR dataset = '' OR item_id = '' OR model IS NULL OR dataset IS NULL OR item_id IS NULL
   OR score IS NULL OR isnan(score) OR score < 0 OR score > 1
"""


def _fast(path: Path, fmt: str) -> ItemTable | None:
    try:
        if fmt == ".parquet":
            raw = pq.read_table(path)
        elif fmt.startswith(".csv"):
            raw = pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(
                column_types={c: pa.string() for c in REQUIRED + OPTIONAL}, strings_can_be_null=False))
            raw = raw.rename_columns([c.strip().lower().lstrip("\ufeff") for c in raw.column_names])
        else:
            raw = pajson.read_json(path)
    except pa.ArrowException:
        return None
    if fmt.startswith(".csv"):
        _columns(path, raw.column_names, f"{path}:1")  # the header: its line is known
    elif set(raw.column_names) - set(REQUIRED + OPTIONAL) or set(REQUIRED) - set(raw.column_names):
        return None  # the row-by-row reader names the line (JSONL) or says which column (Parquet)
    if fmt != ".csv" and fmt != ".csv.gz":
        kinds = {c: raw.schema.field(c).type for c in raw.column_names}
        if any(pa.types.is_boolean(kinds[c]) for c in REQUIRED) or (
                "response" in kinds and not (pa.types.is_string(kinds["response"]) or pa.types.is_null(kinds["response"]))):
            return None
    text = fmt.startswith(".csv")
    def optional(c: str, as_json: bool) -> str:
        if c not in raw.column_names:
            return "NULL::VARCHAR"
        value = f"nullif({c}, '')" if text else c
        return f"to_json({value})::VARCHAR" if as_json else f"{value}::VARCHAR"
    with duckdb.connect() as con:
        norm = con.sql(_NORMALISE.format(response=optional("response", False), prediction=optional("prediction", True),
                                         gold=optional("gold", True))).to_arrow_table()
        if con.sql(_BAD).fetchall()[0][0]:
            return None
    return ItemTable(norm, path, fmt)


def _line_map(path: Path, fmt: str) -> list[int]:
    """The first line of every row, as the row-by-row readers count them."""
    with _text(path, fmt) as text:
        if not fmt.startswith(".csv"):
            return [k for k, line in enumerate(text, start=1) if line.strip()]
        reader = csv.reader(text)
        next(reader, None)
        out, start = [], reader.line_num + 1
        for fields in reader:
            if not (len(fields) == 1 and not fields[0].strip()):
                out.append(start)
            start = reader.line_num + 1
        return out


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

    def table(self, path: Path, fmt: str) -> ItemTable:
        t = pa.table({**{c: pa.array(self.cols[c], pa.string()) for c in REQUIRED[:3]},
                      "score": pa.array(self.cols["score"], pa.float64()),
                      **{c: pa.array(self.cols[c], pa.string()) for c in OPTIONAL}})
        return ItemTable(t, path, fmt, self.lines)


def csv_header(reader: Any, path: Path, expected: Sequence[str], error: type[UserError]) -> list[str]:
    """The header row of a CSV reader, lower-cased; `error` (one line) for an empty or malformed file."""
    try:
        return [h.strip().lower() for h in next(reader)]
    except StopIteration:
        raise error(f"{path}: empty file (expected a header: {','.join(expected)})") from None
    except csv.Error as e:
        raise error(f"{path}:1: malformed CSV: {e}") from None


def _csv(path: Path, text: io.TextIOWrapper) -> ItemTable:
    reader = csv.reader(text)
    header = csv_header(reader, path, REQUIRED, ItemFileError)
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
    return out.table(path, ".csv")


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
        obj = _object(raw, where)
        _columns(path, list(obj), where)
        extra = {c: obj[c] if c == "response" else orjson.dumps(obj[c]).decode()
                 for c in OPTIONAL if obj.get(c) is not None}
        if "response" in extra and not isinstance(extra["response"], str):
            raise ItemFileError(f"{where}: response must be a string")
        out.add(_key((obj["model"], obj["dataset"], obj["item_id"]), where), _score(obj["score"], where), extra, line)
    return out.table(path, ".jsonl")


def _object(raw: str, where: str) -> dict[str, Any]:
    """One JSONL line: an object, or the error naming the line."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise ItemFileError(f"{where}: not JSON: {e}") from None
    if isinstance(obj, dict):
        return obj
    raise ItemFileError(f"{where}: expected an object with {', '.join(REQUIRED)}")


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
    return out.table(path, ".parquet")

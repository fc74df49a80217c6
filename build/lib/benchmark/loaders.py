"""Finding and reading a dataset's files under the user's ``--data-dir``.

Layout (the one /work/shared/datasets has):

    <data_dir>/<dataset-id>/...                      originals, as published upstream
    <data_dir>/moodbench/<path>                      the reference implementation's data/ tree
    <data_dir>/<dataset-id>/moodbench/data/<path>    the same tree, kept per dataset

A dataset declares, in order of preference, the places its files may be
(``Files``); the first place that holds at least one file wins. Readers yield
plain dict rows with their 0-based row number, so item ids can be built from
the data itself and never from the order files happen to be listed in.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path
from typing import Iterator

import orjson

from benchmark.dataset import DataMissing, Files  # Files: part of the dataset contract

# Some CSV cells (long passages) exceed the csv module's 128 KiB default.
csv.field_size_limit(min(sys.maxsize, 2**31 - 1))

# pandas writes an unnamed index column as "" or "Unnamed: 0"; both become this.
INDEX_COLUMN = "_index"


def roots(files: Files, data_dir: Path, dataset_id: str) -> list[Path]:
    folder = files.folder or dataset_id
    if files.origin == "original":
        return [data_dir / folder]
    if files.origin == "reference":
        return [data_dir / "moodbench", data_dir / folder / "moodbench" / "data"]
    raise ValueError(f"{dataset_id}: unknown file origin {files.origin!r}")


def locate(candidates: tuple[Files, ...], data_dir: Path, dataset_id: str) -> tuple[Files, Path, list[Path]]:
    """The first candidate with files: (candidate, its root, sorted file paths)."""
    searched = []
    for cand in candidates:
        for root in roots(cand, data_dir, dataset_id):
            paths = sorted(p for p in root.glob(cand.pattern) if p.is_file())
            if paths:
                return cand, root, paths
            searched.append(str(root / cand.pattern))
    raise DataMissing(f"{dataset_id}: no data files found; looked for " + ", ".join(searched))


def read_label_list(path: Path) -> tuple[str, ...]:
    return tuple(line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def read_rows(files: Files, path: Path) -> Iterator[tuple[int, dict]]:
    """(row number, row) pairs of one file; row numbers count data rows from 0."""
    if files.format == "parquet":
        yield from _parquet(path)
    elif files.format == "jsonl":
        yield from _jsonl(path)
    elif files.format == "lines":
        yield from _line_blocks(files, path)
    elif files.format == "json":
        yield from _json_list(path)
    elif files.format in ("csv", "tsv"):
        yield from _delimited(files, path, "," if files.format == "csv" else "\t")
    else:
        raise ValueError(f"{path}: unknown format {files.format!r}")


def _parquet(path: Path) -> Iterator[tuple[int, dict]]:
    import pyarrow.parquet as pq  # imported here: only parquet datasets pay for it

    n = 0
    for batch in pq.ParquetFile(path).iter_batches(batch_size=2048):
        for row in batch.to_pylist():
            yield n, row
            n += 1


def _jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    n = 0
    with path.open("rb") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError as e:
                raise ValueError(f"{path}:{lineno}: not valid JSON ({e})") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path}:{lineno}: expected a JSON object")
            yield n, row
            n += 1


def _line_blocks(files: Files, path: Path) -> Iterator[tuple[int, dict]]:
    """Format "lines": fixed-size blocks of lines, one record each (LogiQA, HellaSwag text exports).

    ``columns`` names each line of a block; a line named "" must be blank (a separator),
    so a misaligned file fails at its first bad block. A last block may lack its
    trailing separator lines only if they are blank ones.
    """
    size = len(files.columns)
    if not size:
        raise ValueError(f"{path}: format 'lines' needs `columns`, one name per line of a block")
    with path.open(encoding="utf-8-sig") as f:
        text = f.read()
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()  # the final newline ends the last line; it does not start another
    while lines and not lines[-1].strip() and len(lines) % size:
        lines.pop()  # stray blank lines at the end
    if len(lines) % size and not all(c == "" for c in files.columns[len(lines) % size:]):
        raise ValueError(f"{path}: {len(lines)} lines do not make whole blocks of {size}")
    lines += [""] * (-len(lines) % size)
    for n in range(len(lines) // size):
        block = lines[n * size:(n + 1) * size]
        row = {}
        for i, (name, line) in enumerate(zip(files.columns, block)):
            line = line.rstrip("\r")
            if name:
                row[name] = line
            elif line.strip():
                raise ValueError(f"{path}:{n * size + i + 1}: expected a blank separator line, got {line[:40]!r}")
        yield n, row


def _json_list(path: Path) -> Iterator[tuple[int, dict]]:
    """A whole-file JSON array of objects (format "json")."""
    try:
        data = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON array of objects, got {type(data).__name__}")
    for n, row in enumerate(data):
        if not isinstance(row, dict):
            raise ValueError(f"{path}: element {n} is not a JSON object")
        yield n, row


def _delimited(files: Files, path: Path, delimiter: str) -> Iterator[tuple[int, dict]]:
    quoting = csv.QUOTE_MINIMAL if files.quoted else csv.QUOTE_NONE
    # utf-8-sig: several upstream CSVs start with a byte-order mark.
    with path.open(encoding="utf-8-sig", newline="") as f:
        for _ in range(files.skip_lines):
            f.readline()
        reader = csv.reader(f, delimiter=delimiter, quoting=quoting)  # type: ignore[arg-type]  # typeshed wants a Literal
        if files.columns:
            header = list(files.columns)
        else:
            first = next(reader, None)
            if first is None:
                return
            header = [INDEX_COLUMN if (i == 0 and h in ("", "Unnamed: 0")) else h for i, h in enumerate(first)]
        width = len(header)
        n = 0
        for cells in reader:
            if not cells:
                continue
            if len(cells) != width:
                raise ValueError(f"{path}:{reader.line_num}: expected {width} fields, got {len(cells)}")
            yield n, dict(zip(header, cells))
            n += 1

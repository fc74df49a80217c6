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

import msgspec
import orjson

from benchmark.dataset import DataMissing

# Some CSV cells (long passages) exceed the csv module's 128 KiB default.
csv.field_size_limit(min(sys.maxsize, 2**31 - 1))

# pandas writes an unnamed index column as "" or "Unnamed: 0"; both become this.
INDEX_COLUMN = "_index"


class Files(msgspec.Struct, frozen=True):
    """One place a dataset's files may be, and how to read them."""

    origin: str  # "original" (under <data_dir>/<id>/) | "reference" (the MoodBench data/ tree)
    pattern: str  # glob relative to that root, e.g. "data/*.jsonl"
    format: str  # "parquet" | "csv" | "tsv" | "jsonl"
    columns: tuple[str, ...] = ()  # field names for header-less csv/tsv files
    quoted: bool = True  # False: cells are raw text and '"' is an ordinary character
    label_list: str = ""  # sibling file (same root) listing the label space, one per line


def roots(files: Files, data_dir: Path, dataset_id: str) -> list[Path]:
    if files.origin == "original":
        return [data_dir / dataset_id]
    if files.origin == "reference":
        return [data_dir / "moodbench", data_dir / dataset_id / "moodbench" / "data"]
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


def _delimited(files: Files, path: Path, delimiter: str) -> Iterator[tuple[int, dict]]:
    quoting = csv.QUOTE_MINIMAL if files.quoted else csv.QUOTE_NONE
    # utf-8-sig: several upstream CSVs start with a byte-order mark.
    with path.open(encoding="utf-8-sig", newline="") as f:
        reader = csv.reader(f, delimiter=delimiter, quoting=quoting)
        if files.columns:
            header = list(files.columns)
        else:
            header = next(reader, None)
            if header is None:
                return
            header = [INDEX_COLUMN if (i == 0 and h in ("", "Unnamed: 0")) else h for i, h in enumerate(header)]
        width = len(header)
        n = 0
        for cells in reader:
            if not cells:
                continue
            if len(cells) != width:
                raise ValueError(f"{path}:{reader.line_num}: expected {width} fields, got {len(cells)}")
            yield n, dict(zip(header, cells))
            n += 1

"""`python -m engine import-items DB FILE`: per-item results made elsewhere, stored as rows like a sweep's.

    python -m engine import-items results.duckdb items.csv.gz [--suite moodbench] [--data-dir data]

FILE (CSV, .csv.gz, JSONL, .jsonl.gz or Parquet) has the columns model, dataset, item_id,
score (0..1) and optionally response, prediction, gold. A dataset of the suite is checked
against its items (read from --data-dir, as a sweep reads them) and gets its metric
declarations recorded, so the views score it as they would a sweep's rows; any other dataset id
is taken as it is (its score: 100 x the mean item score). Reading, checking and writing are
store/estimates/import_items.py; this module only wires them to the suite, the data and the command line.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import duckdb
import msgspec

from benchmark import registry
from benchmark.dataset import Dataset
from benchmark.errors import UserError
from benchmark.suites.suite import load_suite
from store.db import connect
from store.results.runs import record_datasets
from store.estimates.import_items import ItemFileError, check_items, read_items, write_items
from store.results.resume import IMPORTED


class ImportItemsOptions(msgspec.Struct, frozen=True):
    db: Path
    file: Path
    suite: str = "moodbench"
    data_dir: Path = Path("data")


def import_items(opts: ImportItemsOptions) -> int:
    if not opts.file.is_file():  # before connecting, which would create the database
        raise ItemFileError(f"{opts.file}: no such file")
    items = read_items(opts.file)
    suite = load_suite(opts.suite)
    present = set(items.table.column("dataset").unique().to_pylist())
    known = [ds for d in suite.datasets if d in present and (ds := registry.get(d)) is not None]
    for ds in known:
        _importable(ds)
    check_items(items, {ds.id: {i for i, _ in ds.records(opts.data_dir)} for ds in known}, suite.name)
    # One identity per file: `identities` says where the rows came from.
    identity = hashlib.sha256(f"{IMPORTED}\0{opts.file.resolve()}".encode()).hexdigest()[:12]
    con = connect(opts.db)
    try:
        n = write_items(con, items, source=opts.file, suite_version=suite.version, identity=identity)
        record_datasets(con, known)
    except duckdb.Error as e:
        raise UserError(f"{opts.db}: {str(e).splitlines()[0]}") from None
    finally:
        con.close()
    models = len(items.table.column("model").unique())
    print(f"imported {n} item rows ({models} models, {len(present)} datasets, {len(known)} of suite "
          f"{suite.name}) from {opts.file}", file=sys.stderr)
    return 0


def _importable(ds: Dataset) -> None:
    """One score per item is all a file gives: a dataset scored otherwise cannot take imported rows."""
    primary = next(m for m in ds.metrics if m.primary)
    if primary.kind != "mean" or primary.a != "score":
        raise ItemFileError(f"dataset {ds.id}: its score is {primary.name} ({primary.kind} over per-item measures), "
                            "which imported item scores cannot give")
    if ds.samples != 1:
        raise ItemFileError(f"dataset {ds.id}: asks {ds.samples} answers per item; imported rows give one")

"""Import dataset-level scores made elsewhere (another harness, human raters).

    python -m engine import-scores results.duckdb scores.csv --suite moodbench

The CSV has a header with the columns model,dataset,score (a 0-100 dataset
score). Rows go to the ``external_scores`` table, keyed by (suite name, model,
dataset); re-importing a pair replaces it. The views use an imported score
when the dataset has no item score for that model, or always when imported
with --override (docs/suites.md, "External scores").

Nothing is written unless the whole file is valid: the file is read as a
stream (a chunk of rows at a time into a temporary table, so a file of any
size costs a bounded amount of memory), checked, and only then are the scores
(and the suite, when the database did not hold it yet) stored in one
transaction, and the stored intervals brought up to date.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pyarrow as pa

from benchmark.errors import UserError
from benchmark.names import name_problem
from store.hierarchy.bootstrap import refresh_intervals
from store.db import StoreError, connect
from store.estimates.item_files import csv_header
from store.hierarchy.suite_tables import resolve_suite, write_suite_tables
from store.transaction import transaction
from store.hierarchy.views import ensure_views

COLUMNS = ("model", "dataset", "score")
CHUNK_ROWS = 50_000  # rows parsed before they go to the temporary table
_STAGED = "import_scores_staged"


class ScoreFileError(UserError):
    """Bad input; the message is one line naming the file and line."""


def _rows(path: Path, datasets: set[str], suite: str) -> Iterator[tuple[str, str, float, int]]:
    """(model, dataset, score, line) of each row, checked one at a time as the file is read."""
    try:
        f = path.open(encoding="utf-8-sig", newline="")
    except OSError as e:
        raise ScoreFileError(f"{path}: cannot read: {e.strerror or e}") from None
    with f:
        rows = csv.reader(f)
        try:
            header = csv_header(rows, path, COLUMNS, ScoreFileError)
        except UnicodeDecodeError as e:
            raise ScoreFileError(f"{path}:1: malformed CSV: {e}") from None
        if sorted(header) != sorted(COLUMNS):
            raise ScoreFileError(f"{path}:1: header must be the columns {','.join(COLUMNS)}, got {','.join(header)}")
        col = {name: header.index(name) for name in COLUMNS}
        while True:
            try:
                fields = next(rows)
            except StopIteration:
                return
            except (csv.Error, UnicodeDecodeError) as e:
                raise ScoreFileError(f"{path}:{rows.line_num}: malformed CSV: {e}") from None
            line = rows.line_num
            if not fields or all(not x.strip() for x in fields):
                continue  # blank line
            if len(fields) != len(header):
                raise ScoreFileError(f"{path}:{line}: expected {len(header)} fields, got {len(fields)}")
            model, dataset, raw = (fields[col[c]].strip() for c in COLUMNS)
            if not model:
                raise ScoreFileError(f"{path}:{line}: empty model")
            if problem := name_problem(model):
                raise ScoreFileError(f"{path}:{line}: model {model[:60]!r} {problem}")
            if dataset not in datasets:
                raise ScoreFileError(f"{path}:{line}: dataset {dataset!r} is not in suite {suite}")
            try:
                score = float(raw)
            except ValueError:
                raise ScoreFileError(f"{path}:{line}: score {raw[:40]!r} is not a number") from None
            if not math.isfinite(score) or not 0 <= score <= 100:
                raise ScoreFileError(f"{path}:{line}: score {raw[:40]} is outside 0-100")
            yield model, dataset, score, line


def stage_scores(con: duckdb.DuckDBPyConnection, path: Path, datasets: set[str], suite: str) -> int:
    """Read and check the whole file into the temporary table ``import_scores_staged``; its row count.

    Raises ScoreFileError naming the first bad line (or a pair given twice); writes nothing to the file."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE {_STAGED} (model VARCHAR, dataset VARCHAR, score DOUBLE, line BIGINT)")
    chunk: list[tuple[str, str, float, int]] = []

    def flush() -> None:
        staged = pa.table({c: list(v) for c, v in zip(("model", "dataset", "score", "line"), zip(*chunk))})  # noqa: F841
        con.execute(f"INSERT INTO {_STAGED} SELECT * FROM staged")
        chunk.clear()

    for row in _rows(path, datasets, suite):
        chunk.append(row)
        if len(chunk) >= CHUNK_ROWS:
            flush()
    if chunk:
        flush()
    twice = con.execute(f"""
        SELECT model, dataset, line, first FROM (
            SELECT *, min(line) OVER (PARTITION BY model, dataset) AS first,
                   row_number() OVER (PARTITION BY model, dataset ORDER BY line) AS nth FROM {_STAGED})
        WHERE nth = 2 ORDER BY line LIMIT 1""").fetchone()
    if twice is not None:
        model, dataset, line, first = twice
        raise ScoreFileError(f"{path}:{line}: {model}/{dataset} already given on line {first}")
    n = con.execute(f"SELECT count(*) FROM {_STAGED}").fetchone()
    if not n or not n[0]:
        raise ScoreFileError(f"{path}: no score rows after the header")
    return int(n[0])


def import_scores(
    con: duckdb.DuckDBPyConnection, suite_spec: str, path: Path, *, override: bool = False
) -> tuple[str, int]:
    """Validate ``path`` and store its scores; returns (suite name, rows stored).

    The suite is read from the database when it is loaded there, else from its file, and stored
    with the scores, in the same transaction: a rejected file leaves the database as it was."""
    ensure_views(con)
    (name, version), suite = resolve_suite(con, suite_spec)
    if suite is not None:
        datasets = {d.id for d in suite.dataset_specs}
    else:
        datasets = {r[0] for r in con.execute(
            "SELECT dataset FROM suite_datasets WHERE suite = ? AND version = ?", (name, version)).fetchall()}
    try:
        n = stage_scores(con, path, datasets, f"{name} {version}")
        with transaction(con):
            if suite is not None:
                write_suite_tables(con, suite)
            con.execute(f"INSERT OR REPLACE INTO external_scores SELECT ?, model, dataset, score, ?, ?, ? "
                        f"FROM {_STAGED}", [name, override, str(path), datetime.now(timezone.utc)])
    finally:
        con.execute(f"DROP TABLE IF EXISTS {_STAGED}")
    refresh_intervals(con)
    return name, n


def import_file(db: Path, suite_spec: str, path: Path, *, override: bool = False,
                create: bool = False) -> tuple[str, int]:
    """The import-scores command: into an existing database (a mistyped name is refused, not created) or,
    with ``create``, a new one; nothing written unless the file is valid (a database it created for a file
    that is not is removed again); returns (suite name, rows stored)."""
    if not path.is_file():
        raise ScoreFileError(f"{path}: no such file")
    made = not db.exists()
    if made and not create:
        raise StoreError(f"database {db} does not exist: import-scores adds to an existing results file "
                         "(check the name, or give --create to start a new one)")
    con = connect(db)
    try:
        return import_scores(con, suite_spec, path, override=override)
    except duckdb.Error as e:
        raise StoreError(f"{db}: {str(e).splitlines()[0]}") from None
    except BaseException:
        if made:
            con.close()
            for leftover in (db, db.with_name(db.name + ".wal")):
                leftover.unlink(missing_ok=True)
        raise
    finally:
        con.close()

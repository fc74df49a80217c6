"""Import dataset-level scores made elsewhere (another harness, human raters).

    python -m engine import-scores results.duckdb scores.csv --suite moodbench

The CSV has a header with the columns model,dataset,score (a 0-100 dataset
score). Rows go to the ``external_scores`` table, keyed by (suite name, model,
dataset); re-importing a pair replaces it. The views use an imported score
when the dataset has no item score for that model, or always when imported
with --override (docs/suites.md, "External scores").
"""

from __future__ import annotations

import csv
import math
from datetime import datetime, timezone
from pathlib import Path

import duckdb

from benchmark.errors import UserError
from store.item_files import csv_header
from store.suite_tables import insert_rows, open_suite
from store.views import ensure_views

COLUMNS = ("model", "dataset", "score")


class ScoreFileError(UserError):
    """Bad input; the message is one line naming the file and line."""


def read_scores(path: Path, datasets: set[str], suite: str) -> list[tuple[str, str, float]]:
    """Parse and validate the whole file before anything is written."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise ScoreFileError(f"{path}: cannot read: {e}") from None
    rows = csv.reader(text.splitlines())
    header = csv_header(rows, path, COLUMNS, ScoreFileError)
    if sorted(header) != sorted(COLUMNS):
        raise ScoreFileError(f"{path}:1: header must be the columns {','.join(COLUMNS)}, got {','.join(header)}")
    col = {name: header.index(name) for name in COLUMNS}
    out: list[tuple[str, str, float]] = []
    seen: dict[tuple[str, str], int] = {}
    while True:
        try:
            fields = next(rows)
        except StopIteration:
            break
        except csv.Error as e:
            raise ScoreFileError(f"{path}:{rows.line_num}: malformed CSV: {e}") from None
        line = rows.line_num
        if not fields or all(not f.strip() for f in fields):
            continue  # blank line
        if len(fields) != len(header):
            raise ScoreFileError(f"{path}:{line}: expected {len(header)} fields, got {len(fields)}")
        model, dataset, raw = (fields[col[c]].strip() for c in COLUMNS)
        if not model:
            raise ScoreFileError(f"{path}:{line}: empty model")
        if dataset not in datasets:
            raise ScoreFileError(f"{path}:{line}: dataset {dataset!r} is not in suite {suite}")
        try:
            score = float(raw)
        except ValueError:
            raise ScoreFileError(f"{path}:{line}: score {raw!r} is not a number") from None
        if not math.isfinite(score) or not 0 <= score <= 100:
            raise ScoreFileError(f"{path}:{line}: score {raw} is outside 0-100")
        if (model, dataset) in seen:
            raise ScoreFileError(f"{path}:{line}: {model}/{dataset} already given on line {seen[model, dataset]}")
        seen[model, dataset] = line
        out.append((model, dataset, score))
    if not out:
        raise ScoreFileError(f"{path}: no score rows after the header")
    return out


def import_scores(
    con: duckdb.DuckDBPyConnection, suite_spec: str, path: Path, *, override: bool = False
) -> tuple[str, int]:
    """Validate ``path`` and store its scores; returns (suite name, rows stored).

    The command line (engine/cli_parsers.py) opens the database and prints the outcome."""
    ensure_views(con)
    name, version = open_suite(con, suite_spec)
    datasets = {r[0] for r in con.execute(
        "SELECT dataset FROM suite_datasets WHERE suite = ? AND version = ?", (name, version)
    ).fetchall()}
    rows = read_scores(path, datasets, f"{name} {version}")
    now = datetime.now(timezone.utc)
    con.execute("BEGIN TRANSACTION")
    try:
        insert_rows(con, "external_scores", [(name, m, d, s, override, str(path), now) for m, d, s in rows])
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    return name, len(rows)

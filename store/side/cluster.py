"""The cluster sweep's tables (store/side/cluster.sql): units per node and attempt, and the exactly-once
ingest of the Parquet files workers land beside the database.

Workers never open DuckDB: each writer flush becomes one Parquet file in the landing folder (written
under a temporary name, then renamed, so a file that exists is whole). The driver, the only writer,
upserts a file's rows and records its name in one transaction; the file is removed after the commit,
and a file whose name is already recorded is only removed. A driver killed anywhere in between
therefore never ingests a file twice (attempts would add up) nor loses one.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from store.memory import checkpoint_if_due, database_path, with_room
from store.transaction import transaction
from store.results.turns import upsert_turns_batch
from store.results.writer import upsert_batch

LANDED_SUFFIX = ".parquet"
# An episode unit's turns land in files of their own, named with this prefix (engine/cluster/units.py).
TURNS_PREFIX = "turns+"


def ensure_tables(con: duckdb.DuckDBPyConnection) -> None:
    con.execute((Path(__file__).parent / "cluster.sql").read_text(encoding="utf-8"))


def landed(folder: Path) -> list[Path]:
    """Whole landed files, oldest name first (temporary names end otherwise and are skipped); an episode's
    turns before the results rows of the same listing (its turns landed before its results row was put)."""
    if not folder.is_dir():
        return []
    return sorted(folder.glob(f"*{LANDED_SUFFIX}"), key=lambda p: (not p.name.startswith(TURNS_PREFIX), p.name))


def ingest(con: duckdb.DuckDBPyConnection, path: Path) -> Counter[tuple[str, str]]:
    """Store one landed file's rows once; returns `results` rows per (model, status) newly ingested (a turns
    file counts none: an episode is counted by its results row)."""
    name = path.name
    counts: Counter[tuple[str, str]] = Counter()
    with transaction(con):
        if con.execute("SELECT 1 FROM landed_files WHERE name = ?", [name]).fetchone() is None:
            batch = pq.read_table(path)
            if name.startswith(TURNS_PREFIX):
                upsert_turns_batch(con, batch)
            else:
                upsert_batch(con, batch)
                counts.update((str(m), str(s))
                              for m, s in zip(batch["model"].to_pylist(), batch["status"].to_pylist()))
            con.execute("INSERT INTO landed_files (name, rows, ingested_at) VALUES (?, ?, ?)",
                        [name, batch.num_rows, datetime.now(UTC)])
    path.unlink(missing_ok=True)  # after the commit: a rerun that finds it only removes it
    return counts


def ingest_landed(con: duckdb.DuckDBPyConnection, folder: Path) -> Counter[tuple[str, str]]:
    """Every whole file in the landing folder, each once."""
    total: Counter[tuple[str, str]] = Counter()
    db = database_path(con)
    for path in landed(folder):
        total.update(with_room(con, ingest, con, path))
        checkpoint_if_due(con, db)
    return total


def unit_started(con: duckdb.DuckDBPyConnection, run_id: str, model: str, dataset: str, attempt: int,
                 node_id: str | None) -> None:
    con.execute("INSERT OR REPLACE INTO cluster_units (run_id, model, dataset, attempt, node_id, status, started_at, "
                "finished_at) VALUES (?, ?, ?, ?, ?, 'running', ?, NULL)",
                [run_id, model, dataset, attempt, node_id, datetime.now(UTC)])


def unit_ended(con: duckdb.DuckDBPyConnection, run_id: str, model: str, dataset: str, attempt: int,
               status: str) -> None:
    con.execute("UPDATE cluster_units SET status = ?, finished_at = ? WHERE run_id = ? AND model = ? AND dataset = ? "
                "AND attempt = ?", [status, datetime.now(UTC), run_id, model, dataset, attempt])


def close_stale_units(con: duckdb.DuckDBPyConnection) -> None:
    """Units left `running` by a killed driver: interrupted (this driver holds the write lock)."""
    con.execute("UPDATE cluster_units SET status = 'interrupted', finished_at = now() WHERE status = 'running'")


def where_units_ran(con: duckdb.DuckDBPyConnection, run_id: str) -> list[tuple[str, str, str, int, str]]:
    """(node_id, model, dataset, attempt, status) of a run's units, for the live view and the summary."""
    return con.execute("SELECT coalesce(node_id, '?'), model, dataset, attempt, status FROM cluster_units "
                       "WHERE run_id = ? ORDER BY 1, 2, 3, 4", [run_id]).fetchall()

"""The unit of work on a cluster, one (model, dataset), the prefix of the resume key; and its landing.

The driver plans a unit exactly as the single-machine sweep plans a model's items: the dataset's seeded
sample (engine/sweep/plan.py), the model's stamps and identity (engine/sweep/prepare.py:stamp_run), and the
keys already stored. A host receives the sample's raw records with it, so no node but the driver reads
the data folder.

Landing: a host's rows go through the same batched Writer as on one machine (store/results/writer.py), whose
insert writes each flush as one Parquet file in the landing folder beside the database: a temporary name,
fsync, then a rename, so a file under its final name is whole. The name says run, model, dataset, attempt
and sequence (store/side/cluster.py ingests them, each once). An episode unit also lands its `turns` rows,
in files of their own (`turns+` before the name), through a second Writer, as engine/lanes/episode.py
stores them on one machine: each turn landed before the episode's next call.
"""

from __future__ import annotations

import os
from pathlib import Path
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import duckdb
import msgspec
import pyarrow as pa
import pyarrow.parquet as pq

from engine.config.models import ModelConfig, ModelsFile
from engine.lanes.model_lane import Stamps
from engine.lanes.work import PlannedDataset
from store.results.turns import TurnRow, stored_turns, turns_arrow
from store.results.writer import to_arrow
from store.side.cluster import TURNS_PREFIX

# Units a host runs at once: the next one starts while the last calls of one finish.
UNITS_PER_HOST = 2
# Attempts of a unit lost with its node or server before it is given up (its pending items stored as errors).
MAX_ATTEMPTS = 3


class UnitTask(msgspec.Struct, kw_only=True):
    """What a host is handed: one model's pending calls on one dataset."""

    run_id: str
    model: str
    planned: PlannedDataset  # the dataset and its seeded sample (raw records)
    n_done: int  # planned items already answered ok (the driver's anti-join)
    done: list[tuple[str, int]]  # their keys (item_id, sample), when some are
    attempt: int
    stamps: Stamps
    landing: str  # the landing folder, on storage every node sees
    prompt_budget: int | None  # tokens a prompt may take for this model on this dataset
    # An interactive dataset's unit: the kept turns of its unfinished episodes (continued after the last one),
    # who plays the seeker (the turns' identity) and the simulator's reply cap, as the driver's plan has them.
    turns: list[TurnRow] = []
    sim_identity: str | None = None
    seeker_tokens: int = 300

    @property
    def dataset(self) -> str:
        return self.planned.id


class UnitOutcome(msgspec.Struct, kw_only=True):
    node_id: str
    rows: int
    errors: int
    unreachable: bool = False  # the endpoint's breaker gave up: the rest stays unasked
    simulator_unreachable: bool = False  # the [user_simulator]'s breaker gave up (an episode unit)


class HostFacts(msgspec.Struct, kw_only=True):
    """A host actor as its node sees it: where it runs and the model as served there."""

    node_id: str
    model: ModelConfig  # with the started server's base_url and what it reports (window, slots)
    engine_version: str
    served: str | None = None  # what its loopback server has loaded, asked on its node (identity)


def with_episodes(task: UnitTask, con: duckdb.DuckDBPyConnection, cfg: ModelsFile,
                  planned: list[PlannedDataset]) -> None:
    """An interactive dataset's unit as engine/sweep/sweep.py plays it on one machine: the kept turns of its
    unfinished episodes, the simulator's identity and its reply cap (the largest of the planned datasets')."""
    from benchmark.episodes.dataset import EpisodeDataset
    from engine.sweep.identity import simulator_identity

    stored = stored_turns(con, task.model, task.dataset)
    task.turns = [t for rows in stored.values() for t in rows]
    task.sim_identity = simulator_identity(cfg.user_simulator)
    task.seeker_tokens = max(p.dataset.seeker_max_tokens for p in planned if isinstance(p.dataset, EpisodeDataset))


def landing_folder(db: Path) -> Path:
    return db.with_name(db.name + ".landing")


class Landing:
    """The insert of a unit's Writer: each flush of rows as one whole Parquet file in the landing folder
    (``turns``: the turns' Writer of an episode unit)."""

    def __init__(self, folder: Path, *, run_id: str, model: str, dataset: str, attempt: int, turns: bool = False):
        self.folder = folder
        # '+' separates the parts: quote(safe="") encodes it inside a name, with '/' and every other oddity.
        self.stem = (TURNS_PREFIX if turns else "") + "+".join(
            (run_id, quote(model, safe=""), quote(dataset, safe=""), f"a{attempt}"))
        self.sequence = 0
        self.encode: Callable[[list[Any]], pa.Table] = turns_arrow if turns else to_arrow

    def land(self, _con: Any, rows: list[Any]) -> None:
        self.sequence += 1  # the Writer flushes one batch at a time
        name = f"{self.stem}+{self.sequence:06d}"
        tmp = self.folder / f"{name}.tmp"
        with open(tmp, "wb") as f:
            pq.write_table(self.encode(rows), f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.folder / f"{name}.parquet")

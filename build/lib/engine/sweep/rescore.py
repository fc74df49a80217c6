"""`python -m engine rescore DB`: read stored responses again with the current extractor and scorers.

    python -m engine rescore results.duckdb [--datasets a,b] [--models m1,m2] [--suite NAME] [--data-dir data]

No model is called. Every `ok` row of the chosen models and datasets is scored
again by its dataset adapter (`score(item, response, finish_reason=...)`, the
call a sweep makes), which needs the item's scoring data: `gold` is stored in
`results`, but the rest (option order, per-item options, keys) lives in the
item, so items are rendered again from the data folder, as a sweep renders
them. Rows whose prediction, score, measures, scorer_version or extracted_by
change are updated in place; the values they replace go to `results_history`
under the rescore's id (`rescores` logs each run). The views read `results`,
so they follow at once. The rows then carry the scorer stamp a sweep would
write now, so a later sweep asks none of them again.

A response the rules leave unread keeps the [extractor] model's reading when
one is stored for that very response (docs/extraction.md).
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import sys
import uuid
from collections import Counter, deque
from collections.abc import Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import duckdb
import msgspec
import orjson
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from benchmark import registry
from benchmark.dataset import Dataset
from benchmark.suites.suite import load_suite
from benchmark.errors import UserError
from engine.lanes.extract_model import read_and_score
from engine.lanes.work import render
from engine.sweep.plan import reading_data, resolve_datasets
from engine.run.context import close_stale_runs
from engine.run.progress import log
from store.side import extractions
from store.results import history
from store.results import runs
from store.hierarchy.bootstrap import refresh_intervals
from store.db import connect, transaction
from store.side.judgements import answer_md5
from store.query import single

BATCH = 2000  # changed rows per transaction
# Imported rows (store/estimates/import_items.py) hold scores made elsewhere, with no response of ours to read again.
_CHOSEN = ("FROM results WHERE dataset = ? AND status = 'ok' AND model IN (SELECT unnest(?::VARCHAR[])) "
           "AND extracted_by IS DISTINCT FROM 'imported'")
_ROWS = ("SELECT model, item_id, sample, response, finish_reason, prediction, score, measures, scorer_version, "
         f"extracted_by {_CHOSEN} ORDER BY model, item_id, sample")


class Tally(Counter):
    """What changed: parsed -> unparsed, unparsed -> parsed, another answer, another score ..."""

    def merge(self, other: Counter, first_failure: str) -> None:
        if first_failure and not self["failed"]:  # said once
            log(f"rescore: {first_failure}; such rows are kept")
        self.update(other)

    def add(self, old: tuple, new: tuple) -> bool:
        (p0, s0, m0, v0, e0), (p1, s1, m1, v1, e1) = old, new
        self["rows"] += 1
        if p0 is not None and p1 is None:
            self["parsed_to_unparsed"] += 1
        elif p0 is None and p1 is not None:
            self["unparsed_to_parsed"] += 1
        elif p0 != p1:
            self["answer_changed"] += 1
        if s0 != s1:
            self["score_changed"] += 1
        changed = old != new
        self["changed"] += changed
        return changed

    def line(self) -> str:
        return (f"rescore: {self['rows']} rows read again, {self['changed']} changed: "
                f"{self['parsed_to_unparsed']} parsed -> unparsed, {self['unparsed_to_parsed']} unparsed -> parsed, "
                f"{self['answer_changed']} another answer, {self['score_changed']} another score"
                + (f"; {self['missing']} rows whose item is no longer in the data (kept)" if self["missing"] else "")
                + (f"; {self['failed']} rows the scorer failed on (kept)" if self["failed"] else ""))


def _json(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)


def _models(con: duckdb.DuckDBPyConnection, requested: list[str] | None, typed: str | None = None) -> list[str]:
    """``typed``: --models as given. A stored name it equals is chosen whole, so a name stored before names
    were checked (benchmark/names.py: a comma, a space at an end) can still be chosen."""
    stored = [r[0] for r in con.execute("SELECT DISTINCT model FROM results ORDER BY 1").fetchall()]
    if typed is not None and typed in stored:
        return [typed]
    if requested:
        unknown = sorted(set(requested) - set(stored))
        if unknown:
            raise UserError(f"no stored rows for model(s) {', '.join(unknown)} (stored: {', '.join(stored) or 'none'})")
        return requested
    return stored


def _datasets(con: duckdb.DuckDBPyConnection, requested: list[str] | None, suite: str | None) -> list[Dataset]:
    stored = {r[0] for r in con.execute("SELECT DISTINCT dataset FROM results").fetchall()}
    if requested or suite:
        wanted, _ = resolve_datasets(requested, load_suite(suite).datasets if suite else ())
        return [ds for ds in wanted if ds.id in stored]
    found = [registry.get(d) for d in sorted(stored)]
    gone = sorted(d for d, ds in zip(sorted(stored), found) if ds is None)
    if gone:
        log(f"note: no adapter for stored dataset(s) {', '.join(gone)}: their rows are left as they are")
    return [ds for ds in found if ds is not None]


def _records(ds: Dataset, data_dir: Path, ids: frozenset[str]) -> dict[str, Any]:
    """The raw records of these item ids (the pool is streamed, only those are kept)."""
    with reading_data(ds, data_dir):
        return {i: raw for i, raw in ds.records(data_dir) if i in ids}


# A worker process's dataset, loaded once per dataset: (dataset id, data dir) -> (raw records, rendered items).
_LOADED: dict[tuple[str, str], tuple[dict[str, Any], dict]] = {}


def score_in_worker(ds_id: str, data_dir: Path, ids: frozenset[str],
                    page: list[tuple]) -> tuple[list[tuple], Counter, str]:
    """`score_page` in a worker process: the dataset found by id, its records read once per process."""
    ds = registry.get(ds_id)
    assert ds is not None
    key = (ds_id, str(data_dir))
    if key not in _LOADED:
        _LOADED.clear()  # pages come dataset by dataset: hold one at a time
        _LOADED[key] = (_records(ds, data_dir, ids), {})
    return score_page(ds, page, *_LOADED[key])


def score_page(ds: Dataset, page: list[tuple], raws: dict[str, Any],
               items: dict) -> tuple[list[tuple], Counter, str]:
    """Score one page of stored rows again; (changed rows, tally, the first scorer failure)."""
    tally, changed, failure = Tally(), [], ""
    for model, item_id, sample, response, finish, pred, score, measures, version, by, codes in page:
        if item_id not in raws:
            tally["missing"] += 1
            continue
        key = (item_id, sample)
        if key not in items:
            items[key] = render(ds, item_id, raws[item_id], sample)
        try:
            scored, new_by = read_and_score(ds, items[key], response, finish, codes)
        except Exception as e:  # noqa: BLE001 - a scorer bug costs this row's update, not the run
            tally["failed"] += 1
            failure = failure or f"{ds.id} {item_id}: scoring failed ({type(e).__name__}: {e})"
            continue
        old = (_json(pred), score, _json(measures), version, by)
        new = (scored.prediction, scored.score, scored.measures, ds.scorer_version, new_by)
        if tally.add(old, new):
            changed.append((model, ds.id, item_id, sample, _dump(scored.prediction), scored.score,
                            _dump(scored.measures), ds.scorer_version, new_by))
    return changed, tally, failure


def rescore_dataset(con: duckdb.DuckDBPyConnection, ds: Dataset, models: list[str], data_dir: Path,
                    rescore_id: str, tally: Tally, progress: Progress | None = None,
                    pool: Executor | None = None) -> None:
    counts = con.execute(f"SELECT item_id, count(*) {_CHOSEN} GROUP BY item_id", [ds.id, models]).fetchall()
    if not counts:
        return
    n, ids = sum(c for _, c in counts), frozenset(i for i, _ in counts)
    readings = extractions.stored_readings(con, ds.id)
    task = progress.add_task(ds.id, total=n) if progress else None
    cur = con.cursor()  # its own cursor: the updates below run on `con` between pages

    def pages() -> Iterator[list[tuple]]:
        cur.execute(_ROWS, [ds.id, models])
        while page := cur.fetchmany(BATCH):
            # The extractor model's reading counts only for the very answer it read.
            yield [(*r, reading[1] if (reading := readings.get((r[0], r[1], r[2]))) is not None
                    and reading[0] == answer_md5(r[3]) else None) for r in page]

    if pool is None:
        work = functools.partial(score_page, ds, raws=_records(ds, data_dir, ids), items={})
        done: Iterator[tuple[list[tuple], Counter, str]] = map(work, pages())
    else:
        work = functools.partial(score_in_worker, ds.id, data_dir, ids)
        done = _windowed(pool, work, pages(), 2 * (os.cpu_count() or 1))
    for changed, part, failure in done:
        tally.merge(part, failure)
        history.replace_values(con, rescore_id, changed)
        if progress is not None and task is not None:
            progress.advance(task, part["rows"] + part["missing"] + part["failed"])
    with transaction(con):
        runs.record_datasets(con, [ds])


def _windowed(pool: Executor, fn: Any, pages: Iterator[list[tuple]], window: int) -> Iterator[Any]:
    """pool.map with at most `window` pages in flight, results in order: memory stays bounded."""
    pending: deque[Future] = deque()
    for page in pages:
        pending.append(pool.submit(fn, page))
        if len(pending) >= window:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def _dump(v: Any) -> str | None:
    return None if v is None else orjson.dumps(v).decode()


class RescoreOptions(msgspec.Struct, frozen=True, kw_only=True):
    """`rescore`'s options (engine/sweep/flags.py maps the flags onto them)."""

    db: Path
    datasets: list[str] | None = None  # None: every stored dataset
    models: list[str] | None = None  # None: every stored model
    models_text: str | None = None  # --models as typed: a stored name it equals is chosen whole
    suite: str | None = None  # the datasets of this suite (name or TOML path)
    data_dir: Path = Path("data")  # where the items are rendered from
    quiet: bool = False  # no progress bars
    command: str = "rescore"  # the command line, logged in `rescores`
    workers: int | None = None  # scoring processes; None: one per core (1: scored in this process)


POOL_MIN_ROWS = 20_000  # below this, scoring in this process is quicker than spawning workers


def _row_count(con: duckdb.DuckDBPyConnection, datasets: list[Dataset], models: list[str]) -> int:
    return sum(single(con.execute(f"SELECT count(*) {_CHOSEN}", [ds.id, models]).fetchone()) for ds in datasets)


@contextlib.contextmanager
def _pool(workers: int | None, rows: int) -> Iterator[Executor | None]:
    """Scoring is CPU-bound Python: one process per core (spawned: the parent holds DuckDB's threads), unless
    there are too few rows to repay starting them (each imports the engine and reads its dataset)."""
    n = workers if workers is not None else (os.cpu_count() or 1) if rows >= POOL_MIN_ROWS else 1
    if n <= 1:
        yield None
        return
    with ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


def rescore(opts: RescoreOptions) -> int:
    """Score the stored responses again; a UserError for bad input."""
    if opts.workers is not None and opts.workers < 1:
        raise UserError("--workers must be at least 1")
    if not opts.db.is_file():
        raise UserError(f"{opts.db}: no such database")
    con = connect(opts.db)
    try:
        models = _models(con, opts.models, opts.models_text)
        datasets = _datasets(con, opts.datasets, opts.suite)
        rescore_id = uuid.uuid4().hex[:12]
        close_stale_runs(con)  # a rescore or a sweep killed earlier: we hold the write lock now
        history.start(con, rescore_id, opts.command)
        tally = Tally()
        outcome = "interrupted"
        try:
            with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                          disable=opts.quiet, console=Console(stderr=True)) as progress, _pool(opts.workers, _row_count(con, datasets, models)) as pool:
                for ds in datasets:
                    rescore_dataset(con, ds, models, opts.data_dir, rescore_id, tally, progress, pool)
            outcome = "complete"
        finally:
            history.finish(con, rescore_id, tally["rows"], tally["changed"], outcome)
        if tally["changed"]:  # the file's own intervals follow its scores, for any DuckDB reader
            refresh_intervals(con)
        print(tally.line() + f" (rescore {rescore_id}; old values in results_history)", file=sys.stderr)
    finally:
        con.close()
    return 0

"""Estimates of dataset scores for models that answered part of the items, from the stored rows.

    compute_estimates(con, models=None) -> EstimateRun

Per dataset, the population is every item with an ok score for some model; the item model
(store/stats/item_model.py) is fitted on the models with ok scores for at least FULL_SHARE of it, and
stored in `item_fits` / `item_params` / `item_abilities` (store/estimates/estimates.sql) with a stamp of
those rows: it is refitted only when they change. Then every model that answered part of a
dataset gets the estimator of store/stats/estimator.py, stored in `estimates` and shown by the view
`dataset_estimates` while the rows stay as they were. The math and its reasons:
store/stats/estimator.py and docs/estimates.md.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

import duckdb
import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from threadpoolctl import threadpool_limits

from benchmark.errors import UserError
from store.stats.estimator import Answered, Blend, Estimate, Population, choose_blend, estimate_model
from store.stats.item_model import ItemFit, fit_2pl
from store.transaction import transaction

FULL_SHARE = 0.9  # a model with ok scores on this share of a dataset's items is fitted on
MIN_MODELS = 10  # fewer such models: no item model, the answered mean


class EstimateRun(msgspec.Struct):
    """What compute_estimates found: estimates per model and dataset, how it predicted, what it fitted."""

    estimates: dict[str, dict[str, Estimate]]
    blend: Blend
    refitted: list[str]  # datasets whose item model was (re)fitted by this call
    seconds: float


def compute_estimates(con: duckdb.DuckDBPyConnection, models: Sequence[str] | None = None, *,
                      store: bool = True) -> EstimateRun:
    """Estimate every (model, dataset) the models (default: all) answered part of; `store` keeps fits and results.

    Numpy runs on one thread here: the matrices are small, and on a shared machine a BLAS that
    spreads each product over every core spends more time waiting than computing."""
    t0 = time.perf_counter()
    signature = con.execute("SELECT estimate_signature()").fetchall()[0] if store else None
    rows = _scores(con)
    known = set(rows.column("model").unique().to_pylist())
    missing = [m for m in models or [] if m not in known]
    if missing:
        raise UserError(f"no scored rows for model {', '.join(map(repr, missing))} in the database")
    with threadpool_limits(1):
        pops, answers, refitted = _populations(con, rows, store=store)
        wanted = set(models) if models else {m for per in answers.values() for m in per}
        partial = {d: {m: a for m, a in per.items() if m in wanted and len(a.index) < len(pops[d].items)}
                   for d, per in answers.items()}
        sizes = {d: int(np.median([len(a.index) for a in per.values()])) for d, per in partial.items() if per}
        blend = choose_blend(list(pops.values()), sizes)
        # Everything a model answered, complete datasets too: its agreement with the fitted models
        # (the neighbours) pools all of it; only the datasets it answered part of are estimated.
        by_model: dict[str, dict[str, Answered]] = {}
        for d, per in answers.items():
            for m, a in per.items():
                if m in wanted:
                    by_model.setdefault(m, {})[d] = a
        out = {m: estimate_model(by_model.get(m, {}), pops, blend, exclude=m) for m in sorted(wanted)}
    seconds = time.perf_counter() - t0
    if store and signature is not None:
        _store_estimates(con, out, signature[0], blend, seconds)
    return EstimateRun(estimates=out, blend=blend, refitted=refitted, seconds=seconds)


def _scores(con: duckdb.DuckDBPyConnection) -> pa.Table:
    """One score per (dataset, model, item): the mean over its ok samples."""
    table = con.sql(
        """
        SELECT dataset, model, item_id, avg(score) AS score
        FROM results WHERE status = 'ok' AND score IS NOT NULL
        GROUP BY ALL ORDER BY dataset  -- each dataset's rows together: _by_dataset slices them
        """
    ).to_arrow_table()
    assert table is not None  # a SELECT always has a result
    return table


def _populations(con: duckdb.DuckDBPyConnection, rows: pa.Table, *, store: bool
                 ) -> tuple[dict[str, Population], dict[str, dict[str, Answered]], list[str]]:
    """Per dataset: the population with its item model, and every model's answers."""
    pops: dict[str, Population] = {}
    answers: dict[str, dict[str, Answered]] = {}
    refitted: list[str] = []
    stored = _stored_stamps(con) if store else {}
    new_fits: list[tuple[str, str, list[str], list[str], ItemFit, int]] = []
    for d, part in _by_dataset(rows):
        items = sorted(str(i) for i in pc.unique(part.column("item_id")).to_pylist())
        names = sorted(str(m) for m in pc.unique(part.column("model")).to_pylist())
        col = pc.index_in(part.column("item_id"), value_set=pa.array(items)).to_numpy()
        row = pc.index_in(part.column("model"), value_set=pa.array(names)).to_numpy()
        score = part.column("score").to_numpy()
        y = np.zeros((len(names), len(items)))
        have = np.zeros((len(names), len(items)), dtype=bool)
        y[row, col], have[row, col] = score, True
        answers[d] = {m: Answered(np.flatnonzero(have[k]), y[k, have[k]]) for k, m in enumerate(names)}
        calib = [k for k in range(len(names)) if have[k].mean() >= FULL_SHARE]
        cal_names = [names[k] for k in calib]
        pop = Population(d, items, cal_names, y[calib], have[calib])
        if len(calib) >= MIN_MODELS:
            stamp = _stamp(cal_names, items, y[calib], have[calib])
            fit = _load_fit(con, d, items, cal_names) if stored.get(d) == stamp else None
            if fit is None:
                fit = fit_2pl(y[calib], have[calib])
                refitted.append(d)
                new_fits.append((d, stamp, items, cal_names, fit, int(have[calib].sum())))
            pop.fit = fit
        pops[d] = pop
    if store and new_fits:
        _store_fits(con, new_fits)
    return pops, answers, refitted


def _by_dataset(rows: pa.Table) -> Iterable[tuple[str, pa.Table]]:
    """The rows (sorted by dataset) cut into one slice per dataset."""
    ds = rows.column("dataset").to_numpy(zero_copy_only=False)
    if len(ds) == 0:
        return
    starts = np.flatnonzero(np.r_[True, ds[1:] != ds[:-1]])
    ends = np.r_[starts[1:], len(ds)]
    for s, e in zip(starts, ends):
        yield str(ds[s]), rows.slice(int(s), int(e - s))


def _stamp(models: list[str], items: list[str], y: np.ndarray, have: np.ndarray) -> str:
    h = hashlib.sha256()
    h.update("\0".join(models).encode())
    h.update(b"\1" + "\0".join(items).encode())
    h.update(np.where(have, y, -1.0).tobytes())
    return h.hexdigest()[:24]


def _stored_stamps(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    return dict(con.execute("SELECT dataset, stamp FROM item_fits").fetchall())


def _load_fit(con: duckdb.DuckDBPyConnection, dataset: str, items: list[str], models: list[str]) -> ItemFit | None:
    """The stored fit for exactly these items and models (None if anything is missing)."""
    par = dict((i, (a, c)) for i, a, c in con.execute(
        "SELECT item_id, discrimination, intercept FROM item_params WHERE dataset = ?", [dataset]).fetchall())
    abil = dict(con.execute("SELECT model, ability FROM item_abilities WHERE dataset = ?", [dataset]).fetchall())
    rounds = con.execute("SELECT rounds FROM item_fits WHERE dataset = ?", [dataset]).fetchone()
    if any(i not in par for i in items) or any(m not in abil for m in models) or rounds is None:
        return None
    return ItemFit(discrimination=np.array([par[i][0] for i in items]), intercept=np.array([par[i][1] for i in items]),
                   ability=np.array([abil[m] for m in models]), rounds=int(rounds[0] or 0))


def _store_fits(con: duckdb.DuckDBPyConnection,
                fits: list[tuple[str, str, list[str], list[str], ItemFit, int]]) -> None:
    """(dataset, stamp, items, models, fit, rows) of every dataset refitted, in one transaction."""
    now = datetime.now(UTC)
    params = pa.table({  # noqa: F841 - read by the SQL
        "dataset": [d for d, _, items, *_ in fits for _ in items],
        "item_id": [i for _, _, items, *_ in fits for i in items],
        "discrimination": np.concatenate([f.discrimination for *_, f, _ in fits]),
        "intercept": np.concatenate([f.intercept for *_, f, _ in fits]),
        "difficulty": pa.array(np.concatenate([f.difficulty for *_, f, _ in fits]), from_pandas=True)})
    abilities = pa.table({  # noqa: F841
        "dataset": [d for d, _, _, models, *_ in fits for _ in models],
        "model": [m for _, _, _, models, *_ in fits for m in models],
        "ability": np.concatenate([f.ability for *_, f, _ in fits])})
    heads = pa.table({  # noqa: F841
        "dataset": [d for d, *_ in fits], "stamp": [s for _, s, *_ in fits],
        "models": [models for _, _, _, models, *_ in fits], "n_items": [len(items) for _, _, items, *_ in fits],
        "n_rows": [n for *_, n in fits], "rounds": [f.rounds for *_, f, _ in fits]})
    with transaction(con):
        for table in ("item_fits", "item_params", "item_abilities"):
            con.execute(f"DELETE FROM {table} WHERE dataset IN (SELECT dataset FROM heads)")
        con.execute("INSERT INTO item_fits (dataset, stamp, models, n_items, n_rows, rounds, fitted_at) "
                    "SELECT *, ? FROM heads", [now])
        con.execute("INSERT INTO item_params (dataset, item_id, discrimination, intercept, difficulty) "
                    "SELECT * FROM params")
        con.execute("INSERT INTO item_abilities (dataset, model, ability) SELECT * FROM abilities")


def _store_estimates(con: duckdb.DuckDBPyConnection, out: dict[str, dict[str, Estimate]], signature: str,
                     blend: Blend, seconds: float) -> None:
    now = datetime.now(UTC)
    flat = [(m, d, e) for m, per in out.items() for d, e in per.items()]
    fresh = pa.table({  # noqa: F841 - read by the SQL
        "model": [m for m, _, _ in flat], "dataset": [d for _, d, _ in flat],
        "estimate": [e.estimate for *_, e in flat], "ci_low": [e.ci_low for *_, e in flat],
        "ci_high": [e.ci_high for *_, e in flat], "n": pa.array([e.n for *_, e in flat], pa.int32()),
        "n_total": pa.array([e.n_total for *_, e in flat], pa.int32()), "method": [e.method for *_, e in flat],
    })
    chosen = pa.table({"model": list(out)})  # noqa: F841
    with transaction(con):
        con.execute("DELETE FROM estimates WHERE model IN (SELECT model FROM chosen)")
        con.execute("INSERT INTO estimates (model, dataset, estimate, ci_low, ci_high, n, n_total, method, "
                    "signature, computed_at) SELECT *, ?, ? FROM fresh", [signature, now])
        # Estimates of other models made from other rows are stale now: the view hides them, and
        # re-stamping them would claim a freshness nobody checked.
        con.execute("DELETE FROM estimate_state")
        con.execute("INSERT INTO estimate_state VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [blend.kappa, blend.alpha, blend.loss, blend.loss_2pl, blend.loss_mean, seconds, now])

"""Paired bootstrap over items, carried through the whole hierarchy (docs/suites.md, "Intervals").

Within each dataset the items are resampled with replacement, B times. Replicate
r draws item j from the dataset's sorted item ids by a seeded hash
(splitmix64 of seed, dataset, the ids and r * n + j), so the draws are the same
for every model (differences are paired) and on every machine. A model's
replicate metric value is its kind's Python formula (benchmark/metrics/kinds.py)
applied to the resampled column sums: the count matrix (B x n items) times the
per-item sums of a, b, c. Replicate -1 is the identity (every item once): the
point estimate, computed by the same path. A dataset score the views take from an
estimate (a model that answered part of the items, docs/estimates.md) is drawn around
the estimate from its own interval instead (store/stats/draws.py).

The replicate metric values become method and dataset scores here, then go
through the SAME SQL as the views above dataset_scores (views.sql's hierarchy
template, rendered per (replicate, model)), materialised as temp tables
boot_dataset_scores ... boot_leaderboard. compute_intervals stores their 95 %
percentile bounds in interval_bounds, read by the `intervals` and `leaderboard`
views; engine/report/compare.py reads the replicate tables for two models directly.
"""

from __future__ import annotations

import hashlib
import time
from datetime import UTC, datetime

import duckdb
import msgspec
import numpy as np
import pyarrow as pa

from benchmark.metrics.kinds import KINDS, Sums, macro_of
from store.stats.draws import estimate_draws, resample_counts, resample_plays
from store.transaction import transaction
from store.hierarchy.boot_inputs import collect_inputs
from store.hierarchy.views import hierarchy_sql, render_views

DEFAULT_REPLICATES = 1000
ALGORITHM = "bootstrap-3"  # part of the fingerprint: a change of method recomputes stored bounds
# What the intervals depend on: (table, columns hashed). A change in any recomputes them.
_INPUTS = (
    ("results", "model, dataset, item_id, sample, status, score, measures"),
    ("judgements", "model, dataset, item_id, sample, judge, rubric, answer_md5, status, verdict, score"),
    ("judge_metrics", "*"), ("dataset_metrics", "*"), ("external_scores", "suite, dataset, model, score, override"),
    ("suites", "suite, version, gate, tau, missing_levels"), ("suite_abilities", "*"),
    ("suite_sub_abilities", "*"), ("suite_tasks", "*"), ("suite_task_datasets", "*"),
    ("suite_datasets", "*"), ("suite_methods", "*"), ("suite_grades", "*"), ("suite_difficulty", "*"),
    ("estimates", "model, dataset, estimate, ci_low, ci_high, signature"),
)


class IntervalRun(msgspec.Struct, frozen=True):
    recomputed: bool
    seconds: float
    replicates: int
    phases: dict[str, float] = {}  # wall seconds per phase, when recomputed (for bench/intervals_bench.py)


def compute_intervals(con: duckdb.DuckDBPyConnection, *, replicates: int = DEFAULT_REPLICATES, seed: int = 0,
                      force: bool = False) -> IntervalRun:
    """Store the 95 % bootstrap bounds of every node (interval_bounds), unless the inputs are unchanged.

    The `intervals` view and the leaderboard's ci_low / ci_high / rank_low /
    rank_high / p_veto read what this stores. On a read-only connection the
    bounds go to the temporary copies store.hierarchy.views.private_interval_tables made
    (report opens files that way), seen by this connection only.
    """
    if replicates < 1:
        raise ValueError("replicates must be at least 1")
    t0 = time.perf_counter()
    fp = fingerprint(con, replicates, seed)
    signature = con.execute("SELECT interval_signature()").fetchone()  # computed once: ~8 ms each time
    stored = con.execute("SELECT fingerprint, signature FROM interval_state").fetchone()
    if stored is not None and stored[0] == fp and not force:
        if signature is None or stored[1] is None or stored[1] != signature[0]:
            # Same inputs, new signature (a rerun reloads the suite: its loaded_at moves): the bounds are
            # what a recomputation would give, so only the signature the views check is brought up to date.
            with transaction(con):
                con.execute("UPDATE interval_state SET signature = ?", [signature[0] if signature else None])
        return IntervalRun(False, time.perf_counter() - t0, replicates)
    phases = {"fingerprint": time.perf_counter() - t0, **build_replicates(con, replicates=replicates, seed=seed)}
    t1 = time.perf_counter()
    with transaction(con):
        con.execute("DELETE FROM interval_bounds")
        con.execute(_BOUNDS_SQL)
        con.execute("DELETE FROM interval_state")
        seconds = time.perf_counter() - t0
        con.execute("INSERT INTO interval_state VALUES (?, ?, ?, ?, ?, ?)",
                    [fp, replicates, seed, seconds, datetime.now(UTC), signature[0] if signature else None])
    drop_replicates(con)
    phases["bounds"] = time.perf_counter() - t1
    return IntervalRun(True, seconds, replicates, phases)


def refresh_intervals(con: duckdb.DuckDBPyConnection) -> IntervalRun:
    """After a command changed results, imported scores or suite parameters: the stored bounds
    recomputed if their inputs changed, with the replicates and seed they were computed with (the
    defaults for a file without any), so the file's own `intervals` and `leaderboard` views show
    them to any DuckDB client, not only `report`'s temporary copies."""
    stored = con.execute("SELECT replicates, seed FROM interval_state").fetchone()
    replicates, seed = stored if stored is not None else (DEFAULT_REPLICATES, 0)
    return compute_intervals(con, replicates=replicates, seed=seed)


def fingerprint(con: duckdb.DuckDBPyConnection, replicates: int, seed: int) -> str:
    parts = [ALGORITHM, str(replicates), str(seed)]
    # one statement, not one per table (~1 ms each): the same counts and sums, so the same fingerprint
    rows = dict((r[0], r[1:]) for r in con.execute(" UNION ALL ".join(
        f"SELECT {i}, count(*), coalesce(sum(hash({'t' if cols == '*' else cols})), 0) FROM {table} t"
        for i, (table, cols) in enumerate(_INPUTS))).fetchall())
    for i, (table, _) in enumerate(_INPUTS):
        parts.append(f"{table}:{rows[i]}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


_BOUNDS_SQL = """
INSERT INTO interval_bounds
SELECT suite, version, m.name, level, node,
       quantile_cont(score, 0.025), quantile_cont(score, 0.975), NULL, NULL, NULL
FROM (
    SELECT replicate, suite, version, model, 'dataset' AS level, dataset AS node, score FROM boot_dataset_scores
    UNION ALL SELECT replicate, suite, version, model, 'task', task, score FROM boot_task_scores
    UNION ALL SELECT replicate, suite, version, model, 'sub_ability', sub_ability, score FROM boot_sub_ability_scores
    UNION ALL SELECT replicate, suite, version, model, 'ability', ability, score FROM boot_ability_scores
) JOIN boot_models m USING (model)
WHERE replicate >= 0
GROUP BY suite, version, m.name, level, node
UNION ALL
-- Overall: the interval of the would-be score (raw_total). A total that the veto zeroes in some
-- replicates would give 0 as the lower bound whenever p_veto >= 2.5 %, which says nothing of the
-- score; the veto's own uncertainty is p_veto.
SELECT suite, version, m.name, 'overall', 'overall',
       quantile_cont(raw_total, 0.025), quantile_cont(raw_total, 0.975),
       quantile_disc(rank, 0.025), quantile_disc(rank, 0.975),
       avg(CASE WHEN vetoed THEN 1.0 WHEN NOT vetoed THEN 0.0 END)
FROM boot_leaderboard JOIN boot_models m USING (model)
WHERE replicate >= 0
GROUP BY suite, version, m.name
"""


def build_replicates(con: duckdb.DuckDBPyConnection, *, replicates: int, seed: int,
                     models: tuple[str, str] | None = None) -> dict[str, float]:
    """Create the temp tables boot_dataset_scores ... boot_leaderboard (replicate -1 = point estimate).

    Their `model` column is a number; boot_models(model, name) names it.

    With ``models``, only those two models, on the items both answered (status
    ok for both): the paired comparison's sample. Returns wall seconds per phase.
    """
    clock = [time.perf_counter()]
    phases: dict[str, float] = {}

    def lap(name: str) -> None:
        clock.append(time.perf_counter())
        phases[name] = clock[-1] - clock[-2]

    collect_inputs(con, models)
    lap("inputs (SQL)")
    values = _replicate_values(con, replicates, seed)
    rows, scores = _dataset_replicates(con, values, seed, models)
    kept, source = _distinct_replicates(scores)
    # With replicates that draw alike (a dataset of one item draws it every time) the hierarchy runs once per
    # distinct replicate (`kept`, the point estimate first), into boot_distinct_*; boot_* are then views that
    # give every replicate its source's rows. Identical inputs give identical rows, so the bounds are the same.
    prefix = "boot_" if source is None else "boot_distinct_"
    labels = np.arange(-1, replicates, dtype=np.int32)[kept]
    n = len(kept)
    table: dict[str, pa.Array] = {"replicate": pa.array(np.tile(labels, len(rows)), pa.int32())}
    for j, col in enumerate(("suite", "version", "model", "dataset")):
        names = sorted({r[j] for r in rows})
        code = {x: i for i, x in enumerate(names)}
        idx = pa.array(np.repeat(np.array([code[r[j]] for r in rows], dtype=np.int32), n), pa.int32())
        # models by number through the hierarchy (a quarter less work than by name); boot_models names them
        table[col] = idx if col == "model" else pa.DictionaryArray.from_arrays(idx, pa.array(names, pa.string()))
        if col == "model":
            con.register("boot_model_names", pa.table({"model": pa.array(np.arange(len(names), dtype=np.int32)),
                                                       "name": pa.array(names, pa.string())}))
            con.execute("CREATE OR REPLACE TEMP TABLE boot_models AS SELECT * FROM boot_model_names")
            con.unregister("boot_model_names")
    table["coverage"] = pa.array(np.repeat(np.array([r[4] for r in rows], dtype=float), n), from_pandas=True)
    if source is not None:
        scores = scores[kept]  # (every row otherwise: no copy of a large run's scores)
    table["score"] = pa.array(scores.T.reshape(-1), from_pandas=True)  # NaN -> NULL
    table["estimated"] = pa.array(np.repeat(np.array([r[5] == "estimate" for r in rows], dtype=bool), n))
    con.register("boot_dataset_arrow", pa.table(table))
    con.execute(f"""CREATE OR REPLACE TEMP TABLE {prefix}dataset_scores AS
                   SELECT replicate, suite::VARCHAR AS suite, version::VARCHAR AS version, model,
                          dataset::VARCHAR AS dataset, coverage, score, estimated FROM boot_dataset_arrow""")
    con.unregister("boot_dataset_arrow")
    lap("replicate dataset scores (numpy)")
    # the views' own hierarchy, each layer materialised once for the next
    sql = render_views(hierarchy_sql(), replicates=True, prefix=prefix).replace(
        "CREATE OR REPLACE VIEW", "CREATE OR REPLACE TEMP TABLE")
    con.execute(sql)
    if source is not None:
        con.register("boot_source_arrow", pa.table({
            "replicate": pa.array(np.arange(-1, replicates, dtype=np.int32)),
            "source": pa.array(source.astype(np.int32) - 1)}))
        con.execute("CREATE OR REPLACE TEMP TABLE boot_replicate_source AS SELECT * FROM boot_source_arrow")
        con.unregister("boot_source_arrow")
        for t in _LAYERS:
            con.execute(f"""CREATE OR REPLACE TEMP VIEW boot_{t} AS
                            SELECT d.* REPLACE (s.replicate AS replicate)
                            FROM boot_distinct_{t} d JOIN boot_replicate_source s ON s.source = d.replicate""")
    lap("hierarchy (SQL)")
    return phases


_LAYERS = ("dataset_scores", "task_scores", "level_scores", "sub_ability_scores", "ability_scores", "leaderboard")


def drop_replicates(con: duckdb.DuckDBPyConnection) -> None:
    for t in _LAYERS:  # views over boot_distinct_* after replicates that draw alike, else tables (below)
        try:
            con.execute(f"DROP VIEW IF EXISTS boot_{t}")
        except duckdb.CatalogException:  # a table of that name (asking duckdb_views() costs more)
            pass
    for t in ("boot_play", "boot_items", "boot_inputs", "boot_keys", "boot_models", "boot_replicate_source",
              *(f"boot_{t}" for t in _LAYERS), *(f"boot_distinct_{t}" for t in _LAYERS)):
        con.execute(f"DROP TABLE IF EXISTS {t}")


def _distinct_replicates(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The rows of ``scores`` (row 0 the point estimate, then one per replicate) the hierarchy must be computed
    for, and each row's source: the first replicate with the very same dataset scores (bit for bit), or
    None when more than a quarter of the replicates are distinct (every row is computed). Rows are told apart
    by their bytes in a dict, given up at the first distinct row past the quarter: a few ms on any run
    (np.unique over rows sorts them, seconds on a large one)."""
    replicates = scores.shape[0] - 1
    every = np.arange(scores.shape[0])
    if replicates < 2 or scores.shape[1] == 0:
        return every, None
    first: dict[bytes, int] = {}
    source = np.zeros(replicates + 1, dtype=np.int64)
    for r in range(1, replicates + 1):
        source[r] = first.setdefault(scores[r].tobytes(), r)
        if 4 * len(first) > replicates:
            return every, None
    return np.array([0, *first.values()], dtype=np.int64), source


def _replicate_values(con: duckdb.DuckDBPyConnection, replicates: int, seed: int) -> np.ndarray:
    """values[b + 1, key_id] is the key's metric value in replicate b (row 0: the point estimate)."""
    keys = con.execute("SELECT key_id, dataset, model, metric, kind FROM boot_keys ORDER BY key_id").fetchall()
    values = np.full((replicates + 1, len(keys)), np.nan)
    datasets = con.execute("""
        SELECT dataset, count(*), md5(string_agg(item_id, chr(10) ORDER BY item_id))
        FROM (SELECT DISTINCT dataset, item_id FROM boot_items) GROUP BY dataset ORDER BY dataset""").fetchall()
    plays: dict[str, np.ndarray] = {}  # play datasets: the item of each unit, in idx order
    for dataset, item in con.execute("""
            SELECT dataset, list(item ORDER BY idx) FROM boot_items
            WHERE dataset IN (SELECT dataset FROM boot_play) GROUP BY dataset""").fetchall():
        plays[dataset] = np.asarray(item, dtype=np.int64)
    cols = con.execute("""
        SELECT k.key_id, b.idx, i.sa, i.na, i.sb, i.nb, i.sc, i.nc
        FROM boot_inputs i
        JOIN boot_keys k ON k.src = i.src AND k.model = i.model AND k.dataset = i.dataset
             AND k.metric IS NOT DISTINCT FROM i.metric AND k.suite IS NOT DISTINCT FROM i.suite
             AND k.version IS NOT DISTINCT FROM i.version AND k.method IS NOT DISTINCT FROM i.method
        JOIN boot_items b ON b.dataset = i.dataset AND b.item_id = i.item_id AND b.sample = i.sample
        ORDER BY k.key_id""").fetchnumpy()
    key_of_row = np.asarray(cols["key_id"])
    stats = np.stack([np.asarray(cols[c], dtype=float) for c in ("sa", "na", "sb", "nb", "sc", "nc")], axis=1)
    idx = np.asarray(cols["idx"])
    # keys are numbered in dataset order, so each dataset's keys (and rows) are one contiguous block
    block: dict[str, list[int]] = {}  # dataset -> [first key, last key + 1]
    for key_id, dataset, *_ in keys:
        block.setdefault(dataset, [key_id, key_id])[1] = key_id + 1
    for dataset, n, ids_md5 in datasets:
        if dataset not in block:
            continue
        lo, hi = block[dataset]
        # float32 from the start (every count exact): one (replicates x n) array, not three
        counts = resample_counts(seed, dataset, ids_md5, n, replicates, np.float32)
        if dataset in plays:  # n items, then their plays: the units the rows are indexed by
            counts = resample_plays(seed, dataset, ids_md5, counts, plays[dataset], np.float32)
            n = counts.shape[1]
        r0, r1 = np.searchsorted(key_of_row, np.array([lo, hi], dtype=key_of_row.dtype))
        v = np.zeros((n, (hi - lo) * 6))
        local = (key_of_row[r0:r1] - lo) * 6
        for j in range(6):
            v[idx[r0:r1], local + j] = stats[r0:r1, j]
        used = v.any(axis=0)  # unset b/c columns sum to 0 without a product
        sums = np.zeros((replicates + 1, v.shape[1]))
        sums[0] = v.sum(axis=0)  # the point estimate, in double precision
        # replicates in single precision: half the work; ~1e-7 relative on a bound
        sums[1:, used] = counts @ v[:, used].astype(np.float32)
        sums = sums.reshape(replicates + 1, hi - lo, 6)
        _apply_kinds(keys[lo:hi], sums, values[:, lo:hi])
    return values


def _apply_kinds(keys: list, sums: np.ndarray, out: np.ndarray) -> None:
    """Each key's kind formula on its replicate sums (a column per key), macro F1s last."""
    kinds = np.array([k[4] for k in keys])
    for kind in set(kinds) - {"macro_f1"}:
        sel = kinds == kind
        formula = KINDS[kind].python
        assert formula is not None  # only macro_f1 has none
        out[:, sel] = formula(Sums(*(sums[:, sel, j] for j in range(6))))
    for i in np.flatnonzero(kinds == "macro_f1"):
        labels = (kinds == "label_f1") & np.array([k[2] == keys[i][2] for k in keys])
        out[:, i] = macro_of(out[:, labels], axis=1)


def _dataset_replicates(con: duckdb.DuckDBPyConnection, values: np.ndarray, seed: int,
                        models: tuple[str, str] | None) -> tuple[list[tuple], np.ndarray]:
    """Replicate dataset scores: one row per dataset_scores row (of ``models``), one column per replicate.

    Methods -> dataset as method_scores and dataset_scores do (Algorithms 2 and 3):
    every normalization is affine, so the views' own normalized_score macro gives
    each method its offset and slope; the weighted mean skips methods without a
    value. The source (items, an estimate or an imported score) and coverage are the
    point estimate's: an imported score is a constant (no items to resample); an estimate
    from part of the items (store/estimates/scores.py) is drawn around itself with its own interval
    (store/stats/draws.py: estimate_draws). In a comparison (``models``) an estimated dataset is
    scored on the common items like any other: that is the comparison's sample.
    """
    methods = con.execute("""
        SELECT m.suite, m.version, k.model, m.dataset, k.key_id, m.weight,
               normalized_score(m.normalization, 0, m.lo, m.hi) AS offset,
               normalized_score(m.normalization, 1, m.lo, m.hi) - normalized_score(m.normalization, 0, m.lo, m.hi)
        FROM suite_methods_resolved m JOIN boot_keys k ON k.src = 'metric' AND k.dataset = m.dataset
             AND k.metric = m.metric AND m.normalization <> 'grade'
        UNION ALL
        SELECT m.suite, m.version, k.model, m.dataset, k.key_id, m.weight, 0.0, 1.0
        FROM suite_methods m JOIN boot_keys k ON k.src = 'grade' AND k.suite = m.suite AND k.version = m.version
             AND k.dataset = m.dataset AND k.method = m.method
        ORDER BY 1, 2, 3, 4""").fetchall()
    groups: dict[tuple, int] = {}
    starts: list[int] = []
    for i, m in enumerate(methods):
        if m[:4] not in groups:
            groups[m[:4]] = len(starts)
            starts.append(i)
    items = np.full((values.shape[0], len(starts)), np.nan)
    if methods:
        key_ids = np.array([m[4] for m in methods])
        w = np.array([m[5] for m in methods], dtype=float)
        offset = np.array([m[6] for m in methods], dtype=float)
        slope = np.array([m[7] for m in methods], dtype=float)
        score = offset + slope * values[:, key_ids]
        present = ~np.isnan(score)
        num = np.add.reduceat(np.where(present, w * np.nan_to_num(score), 0.0), starts, axis=1)
        den = np.add.reduceat(np.where(present, w, 0.0), starts, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            items = np.where(den == 0, np.nan, num / np.where(den == 0, 1.0, den))
    pick = "" if models is None else "WHERE s.model IN (SELECT unnest(?::VARCHAR[]))"
    points = con.execute(f"""
        SELECT s.suite, s.version, s.model, s.dataset, s.coverage,
               CASE WHEN s.source = 'estimate' AND ? THEN 'items' ELSE s.source END AS source,
               s.external_score, s.score, e.ci_low, e.ci_high
        FROM dataset_scores s
        LEFT JOIN dataset_estimates e ON s.source = 'estimate' AND e.model = s.model AND e.dataset = s.dataset
        {pick}""", [models is not None, *([list(models)] if models else [])]).fetchall()
    out = np.full((values.shape[0], len(points)), np.nan)
    for j, (suite, version, model, dataset, _, source, external, score, lo, hi) in enumerate(points):
        if source == "external":
            out[:, j] = external
        elif source == "estimate":
            out[0, j] = score  # replicate -1: the point estimate, as the view has it
            out[1:, j] = estimate_draws(seed, model, dataset, score, lo, hi, values.shape[0] - 1)
        elif source == "items" and (suite, version, model, dataset) in groups:
            out[:, j] = items[:, groups[suite, version, model, dataset]]
    return points, out

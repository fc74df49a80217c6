"""Paired comparison of two models, per dataset and per node of the hierarchy.

    python -m engine compare DB MODEL_A MODEL_B [--suite NAME] [--replicates 2000] [--seed 0] [--json]

Only items both models answered (every sample `ok` for both) count. The
difference A - B at each node comes from the paired bootstrap of
store/hierarchy/bootstrap.py restricted to those items (the same resampled items for both
models): the point difference, its 95 % percentile interval, and a two-sided
bootstrap p-value. A dataset whose score is plain accuracy (one method, the mean
of a 0/1 score, one sample per item) gets the exact McNemar test on the
discordant items instead. Semantics in docs/suites.md ("Paired comparison").
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb
import msgspec
import numpy as np

from benchmark.errors import UserError
from engine.report.estimated import ESTIMATED_MARK
from engine.report.terminal import one_line, printable
from store.db import connect
from store.hierarchy.bootstrap import build_replicates, drop_replicates
from store.hierarchy.suite_tables import open_suite
from store.stats.paired import bootstrap_p, mcnemar_exact

LEVELS = ("overall", "ability", "sub_ability", "task", "dataset")


class NodeDiff(msgspec.Struct, frozen=True):
    level: str
    node: str
    diff: float | None  # A - B on the common items (0-100 points)
    ci_low: float | None
    ci_high: float | None
    p: float | None
    n: int  # items both models answered, under this node
    test: str  # 'mcnemar' | 'bootstrap' | 'imported' (an imported score on either side: no items, no p)
    parent: str | None = None
    note: str | None = None  # overall: which model the gate vetoes on the common items
    estimated: tuple[str, ...] = ()  # the models whose score here the views estimate (part of a dataset answered)


def compare_models(con: duckdb.DuckDBPyConnection, suite: tuple[str, str], a: str, b: str, *,
                   replicates: int = 2000, seed: int = 0) -> list[NodeDiff]:
    """One NodeDiff per node where both models have a score on common items: overall first, datasets last."""
    known = {r[0] for r in con.execute("SELECT DISTINCT model FROM results").fetchall()}
    for m in (a, b):
        if m not in known:
            raise UserError(f"model {m!r} has no results in this database (known: "
                            f"{one_line(', '.join(sorted(known)))})")
    build_replicates(con, replicates=replicates, seed=seed, models=(a, b))
    try:
        diffs = _replicate_diffs(con, suite, a, b)
        counts = _item_counts(con, suite, a, b)
        discordant = _accuracy_discordance(con, suite, a, b)
        imported = {r[0] for r in con.execute(
            "SELECT DISTINCT dataset FROM dataset_scores WHERE suite = ? AND version = ? AND model IN (?, ?) "
            "AND source = 'external'", [*suite, a, b]).fetchall()}
        estimated = _estimated(con, suite, a, b)
        vetoed = [m for m, v in con.execute(
            "SELECT name, vetoed FROM boot_leaderboard JOIN boot_models USING (model) "
            "WHERE replicate = -1 AND suite = ? AND version = ?",
            list(suite)).fetchall() if v]
    finally:
        drop_replicates(con)
    out = []
    for (level, node, parent), d in diffs.items():
        point, reps = d[0], d[1:]
        valid = reps[~np.isnan(reps)]
        if math.isnan(point) and not len(valid):
            continue
        lo, hi = (np.percentile(valid, [2.5, 97.5]) if len(valid) else (math.nan, math.nan))
        test, p = "bootstrap", bootstrap_p(reps)
        if level == "dataset" and node in imported:
            test, p = "imported", None
        elif level == "dataset" and node in discordant:
            test, p = "mcnemar", mcnemar_exact(*discordant[node])
        note = f"vetoed: {', '.join(sorted(vetoed))} (total 0)" if level == "overall" and vetoed else None
        out.append(NodeDiff(level, node, _num(point), _num(lo), _num(hi), p, counts.get((level, node), 0), test,
                            parent, note, estimated.get((level, node), ())))
    out.sort(key=lambda r: LEVELS.index(r.level))
    return out


_ESTIMATED = """
SELECT 'dataset', dataset, model FROM dataset_scores WHERE suite = $1 AND version = $2 AND model IN ($3, $4) AND estimated
UNION ALL SELECT 'task', task, model FROM task_scores
WHERE suite = $1 AND version = $2 AND model IN ($3, $4) AND estimated
UNION ALL SELECT 'sub_ability', sub_ability, model FROM sub_ability_scores
WHERE suite = $1 AND version = $2 AND model IN ($3, $4) AND estimated
UNION ALL SELECT 'ability', ability, model FROM ability_scores
WHERE suite = $1 AND version = $2 AND model IN ($3, $4) AND estimated
UNION ALL SELECT 'overall', 'overall', model FROM leaderboard
WHERE suite = $1 AND version = $2 AND model IN ($3, $4) AND estimated
"""


def _estimated(con, suite: tuple[str, str], a: str, b: str) -> dict[tuple[str, str], tuple[str, ...]]:
    """(level, node) -> the models whose score there the views estimate from part of a dataset's items."""
    if not con.execute("SELECT count(*) FROM dataset_scores WHERE suite = ? AND version = ? AND model IN (?, ?) "
                       "AND estimated", [*suite, a, b]).fetchone()[0]:
        return {}  # the usual case, without the views above the datasets
    out: dict[tuple[str, str], list[str]] = {}
    for level, node, model in con.execute(_ESTIMATED, [*suite, a, b]).fetchall():
        out.setdefault((level, node), []).append(model)
    return {k: tuple(sorted(set(v))) for k, v in out.items()}


def _num(x) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


_NODES = """
SELECT replicate, model, 'overall' AS level, 'overall' AS node, NULL AS parent, total AS score
FROM boot_leaderboard WHERE suite = $1 AND version = $2
UNION ALL SELECT b.replicate, b.model, 'ability', b.ability, 'overall', b.score
FROM boot_ability_scores b WHERE suite = $1 AND version = $2
UNION ALL SELECT b.replicate, b.model, 'sub_ability', b.sub_ability, s.ability, b.score
FROM boot_sub_ability_scores b JOIN suite_sub_abilities s USING (suite, version, sub_ability)
WHERE suite = $1 AND version = $2
UNION ALL SELECT replicate, model, 'task', task, sub_ability, score
FROM boot_task_scores WHERE suite = $1 AND version = $2
UNION ALL SELECT b.replicate, b.model, 'dataset', b.dataset,
       (SELECT min(task) FROM suite_task_datasets t WHERE t.suite = $1 AND t.version = $2 AND t.dataset = b.dataset),
       b.score
FROM boot_dataset_scores b WHERE suite = $1 AND version = $2
"""


def _replicate_diffs(con, suite: tuple[str, str], a: str, b: str) -> dict[tuple, np.ndarray]:
    """(level, node, parent) -> A - B per replicate, index 0 the point estimate (replicate -1)."""
    rows = con.execute(f"""
        SELECT level, node, any_value(parent), replicate,
               max(score) FILTER (WHERE name = $3) - max(score) FILTER (WHERE name = $4)
        FROM ({_NODES}) JOIN boot_models USING (model)
        GROUP BY level, node, replicate ORDER BY level, node, replicate""",
                       [suite[0], suite[1], a, b]).fetchall()
    out: dict[tuple, list] = {}
    for level, node, parent, _, d in rows:
        out.setdefault((level, node, parent), []).append(math.nan if d is None else d)
    return {k: np.array(v, dtype=float) for k, v in out.items()}


def _item_counts(con, suite: tuple[str, str], a: str, b: str) -> dict[tuple[str, str], int]:
    """Items both models answered, per node (a dataset in several tasks counts under each)."""
    rows = con.execute("""
        WITH ds AS (SELECT dataset, count(DISTINCT item_id) AS n FROM boot_items GROUP BY dataset),
        edges AS (
            SELECT DISTINCT td.dataset, td.task, t.sub_ability, s.ability
            FROM suite_task_datasets td
            JOIN suite_tasks t USING (suite, version, task)
            JOIN suite_sub_abilities s USING (suite, version, sub_ability)
            WHERE td.suite = ? AND td.version = ?)
        SELECT 'dataset', d.dataset, any_value(d.n) FROM ds d WHERE d.dataset IN (SELECT dataset FROM edges)
        GROUP BY d.dataset
        UNION ALL SELECT 'task', e.task, sum(d.n) FROM edges e JOIN ds d USING (dataset) GROUP BY e.task
        UNION ALL SELECT 'sub_ability', sub_ability, sum(n) FROM (
            SELECT DISTINCT e.sub_ability, d.dataset, d.n FROM edges e JOIN ds d USING (dataset)) GROUP BY ALL
        UNION ALL SELECT 'ability', ability, sum(n) FROM (
            SELECT DISTINCT e.ability, d.dataset, d.n FROM edges e JOIN ds d USING (dataset)) GROUP BY ALL
        UNION ALL SELECT 'overall', 'overall', sum(n) FROM (
            SELECT DISTINCT d.dataset, d.n FROM edges e JOIN ds d USING (dataset))""", list(suite)).fetchall()
    return {(lv, node): int(n or 0) for lv, node, n in rows}


def _accuracy_discordance(con, suite: tuple[str, str], a: str, b: str) -> dict[str, tuple[int, int]]:
    """dataset -> (items only A got right, items only B got right), for plain-accuracy datasets.

    Plain accuracy: the suite scores the dataset by one method, the mean of the
    score column, and every common item has one sample scored 0 or 1 for both.
    """
    rows = con.execute("""
        WITH plain AS (
            SELECT m.dataset FROM suite_methods_resolved m
            JOIN dataset_metrics d ON d.dataset = m.dataset AND d.metric = m.metric
            WHERE m.suite = ? AND m.version = ?
            GROUP BY m.dataset
            HAVING count(*) = 1 AND bool_and(d.kind = 'mean' AND d.a = 'score' AND m.normalization = 'ratio')
        ), pairs AS (
            SELECT r.dataset, r.item_id,
                   max(r.score) FILTER (WHERE r.model = ?) AS sa, max(r.score) FILTER (WHERE r.model = ?) AS sb,
                   count(*) AS n_rows
            FROM results r SEMI JOIN boot_items i USING (dataset, item_id)
            WHERE r.model IN (?, ?) AND r.dataset IN (SELECT dataset FROM plain)
            GROUP BY r.dataset, r.item_id
        )
        SELECT dataset, count(*) FILTER (WHERE sa = 1 AND sb = 0), count(*) FILTER (WHERE sa = 0 AND sb = 1)
        FROM pairs GROUP BY dataset
        HAVING bool_and(n_rows = ? AND sa IN (0, 1) AND sb IN (0, 1))""",
                       [suite[0], suite[1], a, b, a, b, len({a, b})]).fetchall()
    return {d: (int(x), int(y)) for d, x, y in rows}


def verdict(a: str, b: str, overall: NodeDiff | None) -> str:
    if overall is None or overall.diff is None:
        return f"verdict: no overall score for both {a} and {b} on common items"
    pv = _p(overall.p) if _p(overall.p).startswith("<") else f"= {_p(overall.p)}"
    span = f"{overall.diff:+.2f} points, 95% CI [{overall.ci_low:+.2f}, {overall.ci_high:+.2f}], p {pv}"
    if overall.note:
        span += f"; {overall.note}"
    if overall.ci_low is not None and overall.ci_low > 0:
        return f"verdict: {a} is better than {b} overall ({span})"
    if overall.ci_high is not None and overall.ci_high < 0:
        return f"verdict: {b} is better than {a} overall ({span})"
    return f"verdict: no clear difference between {a} and {b} overall ({span}; the interval contains 0)"


def _p(p: float | None) -> str:
    return "—" if p is None else ("< 0.001" if p < 0.001 else f"{p:.3f}")


def _f(x: float | None) -> str:
    return "—" if x is None else f"{x:+.2f}"


def render_text(a: str, b: str, rows: list[NodeDiff]) -> str:
    by_parent: dict[str | None, list[NodeDiff]] = {}
    for r in rows:
        by_parent.setdefault(r.parent, []).append(r)
    lines = [f"{a} - {b}, on items both answered (points on 0-100; * = 95% interval excludes 0)",
             f"{'node':<44}{'diff':>8}{'95% CI':>18}{'p':>8}{'n':>8}  test"]

    def add(r: NodeDiff, depth: int) -> None:
        star = "*" if (r.ci_low is not None and r.ci_low > 0) or (r.ci_high is not None and r.ci_high < 0) else " "
        label = ("  " * depth + f"{r.node} ({r.level})" if r.level != "overall" else "overall")[:43]
        ci = f"[{_f(r.ci_low)}, {_f(r.ci_high)}]"
        est = f" {ESTIMATED_MARK}" if r.estimated else ""
        lines.append(f"{label:<44}{_f(r.diff):>8}{ci:>18}{_p(r.p):>8}{r.n:>8}  {r.test}{star}{est}")
        for c in sorted(by_parent.get(r.node, []), key=lambda c: c.diff if c.diff is not None else 0):
            if c.level != r.level:
                add(c, depth + 1)

    for r in rows:
        if r.level == "overall":
            add(r, 0)
    overall = next((r for r in rows if r.level == "overall"), None)
    lines.append(verdict(a, b, overall))
    lines += estimated_notes(rows)
    return "\n".join(lines)


def estimated_notes(rows: list[NodeDiff]) -> list[str]:
    """A line per model whose leaderboard scores are estimates: this comparison is not of those."""
    by_model: dict[str, list[str]] = {}
    for r in rows:
        for m in r.estimated if r.level == "dataset" else ():
            by_model.setdefault(m, []).append(r.node)
    return [f"{ESTIMATED_MARK} {m} answered part of {', '.join(sorted(ds))}: the leaderboard estimates its scores "
            "there (docs/estimates.md); this comparison uses only the items both models answered"
            for m, ds in sorted(by_model.items())]


def as_json(rows: list[NodeDiff]) -> dict:
    out: dict[str, dict] = {}
    for r in rows:
        key = r.node if r.node not in out else f"{r.level}:{r.node}"  # an id shared by two levels stays unique
        out[key] = {"level": r.level, "diff": r.diff, "ci_low": r.ci_low, "ci_high": r.ci_high, "p": r.p,
                    "n": r.n, "test": r.test} | ({"note": r.note} if r.note else {}) | (
                    {"estimated": list(r.estimated)} if r.estimated else {})
    return out


class CompareOptions(msgspec.Struct, frozen=True, kw_only=True):
    """`compare`'s options (engine/report/flags.py maps the flags onto them)."""

    db: Path
    model_a: str
    model_b: str
    suite: str | None = None  # name, name@version or .toml path; None: the only one loaded
    replicates: int = 2000  # bootstrap replicates
    seed: int = 0  # bootstrap seed
    json_out: bool = False  # one JSON object keyed by node id instead of the table


def compare(opts: CompareOptions) -> int:
    """Print the paired comparison A - B; a UserError for bad input."""
    if not opts.db.is_file():
        raise UserError(f"{opts.db}: no such database")
    if opts.replicates < 1:
        raise UserError("--replicates must be at least 1")
    con = connect(opts.db)
    try:
        suite = open_suite(con, opts.suite)
        rows = compare_models(con, suite, opts.model_a, opts.model_b, replicates=opts.replicates, seed=opts.seed)
    finally:
        con.close()
    if opts.json_out:
        print(json.dumps(as_json(rows), indent=1))
    else:
        print(printable(render_text(opts.model_a, opts.model_b, rows)))
    return 0

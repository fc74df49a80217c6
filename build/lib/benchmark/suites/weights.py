"""Each dataset's weight in a suite's overall score, read off the suite's hierarchy.

Below the veto the overall (the leaderboard's raw_total) is a weighted mean of weighted means
down to the datasets, so it is linear in the dataset scores: raw_total = sum of w_d x score_d.
`dataset_weights` multiplies the normalized weights along each dataset's path exactly as
store/hierarchy/views.sql does, renormalizing at every node over the children present (levels through the
suite's difficulty table and its `missing_levels` rule). The gate ability never enters the total:
its datasets weigh 0 there.
"""

from __future__ import annotations

from collections.abc import Collection

from benchmark.suites.suite import Suite, Task

Weights = dict[str, float]  # dataset id -> weight; a node's weights sum to 1


def dataset_weights(suite: Suite, present: Collection[str] | None = None) -> Weights:
    """w_d with raw_total = sum w_d x score_d when the datasets `present` (default: all) have scores."""
    have = set(suite.datasets if present is None else present)
    table: dict[str, dict[str, float]] = {}
    for lw in suite.difficulty:
        table.setdefault(lw.levels, {})[lw.level] = lw.weight
    abilities = []
    for a in suite.abilities:
        if a.id == suite.gate or a.weight is None:
            continue
        subs = []
        for s in a.sub_abilities:
            planned = "".join(lv for lv in "LMH" if any(t.level == lv for t in s.tasks))
            levels = {lv: _mean([(t.weight, _task(t, have)) for t in s.tasks if t.level == lv]) for lv in planned}
            shown = "".join(lv for lv in planned if levels[lv])
            # 'table' (the paper): the row of the levels with a score; 'renormalize': the planned row
            row = table.get(shown if suite.missing_levels == "table" else planned, {})
            subs.append((s.weight, _mean([(row.get(lv, 0.0), levels[lv]) for lv in shown])))
        abilities.append((a.weight, _mean(subs)))
    out = {d: 0.0 for d in suite.datasets}
    out.update(_mean(abilities))
    return out


def _task(t: Task, have: set[str]) -> Weights:
    return _mean([(r.weight, {r.id: 1.0}) for r in t.datasets if r.id in have])


def _mean(children: list[tuple[float, Weights]]) -> Weights:
    """A node's dataset weights: its children's, each scaled by its weight over those present."""
    kids = [(w, c) for w, c in children if c and w > 0]
    total = sum(w for w, _ in kids)
    out: Weights = {}
    for w, c in kids:
        for d, x in c.items():
            out[d] = out.get(d, 0.0) + w / total * x
    return out

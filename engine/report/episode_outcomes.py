"""A model's episode outcomes per interactive dataset, for the drill-down's dataset lines.

Read from the `episodes` view and the episodes' results rows (their stored transcript's ``end``:
benchmark/episodes/scoring.py ENDS). Only datasets with stored turns have a line, so a report of a
suite without interactive datasets (plain `moodbench`) reads nothing here and prints as before.
"""

from __future__ import annotations

import duckdb

from engine.report.estimated import relation_exists
from engine.report.table import fmt

_SQL = """
SELECT e.dataset, count(*) AS episodes, avg(e.final_emotion) AS final_emotion,
       sum(e.exchanges) AS exchanges, sum(e.simulator_errors) AS simulator_errors,
       count(*) FILTER (WHERE r.response->>'end' = 'success') AS success,
       count(*) FILTER (WHERE r.response->>'end' = 'failure') AS failure,
       count(*) FILTER (WHERE r.response->>'end' = 'cap') AS cap,
       count(*) FILTER (WHERE r.response->>'end' = 'end') AS ended,
       count(*) FILTER (WHERE r.response->>'end' = 'blocked' OR e.blocked_turns > 0) AS refused,
       count(*) FILTER (WHERE r.status IS NULL) AS unfinished
FROM episodes e
LEFT JOIN results r USING (model, dataset, item_id, sample)
WHERE e.model = ?
GROUP BY e.dataset
"""


def episode_details(con: duckdb.DuckDBPyConnection, model: str) -> dict[str, str]:
    """dataset -> "interactive: N episodes, final emotion X, ..." for the model; {} without turns."""
    if not relation_exists(con, "episodes"):
        return {}
    out = {}
    for ds, n, emo, ex, sim_err, success, failure, cap, ended, refused, unfinished in con.execute(
            _SQL, [model]).fetchall():
        parts = [f"interactive: {n} episodes ({ex} exchanges)", f"final emotion {fmt(emo)}",
                 f"{success} success, {failure} failure, {cap} at cap, {ended} ended by the seeker"]
        if refused:
            parts.append(f"{refused} refused/blocked")
        if sim_err:
            parts.append(f"{sim_err} simulator errors")
        if unfinished:
            parts.append(f"{unfinished} unfinished")
        out[ds] = ", ".join(parts)
    return out

"""How episodes ended, per model and interactive dataset: the drill-down's dataset lines, the line a sweep
ends with, and the item browser's outcome column.

An episode is not a right or wrong answer: it ends in success or failure (SAGE's stop rule), at the turn
cap, by the seeker, in a refusal or content block, in a simulator error or a failed call (both retried by
the next run, never scored), or it is unfinished (turns stored, no results row yet). Read from the
`episodes` view and the episodes' results rows (their stored transcript's ``end``:
benchmark/episodes/scoring.py ENDS). Only datasets with stored turns have a line, so a report of a suite
without interactive datasets (plain `moodbench`) reads nothing here and prints as before.
"""

from __future__ import annotations

import duckdb
import orjson

from engine.report.estimated import relation_exists

# outcome -> how a count of it reads, in the order they are listed.
OUTCOMES: dict[str, str] = {
    "success": "success", "failure": "failure", "cap": "at cap", "end": "ended by the seeker",
    "refusal": "refused/blocked", "simulator error": "simulator errors", "error": "call errors",
    "unfinished": "unfinished",
}
_ALWAYS = ("success", "failure", "cap", "end")  # said even at 0: the shape of a finished run

_SQL = """
SELECT e.model, e.dataset, e.final_emotion, e.exchanges,
       CASE WHEN r.status IS NULL THEN 'unfinished'
            WHEN r.status = 'error' AND r.error_class = 'simulator' THEN 'simulator error'
            WHEN r.status = 'error' THEN 'error'
            WHEN r.blocked IS NOT NULL OR e.blocked_turns > 0 THEN 'refusal'
            ELSE coalesce(r.response->>'end', 'cap') END AS outcome
FROM episodes e
LEFT JOIN results r USING (model, dataset, item_id, sample)
{where}
"""


def outcome_of(status: str, error_class: str | None, blocked: str | None, response: str | None) -> str:
    """One episode's outcome from its results row (the rule of the SQL above)."""
    if status == "error":
        return "simulator error" if error_class == "simulator" else "error"
    if blocked is not None:
        return "refusal"
    try:
        end = orjson.loads(response or "null")["end"]
    except (orjson.JSONDecodeError, TypeError, KeyError):
        return "cap"
    return "refusal" if end == "blocked" else str(end)


class Tally:
    def __init__(self) -> None:
        self.episodes = self.exchanges = 0
        self.emotions: list[float] = []
        self.outcomes: dict[str, int] = {k: 0 for k in OUTCOMES}

    def counts(self) -> str:
        """"0 success, 0 failure, 3 at cap, 0 ended by the seeker" and any other outcome that occurred."""
        return ", ".join(f"{n} {OUTCOMES[k]}" for k, n in self.outcomes.items() if n or k in _ALWAYS)


def tallies(con: duckdb.DuckDBPyConnection, model: str | None = None) -> dict[tuple[str, str], Tally]:
    """(model, dataset) -> its episodes' outcomes; {} without turns."""
    if not relation_exists(con, "episodes"):
        return {}
    where, params = ("WHERE e.model = ?", [model]) if model is not None else ("", [])
    out: dict[tuple[str, str], Tally] = {}
    for m, ds, emotion, exchanges, outcome in con.execute(_SQL.format(where=where), params).fetchall():
        t = out.setdefault((m, ds), Tally())
        t.episodes += 1
        t.exchanges += exchanges or 0
        if emotion is not None:
            t.emotions.append(emotion)
        t.outcomes[outcome] = t.outcomes.get(outcome, 0) + 1
    return out


def episode_details(con: duckdb.DuckDBPyConnection, model: str) -> dict[str, str]:
    """dataset -> "interactive: N episodes (E exchanges), final emotion X, 2 success, ..." for the model."""
    out = {}
    for (_, ds), t in sorted(tallies(con, model).items()):
        # As engine/report/table.py:fmt writes a number (not imported: the item browser's data imports this module).
        emotion = f"{sum(t.emotions) / len(t.emotions):.2f}" if t.emotions else "—"
        out[ds] = (f"interactive: {t.episodes} episodes ({t.exchanges} exchanges), final emotion {emotion}, "
                   + t.counts())
    return out


def outcome_lines(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The line a sweep's dataset table ends with, per model and interactive dataset: episodes are counted by
    how they ended, not as right or wrong answers."""
    return [f"{m} {ds}: {t.episodes} episodes: {t.counts()}" for (m, ds), t in sorted(tallies(con).items())]

"""Episodes are counted by how they ended, never as right or wrong answers: the item browser's data
(engine/report/html/items.py), the drill-down's line and the line a sweep ends with
(engine/report/episode_outcomes.py), over a real results file with one episode of every outcome."""

from __future__ import annotations

from datetime import datetime, timezone

import msgspec
from msgspec.structs import replace

from benchmark.episodes.scoring import Transcript, TurnRecord
from engine.report.episode_outcomes import episode_details, outcome_lines
from engine.report.html.items import items_payload
from store.db import connect
from store.hierarchy.views import ensure_views
from store.results.turns import TurnRow, insert_turns
from store.results.writer import insert_rows
from tests.store.helpers import row

NOW = datetime.now(timezone.utc)
DS = "synthetic_episodes"

# item -> (results row: status, error_class, blocked, the transcript's end, score; None: no row yet), last emotion
EPISODES = {
    "e1": (("ok", None, None, "success", 1.0), 100),
    "e2": (("ok", None, None, "failure", 0.05), 5),
    "e3": (("ok", None, None, "cap", 0.6), 60),
    "e4": (("ok", None, None, "end", 0.7), 70),
    "e5": (("ok", None, "refused", "blocked", None), 40),
    "e6": (("error", "simulator", None, None, None), 50),
    "e7": (("error", "transient", None, None, None), 50),
    "e8": (None, 45),
}
EXPECTED = {"e1": "success", "e2": "failure", "e3": "cap", "e4": "end", "e5": "refusal", "e6": "simulator error",
            "e7": "error", "e8": "unfinished"}


def _turn(item: str, turn: int, role: str, emotion: int | None, status: str = "ok") -> TurnRow:
    return TurnRow("m1", DS, item, 0, 0, turn, role, status, f"{role} {turn}", emotion, None, None, None, None, 1,
                   None, None, None, "x", None, "h", None, None, NOW, NOW)


def _db(tmp_path):
    con = connect(tmp_path / "r.duckdb")
    results, turns = [], []
    for item, (res, emotion) in EPISODES.items():
        turns += [_turn(item, 0, "seeker", 50), _turn(item, 1, "companion", None,
                                                      "blocked" if item == "e5" else "ok")]
        if item != "e5":
            turns.append(_turn(item, 1, "seeker", emotion, "unreadable" if item == "e6" else "ok"))
        if res is None:
            continue
        status, error_class, blocked, end, score = res
        r = row("m1", DS, item, status=status, score=score)
        if status == "ok":
            recs = (TurnRecord(0, 0, "seeker", "hi", emotion=50),)
            r = replace(r, response=msgspec.json.encode(Transcript(recs, end)).decode(), blocked=blocked,
                        prediction=None if blocked else str(emotion))
        else:
            r = replace(r, error_class=error_class)
        results.append(r)
    # A single-turn dataset beside it: its rows keep their shape, right or wrong.
    results += [row("m1", "copa", "c1", score=1.0), row("m1", "copa", "c2", score=0.0)]
    insert_rows(con, results)
    insert_turns(con, turns)
    ensure_views(con)
    return con


def test_the_browser_gets_each_episodes_outcome_and_single_turn_rows_are_unchanged(tmp_path):
    con = _db(tmp_path)
    try:
        payload = items_payload(con)
    finally:
        con.close()
    block = payload[DS]
    got = {block["ids"][r[0]]: r[6] for r in block["rows"]["m1"]}
    assert got == EXPECTED  # the unfinished episode (turns, no results row) is listed too
    unfinished = next(r for r in block["rows"]["m1"] if block["ids"][r[0]] == "e8")
    assert unfinished[1:6] == [None] * 5
    assert set(block["turns"]["m1"]) == set(EXPECTED)
    copa = payload["copa"]
    assert "turns" not in copa and all(len(r) == 6 for r in copa["rows"]["m1"])


def test_the_terminal_counts_episodes_by_outcome(tmp_path):
    con = _db(tmp_path)
    try:
        line = episode_details(con, "m1")[DS]
        lines = outcome_lines(con)
    finally:
        con.close()
    # Emotions of the episodes' last readable seeker turns: 100, 5, 60, 70, 50 (e5's opening), 50 (e6's opening:
    # its second reply was unreadable), 50, 45; exchanges: the companion's ok turns (all but e5's refusal).
    assert line == ("interactive: 8 episodes (7 exchanges), final emotion 53.75, 1 success, 1 failure, 1 at cap, "
                    "1 ended by the seeker, 1 refused/blocked, 1 simulator errors, 1 call errors, 1 unfinished")
    assert lines == [f"m1 {DS}: 8 episodes: 1 success, 1 failure, 1 at cap, 1 ended by the seeker, "
                     "1 refused/blocked, 1 simulator errors, 1 call errors, 1 unfinished"]
    assert "wrong" not in line and "right" not in line

"""The interactive adapters played end to end: the simulated server's scripted seeker (answer mode
``seeker``) as the [user_simulator] and its free-text companion, over HTTP, on the adapters' fixtures;
the stored emotions are the scripted seeker's rule recomputed from the stored companion turns."""

from __future__ import annotations

import zlib
from pathlib import Path

from simulator.server import SimServerProcess
from tests.integration.helpers import query, run_cli
from tests.integration.test_episodes import models

FIXTURES = Path(__file__).resolve().parents[1] / "benchmark" / "fixtures"


def test_fixtures_played_with_the_scripted_seeker(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="seeker") as sim:
        m = models(tmp_path / "models.toml", sim.base_url)
        r = run_cli("sweep", str(m), "--db", str(db), "--datasets", "esconv_support,memory_sessions,cped_support",
                    "--data-dir", str(FIXTURES), "--turns", "3", "--quiet")
        assert r.returncode == 0, r.stderr[-2000:]
    rows = query(db, "SELECT dataset, item_id, session, turn, role, status, content, emotion FROM turns "
                     "ORDER BY dataset, item_id, session, turn, role")
    assert rows and all(status == "ok" for *_, status, _, _ in rows)
    assert {d for d, *_ in rows} == {"esconv_support", "memory_sessions", "cped_support"}
    # the seeker's emotion after each companion message: START + sum of crc32 steps, clipped at each step
    starts = {"ESConv-0": 26, "ESConv-1": 18, "ESConv-2": 34}
    for item, start in starts.items():
        turns = [t for t in rows if t[0] == "esconv_support" and t[1] == item]
        assert sum(t[4] == "seeker" and t[3] > 0 for t in turns) >= 1, item
        emotion = start
        for _, _, _, turn, role, _, content, got in turns:
            if role == "companion":
                emotion = max(0, min(100, emotion + zlib.crc32(content.encode()) % 31 - 10))
            elif turn > 0:
                assert got == emotion, (item, turn)
    # memory_sessions: session 3 asks the probes back
    asked = [c for d, _, s, _, role, _, c, _ in rows if d == "memory_sessions" and s == 2 and role == "seeker"]
    assert "Do you remember? What is the name of my cat?" in asked

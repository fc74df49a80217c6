"""Episodes seen as dialogues: a sweep of synthetic episodes against the simulated server (companion in
echo mode, a scripted JSON seeker), then the HTML report's item browser in headless Chromium shows each
episode as its transcript with the seeker's emotion curve; `export` writes the `turns` table."""

from __future__ import annotations

import csv
import subprocess
import sys
import time
from datetime import datetime, timezone

import duckdb
import pytest

from engine.report.html.emotion_figure import emotion_figures
from engine.report.html.items import items_payload
from simulator.server import SimServerProcess
from store.results.turns import TurnRow, insert_turns
from tests.integration.helpers import ROOT, query, run_cli
from tests.integration.report_db import free_port, loaded_page, screenshot_dir
from tests.integration.test_episodes import SEEKER, models, sweep_args
from tests.integration.test_serve import _get, _wait_up


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("episodes")
    db = tmp / "r.duckdb"
    with SimServerProcess(mode="echo", profiles={"seeker-sim": {"mode": "fixed:" + SEEKER}}, seed=1) as sim:
        r = run_cli(*sweep_args(models(tmp / "models.toml", sim.base_url), db, 3, 2))
        assert r.returncode == 0, r.stderr
    return db


def test_items_payload_carries_each_episode_in_order_with_marks(swept, tmp_path):
    db = tmp_path / "copy.duckdb"
    db.write_bytes(swept.read_bytes())
    item = query(db, "SELECT min(item_id) FROM turns")[0][0]
    now = datetime.now(timezone.utc)
    # A refused companion turn and an unreadable seeker reply, through the turns writer's insert.
    extra = [TurnRow("m1", "synthetic_episodes", item, 0, 9, 1, role, status, text, None, None, None, None, None,
                     1, None, None, None, "m1", None, "h", None, None, now, now)
             for role, status, text in (("companion", "blocked", "I can't help with that."),
                                        ("seeker", "unreadable", "not json"))]
    with duckdb.connect(str(db)) as con:
        insert_turns(con, extra)
        block = items_payload(con, dataset="synthetic_episodes")["synthetic_episodes"]
    turns = block["turns"]["m1"][item]
    assert set(block["turns"]["m1"]) == set(block["ids"])  # every episode has its transcript
    assert turns[0][2] == "seeker" and turns[0][1] == 0  # the seeker opens
    # Within an exchange the companion speaks before the seeker answers it.
    assert [t[2] for t in turns if t[0] == 0 and t[1] == 1] == ["companion", "seeker"]
    answered = [t for t in turns if t[2] == "seeker" and t[1] > 0 and t[3] == "ok"]
    assert answered and all(t[5] == 60 and t[6] == "heard" for t in answered)
    assert turns[-2:] == [[9, 1, "companion", "blocked", "I can't help with that.", None, None],
                          [9, 1, "seeker", "unreadable", "not json", None, None]]


def test_item_browser_shows_a_transcript_with_its_curve(swept, tmp_path):
    out = tmp_path / "report.html"
    r = run_cli("report", str(swept), "--html", str(out))
    assert r.returncode == 0, r.stderr
    with loaded_page(out.as_uri()) as page:
        page.select_option("#it-dataset", "synthetic_episodes")
        page.select_option("#it-model", "m1")
        page.select_option("#it-filter", "all")
        page.wait_for_selector("#it-table .transcript")
        first = page.locator("#it-table .transcript").first
        text = first.inner_text()
        assert "session 1" in text and "opens seeker" in text
        assert "turn 1 companion" in text and "seeker (emotion 60: heard)" in text
        assert page.locator("#it-table .transcript").count() == 3
        # The curve: one point per seeker turn that reported an emotion.
        n_emotions = query(swept, "SELECT count(*) FROM turns WHERE role = 'seeker' AND emotion IS NOT NULL "
                                  "AND item_id = (SELECT min(item_id) FROM turns)")[0][0]
        points = first.locator("svg.curve polyline").get_attribute("points") or ""
        assert len(points.split()) == n_emotions
        # Counted by how they ended, not as right or wrong answers; the filter offers the outcomes.
        note = page.inner_text("#it-note")
        assert "3 episodes (0 success, 0 failure, 3 at cap, 0 ended by the seeker)" in note, note
        assert "wrong" not in note and "right" not in note
        assert "at cap" in page.locator("#it-filter option").all_inner_texts()
        assert page.locator("#it-table td.outcome").all_inner_texts() == ["at the turn cap"] * 3
        page.select_option("#it-filter", "success")
        page.wait_for_function("!document.querySelector('#it-table .transcript')")
        page.select_option("#it-filter", "cap")
        page.wait_for_selector("#it-table .transcript")
        page.locator("#items").screenshot(path=str(screenshot_dir() / "report-episodes.png"))
        # The figure: m1's mean emotion by seeker message, 60 at every point (the scripted seeker).
        fig = page.locator("#fig-emotion-synthetic_episodes")
        fig.locator(".plot .scatterlayer .trace").first.wait_for()
        ys = page.evaluate("document.querySelector('#fig-emotion-synthetic_episodes .plot').data[0].y")
        assert ys and all(y == 60 for y in ys)
        fig.screenshot(path=str(screenshot_dir() / "report-emotion-figure.png"))


def test_export_writes_turns(swept, tmp_path):
    r = run_cli("export", str(swept), "--out", str(tmp_path / "x"))
    assert r.returncode == 0, r.stderr
    files = {p.name: p for p in (tmp_path / "x").rglob("*")}
    turns = next(p for name, p in files.items() if name.startswith("turns."))
    n = query(swept, "SELECT count(*) FROM turns")[0][0]
    if turns.suffix == ".csv":
        with turns.open() as f:
            assert sum(1 for _ in csv.DictReader(f)) == n
    else:
        with duckdb.connect() as con:
            assert con.execute(f"SELECT count(*) FROM '{turns}'").fetchall() == [(n,)]
    assert any(name.startswith("episodes.") for name in files)
    assert any(name.startswith("episode_summary.") for name in files)


def test_drilldown_names_episode_outcomes(swept):
    r = run_cli("report", str(swept), "--model", "m1", "--format", "csv")  # one row per node, unwrapped
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if "interactive:" in x)
    # 3 episodes of 2 exchanges per session, the seeker fixed at 60: none reaches 100 or falls under 10.
    n_ex = query(swept, "SELECT count(*) FROM turns WHERE role = 'companion' AND status = 'ok'")[0][0]
    assert f"interactive: 3 episodes ({n_ex} exchanges), final emotion 60.00, 0 success, 0 failure, 3 at cap" in line
    assert "refused" not in line and "simulator errors" not in line


def test_live_view_counts_episodes_and_turns(tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    db = tmp_path / "live.duckdb"
    with SimServerProcess(mode="echo", profiles={"seeker-sim": {"mode": "fixed:" + SEEKER}}, seed=1,
                          latency_ms=1000) as sim:  # long enough for the page to load mid-sweep
        args = sweep_args(models(tmp_path / "models.toml", sim.base_url, concurrency=2), db, 4, 3)
        proc = subprocess.Popen([sys.executable, "-m", "engine", *args, "--serve", str(port)], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            _wait_up(url, proc, timeout=120)
            seen = None
            end = time.monotonic() + 60
            while time.monotonic() < end and proc.poll() is None:
                row = _get(url + "api/live", timeout=30)["models"][0]
                if row.get("turns"):
                    seen = row
                    break
                time.sleep(0.3)
            assert seen is not None, "no turns counted while the sweep ran"
            assert 1 <= seen["episodes"] <= 4 and 0 <= seen["episodes_done"] <= seen["episodes"]
            try:
                with loaded_page(url, wait="#live-table tbody tr") as page:
                    head = page.inner_text("#live-table thead")
                    assert "Episodes" in head and "Turns" in head
                    page.locator("#live").screenshot(path=str(screenshot_dir() / "live-episodes.png"))
            except pytest.skip.Exception:
                pass  # no browser here: the API checks above stand
            assert proc.wait(180) == 0, proc.stderr.read()
        finally:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(10)


def test_emotion_by_turn_averages_the_episodes_still_going(swept, tmp_path):
    db = tmp_path / "copy.duckdb"
    db.write_bytes(swept.read_bytes())
    now = datetime.now(timezone.utc)

    def seeker(turn: int, emotion: int) -> TurnRow:
        return TurnRow("m1", "synthetic_episodes", "extra", 0, 0, turn, "seeker", "ok", "..", emotion, "", False,
                       None, None, 1, None, None, None, "sim", None, "h", None, None, now, now)

    with duckdb.connect(str(db)) as con:
        insert_turns(con, [seeker(0, 0), seeker(1, 30)])  # one more episode: 0, then 30, then it ends
        fig = next(f for f in emotion_figures(con) if f["id"] == "emotion-synthetic_episodes")
    trace = fig["figure"]["data"][0]
    # 3 swept episodes at 60 on every message, plus the extra one: (3*60 + 0)/4, (3*60 + 30)/4, then 60 of 3.
    assert list(trace["x"][:3]) == [0, 1, 2]
    assert list(trace["y"][:3]) == [45.0, 52.5, 60.0] and list(trace["customdata"][:3]) == [4, 4, 3]


def test_serve_sends_whole_transcripts_and_shows_them(swept):
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    proc = subprocess.Popen([sys.executable, "-m", "engine", "serve", str(swept), "--port", str(port)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_up(url, proc)
        block = _get(url + "api/items?dataset=synthetic_episodes&model=m1")
        stored = query(swept, "SELECT count(*) FROM turns WHERE model = 'm1'")[0][0]
        assert sum(len(t) for t in block["turns"]["m1"].values()) == stored
        try:
            with loaded_page(url) as page:
                page.select_option("#it-dataset", "synthetic_episodes")
                page.select_option("#it-model", "m1")
                page.wait_for_selector("#it-table .transcript svg.curve")
                assert "seeker (emotion 60: heard)" in page.locator("#it-table .transcript").first.inner_text()
        except pytest.skip.Exception:
            pass  # no browser here: the API check above stands
    finally:
        proc.terminate()
        proc.wait(10)

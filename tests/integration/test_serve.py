"""`serve DB` and `sweep --serve PORT`: the report page over HTTP, driven in headless Chromium."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from simulator.server import SimServerProcess
from tests.conftest import DATA_DIR
from tests.integration.helpers import ROOT, query
from tests.integration.report_db import (
    DATASETS,
    MODELS,
    build_db,
    free_port,
    loaded_page,
    models_file,
    screenshot_dir,
    sim_profiles,
)


def _get(url: str, timeout: float = 10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.loads(r.read())


def _wait_up(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise AssertionError(f"server exited: {proc.stderr.read()}")
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"{url} not up after {timeout} s")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    db = build_db(tmp_path_factory.mktemp("serve"))
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "engine", "serve", str(db), "--port", str(port)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_up(f"http://127.0.0.1:{port}/", proc)
        yield db, f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        proc.wait(10)


def test_api_sends_the_report_and_one_datasets_items(served):
    db, url = served
    report = _get(url + "api/report")
    assert sorted(r["model"] for r in report["leaderboard"]) == sorted(MODELS)
    got = _get(url + "api/items?dataset=copa&models=alpha-large,echo-model")
    want = query(db, "SELECT model, count(*) FROM results WHERE dataset = 'copa' AND model IN "
                     "('alpha-large', 'echo-model') GROUP BY model ORDER BY model")
    assert [(m, len(got["rows"][m])) for m in sorted(got["rows"])] == want
    # Responses are sent whole (the static file cuts them): the echo model's are the prompts.
    (longest,), = query(db, "SELECT max(length(response)) FROM results WHERE dataset = 'copa' AND model = 'echo-model'")
    assert max(len(r[1]) for r in got["rows"]["echo-model"]) == longest
    with pytest.raises(urllib.error.HTTPError) as e:
        _get(url + "api/items?dataset=copa")
    assert e.value.code == 400


def test_served_page_opens_items_filters_wrong_and_compares(served):
    db, url = served
    (n_unparsed,), = query(db, "SELECT count(*) FROM results WHERE model = 'echo-model' AND dataset = 'sst2' "
                               "AND status = 'ok' AND prediction IS NULL")
    with loaded_page(url) as page:
        page.wait_for_function("document.querySelectorAll('.js-plotly-plot svg.main-svg').length >= 5")
        page.select_option("#it-dataset", "sst2")
        page.select_option("#it-model", "echo-model")
        page.select_option("#it-filter", "unparsed")
        page.wait_for_function("document.querySelector('#it-note').textContent.includes('echo-model on sst2')")
        assert n_unparsed > 0
        assert page.locator("#it-table tbody tr").count() == n_unparsed
        page.select_option("#it-filter", "wrong")
        page.select_option("#it-other", "alpha-small")
        page.wait_for_function("document.querySelectorAll('#it-table thead th').length === 8")
        b_scores = dict(query(db, "SELECT item_id, score FROM results WHERE model = 'alpha-small' "
                                  "AND dataset = 'sst2'"))
        rows = [r.locator("td").all_inner_texts() for r in page.locator("#it-table tbody tr").all()]
        assert len(rows) == n_unparsed  # every echo answer is unparsed, so all are "wrong"
        for cells in rows:  # item, gold, A (response, prediction, score), B (the same) side by side
            assert cells[4] == "0.00" and cells[3] == "unparsed"
            assert cells[7] == f"{b_scores[cells[0]]:.2f}"
        page.locator("#items").screenshot(path=str(screenshot_dir() / "serve-items.png"))
        assert page.errors == []
        assert all(u.startswith(url) for u in page.requests)  # nothing but the server itself


def test_sweep_serves_a_live_view_while_it_runs(tmp_path):
    if not DATA_DIR.is_dir():
        pytest.skip(f"real data not found at {DATA_DIR} (set ENGINE_SHARED_DIR)")
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    db = tmp_path / "live.duckdb"
    with SimServerProcess(profiles=sim_profiles(latency_ms=1000)) as sim:
        m = models_file(tmp_path / "models.toml", sim.base_url)
        proc = subprocess.Popen([sys.executable, "-m", "engine", "sweep", str(m), "--db", str(db), "--data-dir",
                                 str(DATA_DIR), "--datasets", DATASETS, "--limit", "12", "--quiet",
                                 "--serve", str(port)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        try:
            _wait_up(url, proc, timeout=120)
            live = _get(url + "api/live", timeout=30)
            assert live["state"] == "running"
            assert sorted(r["model"] for r in live["models"]) == sorted(MODELS)
            assert all(r["total"] == 12 * len(DATASETS.split(",")) for r in live["models"])
            assert {"leaderboard", "coverage", "figures"} <= set(live["report"])
            try:
                with loaded_page(url, wait="#live-table tbody tr") as page:
                    first = page.inner_text("#live-table tbody")
                    page.wait_for_function(f"document.querySelector('#live-table tbody').innerText !== "
                                           f"{json.dumps(first)}", timeout=20_000)  # refreshed in place
                    page.screenshot(path=str(screenshot_dir() / "live.png"))
                    assert page.errors == []
            except pytest.skip.Exception:
                pass  # no browser here: the API checks above stand
            assert proc.wait(180) == 0, proc.stderr.read()
        finally:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(10)
    assert query(db, "SELECT count(*) FROM results") == [(12 * len(DATASETS.split(",")) * len(MODELS),)]
    with pytest.raises(OSError):  # the view ends with the sweep
        urllib.request.urlopen(url, timeout=2)


def test_cluster_live_view_shows_each_units_node_in_the_page(tmp_path):
    """A cluster sweep's live page (engine/sweep/live.py serves it from a thread beside the driver): the units
    table names each unit's node, and the heading counts the units running per node."""
    from engine.run.progress import Progress
    from engine.sweep.live import live_view_thread
    from store.side import cluster as units_table
    from store.results import runs
    from tests.engine.report.mini_db import mini_db

    con = mini_db(tmp_path, {"a": [1.0, 0.0], "b": [1.0, 1.0]})
    units_table.ensure_tables(con)
    runs.start_run(con, "r1", command="m.toml", engine_version="x", suite="mini", suite_version="1")
    head, worker = "aa" * 28, "bb" * 28  # Ray's node ids: 56 hex digits
    for model, ds, node, attempt, end in (("a", "dvs", head, 1, "done"), ("a", "df1", head, 1, None),
                                          ("b", "dvs", worker, 1, "lost"), ("b", "dvs", worker, 2, None)):
        units_table.unit_started(con, "r1", model, ds, attempt, node)
        if end:
            units_table.unit_ended(con, "r1", model, ds, attempt, end)
    progress = Progress(quiet=True)
    progress.add("a", 4, 2)
    progress.add("b", 4, 0)
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    with live_view_thread(port, con, progress, cluster=True):
        end = time.monotonic() + 30
        while True:
            try:
                live = _get(url + "api/live")
                break
            except OSError:
                assert time.monotonic() < end
                time.sleep(0.1)
        assert [(u["node"], u["model"], u["dataset"], u["attempt"], u["status"]) for u in live["units"]] == [
            (head, "a", "df1", 1, "running"), (head, "a", "dvs", 1, "done"),
            (worker, "b", "dvs", 1, "lost"), (worker, "b", "dvs", 2, "running")]
        with loaded_page(url, wait="#live-units-table tbody tr") as page:
            rows = [r.split("\t") for r in page.inner_text("#live-units-table tbody").splitlines()]
            assert rows == [["aaaaaaaa", "a", "df1", "1", "running"], ["aaaaaaaa", "a", "dvs", "1", "done"],
                            ["bbbbbbbb", "b", "dvs", "1", "lost"], ["bbbbbbbb", "b", "dvs", "2", "running"]]
            assert page.inner_text("#live-nodes") == "(node aaaaaaaa: 1 running; node bbbbbbbb: 1 running)"
            page.screenshot(path=str(screenshot_dir() / "live-cluster.png"))
            assert page.errors == []
    with pytest.raises(OSError):  # the view ends with the block
        urllib.request.urlopen(url, timeout=2)
    con.close()

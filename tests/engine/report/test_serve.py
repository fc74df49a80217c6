"""`serve`: only its own Host, one report build per state of the file, items beside a build, this version's
views, the exit-code table, ports checked."""

from __future__ import annotations

import asyncio
import csv
import http.client
import io
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import duckdb
import pytest
from aiohttp.test_utils import TestClient, TestServer

import engine.report.reader as reader_module
from engine.cli import main
from engine.report.hosts import HostCheck
from engine.report.reader import FileSource, Reader
from engine.report.serve import build_app
from tests.integration.helpers import ROOT
from tests.integration.report_db import free_port
from tests.engine.report.mini_db import mini_db
from tests.store.test_views_support import scored

COMMA = "gpt, the big one"


@pytest.fixture
def db(tmp_path):
    # COMMA: a name a stored file may hold, whatever models.toml allows now
    con = mini_db(tmp_path, {"m1": [0.8, 0.6], "m2": [0.9, 0.3], COMMA: [1.0, 0.0]})
    # The file's stored leaderboard is not this version's: serve must read the views report reads.
    con.execute("ALTER VIEW leaderboard RENAME TO leaderboard_as_stored")
    con.execute("CREATE VIEW leaderboard AS SELECT * REPLACE (total + 7 AS total) FROM leaderboard_as_stored")
    con.close()
    return tmp_path / "results.duckdb"


def report_totals(db, capsys) -> dict[str, float]:
    assert main(["report", str(db), "--format", "csv"]) == 0
    return {r["model"]: float(r["total"]) for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}


async def client(reader: Reader, port: int = 8000) -> TestClient:
    app = build_app(reader, title="t", hosts=HostCheck("127.0.0.1", port))
    c = TestClient(TestServer(app, host="127.0.0.1", port=port))
    await c.start_server()
    return c


async def test_api_report_shows_the_totals_report_prints(db, capsys):
    want = report_totals(db, capsys)
    r = Reader(FileSource(db), ("mini", "1"))
    c = await client(r, free_port())
    try:
        resp = await c.get("/api/report", headers={"Host": f"localhost:{c.port}"})
        got = {row["model"]: row["total"] for row in (await resp.json())["leaderboard"]}
    finally:
        await c.close()
        r.close()
    assert got == pytest.approx(want)


HOSTS = [("localhost:{p}", True), ("127.0.0.1:{p}", True), ("[::1]:{p}", True), ("evil.example:{p}", False),
         ("localhost:{q}", False), ("localhost", False), ("127.0.0.1.nip.io:{p}", False)]


async def test_only_a_host_naming_this_server_is_answered(db):
    port = free_port()
    r = Reader(FileSource(db), ("mini", "1"))
    c = await client(r, port)
    try:
        for host, ok in HOSTS:
            for path in ("/", "/api/report", "/api/items?dataset=df1&model=m1"):
                resp = await c.get(path, headers={"Host": host.format(p=port, q=port + 1)})
                assert (resp.status == 200) is ok, (host, path, resp.status)
                if not ok:
                    assert resp.status == 421 and "is not this server" in await resp.text()
    finally:
        await c.close()
        r.close()


def test_host_check_for_one_address_and_for_every_interface():
    one = HostCheck("192.168.1.20", 80)
    assert one.allows("192.168.1.20") and one.allows("localhost:80") and not one.allows("10.0.0.1")
    every = HostCheck("0.0.0.0", 8000)
    assert every.allows("10.1.2.3:8000") and every.allows("[fe80::1]:8000") and every.allows("localhost:8000")
    assert not every.allows("rebound.example:8000") and not every.allows("10.1.2.3:8001")


async def test_report_is_built_once_per_state_of_the_file_and_again_when_it_changes(db, monkeypatch):
    builds = []
    real = reader_module.gather
    monkeypatch.setattr(reader_module, "gather", lambda con, suite: builds.append(1) or real(con, suite))
    source = FileSource(db)
    r = Reader(source, ("mini", "1"))
    try:
        bodies = await asyncio.gather(*(r.report() for _ in range(20)))  # concurrent: one build shared
        assert len(builds) == 1 and len(set(bodies)) == 1
        assert await r.report() == bodies[0] and len(builds) == 1
        # The file replaced (as a sweep renames its snapshot into place): the next request builds anew.
        copy = db.with_name("copy.duckdb")
        shutil.copyfile(db, copy)
        con = duckdb.connect(str(copy))
        scored(con, "m3", "dvs", 50)
        con.close()
        os.replace(copy, db)
        again = await r.report()
        assert len(builds) == 2 and b'"m3"' in again
    finally:
        r.close()


async def test_items_are_answered_while_a_slow_report_builds(db, monkeypatch):
    started, release = threading.Event(), threading.Event()

    def slow(con, suite):
        started.set()
        release.wait(10)
        return {"leaderboard": []}

    monkeypatch.setattr(reader_module, "gather", slow)
    port = free_port()
    r = Reader(FileSource(db), ("mini", "1"))
    c = await client(r, port)
    host = {"Host": f"127.0.0.1:{port}"}
    try:
        building = asyncio.ensure_future(c.get("/api/report", headers=host))
        await asyncio.to_thread(started.wait, 10)
        t0 = time.monotonic()
        page = await c.get("/", headers=host)
        resp = await c.get("/api/items", params=[("dataset", "df1"), ("model", COMMA)], headers=host)
        assert page.status == 200 and resp.status == 200 and time.monotonic() - t0 < 5
        assert not building.done()  # the build still runs: nothing waited for it
        got = await resp.json()
        assert list(got["rows"]) == [COMMA] and len(got["rows"][COMMA]) == 2  # a name with a comma
        release.set()
        assert (await building).status == 200
    finally:
        release.set()
        await c.close()
        r.close()


@pytest.mark.parametrize("argv, flag", [(["serve", "{db}", "--port", "99999"], "--port 99999"),
                                        (["serve", "{db}", "--port", "0"], "--port 0"),
                                        (["sweep", "{tmp}/models.toml", "--serve", "99999"], "--serve 99999"),
                                        (["sweep", "{tmp}/models.toml", "--serve", "-1"], "--serve -1")])
def test_a_port_outside_1_to_65535_is_one_line(db, tmp_path, capsys, argv, flag):
    assert main([a.format(db=db, tmp=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {flag}: give a port from 1 to 65535\n"


def test_a_file_without_results_tables_is_one_line_that_does_not_send_to_report(tmp_path, capsys):
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).close()
    assert main(["serve", str(other), "--port", str(free_port())]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a results database" in err and "report" not in err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.slow
def test_serve_exits_130_on_a_signal_and_warns_on_every_interface(db, sig):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "engine", "serve", str(db), "--port", str(port), "--host",
                             "0.0.0.0"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        lines = [proc.stderr.readline() for _ in range(2)]  # the warning, then the URL: it listens
        assert lines[0].startswith("warning: listening on 0.0.0.0") and "every stored response" in lines[0]
        assert "serving http://" in lines[1]
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/api/report", headers={"Host": f"10.9.8.7:{port}"})  # an address: no name to rebind
        assert conn.getresponse().status == 200
        proc.send_signal(sig)
        assert proc.wait(30) == 130
        assert proc.stderr.read().strip() == "interrupted"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)

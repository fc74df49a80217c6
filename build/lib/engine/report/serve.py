"""`python -m engine serve DB [--port 8000] [--host 127.0.0.1] [--suite NAME]`: the report page, read-only.

The page is the one `report --html` writes; here it fetches its data instead of
carrying it: GET /api/report (everything but the items), GET /api/items?dataset=D&
models=A,B (one dataset's items for one or two models, responses whole). `sweep --serve
PORT` runs the same app inside the sweep (`serve_live`), reading through a cursor of the
sweep's own connection, with GET /api/live (progress per model, 429s, cost so far; on a cluster,
each unit's node, attempt and status) that the page polls.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import duckdb
import msgspec
import orjson
from aiohttp import web

from benchmark.errors import UserError
from benchmark.suites.suite import SuiteError
from engine.errors import EXIT_INTERRUPTED
from engine.report.estimated import relation_exists
from engine.report.hosts import HostCheck, exposed
from engine.report.html.items import items_payload
from engine.report.html.page import render_page
from engine.report.reader import FileSource, LiveSource, Reader
from engine.run.progress import Progress, log
from store.side.cluster import where_units_ran

REPORT_TTL_S = 5.0  # live mode: the leaderboard is recomputed at most this often
_READER = web.AppKey("reader", Reader)


class LiveStatus:
    """What the sweep knows in memory: the progress counters and each model's 429 count; ``cluster``: the
    run records its units per node (store/side/cluster.py), shown as what runs where."""

    def __init__(self, progress: Progress, limits: dict[str, Any], run_id: str | None, cluster: bool = False):
        self.progress, self.limits, self.run_id, self.cluster = progress, limits, run_id, cluster

    def models(self, costs: dict[str, float | None], turns: dict[str, tuple[int, int, int]] | None = None) -> list[dict]:
        out = []
        turns = turns or {}
        for name, c in self.progress.counters.items():
            lim = self.limits.get(name)
            out.append({"model": name, "done": c.done, "total": c.total, "rate": c.rate(), "errors": c.errors,
                        "throttled": getattr(lim, "throttled", 0), "cost_usd": costs.get(name)})
            if turns:  # an interactive suite: this run's episodes (started, finished) and stored turns
                out[-1]["episodes"], out[-1]["episodes_done"], out[-1]["turns"] = turns.get(name, (0, 0, 0))
        return out


def _json(body: bytes) -> web.Response:
    return web.Response(body=body, content_type="application/json", headers={"Cache-Control": "no-store"})


def _run_costs(cur: duckdb.DuckDBPyConnection, run_id: str | None) -> dict[str, float | None]:
    return dict(cur.execute("SELECT model, sum(cost_usd) FROM results WHERE run_id = ? GROUP BY model",
                            [run_id]).fetchall())


def _run_turns(cur: duckdb.DuckDBPyConnection, run_id: str | None) -> dict[str, tuple[int, int, int]]:
    """model -> (episodes this run touched, of them finished, turns stored this run); {} without turns."""
    if not relation_exists(cur, "turns"):
        return {}
    got = cur.execute(
        "SELECT t.model, count(DISTINCT (t.dataset, t.item_id, t.sample)), "
        "count(DISTINCT (t.dataset, t.item_id, t.sample)) FILTER (WHERE r.status IS NOT NULL), count(*) "
        "FROM turns t LEFT JOIN results r USING (model, dataset, item_id, sample) "
        "WHERE t.run_id = ? GROUP BY t.model", [run_id]).fetchall()
    return {m: (e, f, n) for m, e, f, n in got}


def _guards(hosts: HostCheck) -> list:
    @web.middleware
    async def check_host(request: web.Request, handler: Any) -> web.StreamResponse:
        host = request.headers.get("Host")
        if not hosts.allows(host):  # a DNS-rebinding page names its own host: refuse before reading anything
            return web.Response(status=421, text=f"Host {host!r} is not this server (expected {hosts.expected()})")
        return await handler(request)

    @web.middleware
    async def one_line_errors(request: web.Request, handler: Any) -> web.StreamResponse:
        try:
            return await handler(request)
        except (UserError, duckdb.Error) as e:  # the file went away, or cannot be read as it is now
            return web.Response(status=503, text=str(e).splitlines()[0])

    return [check_host, one_line_errors]


def selected_models(query: Any) -> list[str]:
    """The models an items request names: `model=A&model=B` (any name, commas included), or the older
    `models=A,B`."""
    named = [m for m in query.getall("model", []) if m]
    return named or [m for m in query.get("models", "").split(",") if m]


def build_app(reader: Reader, *, title: str, hosts: HostCheck, live: LiveStatus | None = None) -> web.Application:
    app = web.Application(middlewares=_guards(hosts))
    app[_READER] = reader
    page = render_page("live" if live else "serve", title=title).encode()

    async def index(request: web.Request) -> web.Response:
        return web.Response(body=page, content_type="text/html", charset="utf-8")

    async def report(request: web.Request) -> web.Response:
        return _json(await reader.report())

    async def items(request: web.Request) -> web.Response:
        dataset = request.query.get("dataset")
        models = selected_models(request.query)
        if not dataset or not models:
            return web.Response(status=400, text="give dataset=ID and model=A[&model=B]")
        got = await reader.run(lambda cur: items_payload(cur, dataset=dataset, models=models))
        return _json(orjson.dumps(got.get(dataset, {"ids": [], "gold": [], "rows": {}})))

    app.router.add_get("/", index)
    app.router.add_get("/api/report", report)
    app.router.add_get("/api/items", items)
    if live is not None:
        async def live_view(request: web.Request) -> web.Response:
            costs = await reader.run(_run_costs, live.run_id)
            models = live.models(costs, await reader.run(_run_turns, live.run_id))
            state = "running" if any(m["done"] < m["total"] for m in models) else "all answered, finishing"
            body: dict[str, Any] = {"state": state, "models": models}
            if live.cluster:
                units = await reader.run(where_units_ran, live.run_id)
                body["units"] = [dict(zip(("node", "model", "dataset", "attempt", "status"), u)) for u in units]
            return _json(orjson.dumps(body)[:-1] + b',"report":' + await reader.report(REPORT_TTL_S) + b"}")

        app.router.add_get("/api/live", live_view)
    return app


async def _site(app: web.Application, hosts: HostCheck, host: str, port: int) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except BaseException:
        await runner.cleanup()
        raise
    h, p = runner.addresses[0][:2]
    hosts.port = p  # known only now when asked for port 0
    return runner, f"http://{'[' + h + ']' if ':' in h else h}:{p}/"


async def serve_live(port: int, con: duckdb.DuckDBPyConnection, progress: Progress, limits: dict[str, Any],
                     host: str = "127.0.0.1", *, cluster: bool = False) -> None:
    """Inside a running sweep (its task group): serve the live page until cancelled."""
    row = con.cursor().execute(
        "SELECT r.run_id, r.suite, r.suite_version, s.title FROM runs r LEFT JOIN suites s "
        "ON s.suite = r.suite AND s.version = r.suite_version ORDER BY r.started_at DESC LIMIT 1").fetchone()
    assert row is not None, "the sweep records its run before it serves"
    run_id, suite, version, title = row
    # Two query threads: the sweep's own work comes first.
    reader = Reader(LiveSource(con), (suite, version), threads=2)
    hosts = HostCheck(host, port)
    try:
        runner, url = await _site(build_app(reader, title=f"{title or suite} — live sweep", hosts=hosts,
                                            live=LiveStatus(progress, limits, run_id, cluster)), hosts, host, port)
    except OSError as e:  # the sweep matters more than its view: say so and go on without it
        log(f"warning: no live view: cannot listen on {host}:{port} ({e.strerror or e})")
        reader.close()
        return
    log(f"live view: {url}")
    try:
        await anyio.sleep_forever()
    finally:
        with anyio.CancelScope(shield=True):
            await runner.cleanup()
        reader.close()


async def _serve(reader: Reader, title: str, host: str, port: int) -> int:
    """Serve until SIGINT or SIGTERM; returns the exit status (130: interrupted, as every command)."""
    hosts = HostCheck(host, port)
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        runner, url = await _site(build_app(reader, title=title, hosts=hosts), hosts, host, port)
        if exposed(host):
            print(f"warning: listening on {host}: anyone who can reach this machine on port {hosts.port} can "
                  "read every stored response", file=sys.stderr, flush=True)
        print(f"serving {url} (Ctrl-C stops)", file=sys.stderr, flush=True)
        try:
            async for _ in signals:
                break
        finally:
            with anyio.CancelScope(shield=True):
                await runner.cleanup()
    print("interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def loaded_suite(con: duckdb.DuckDBPyConnection, spec: str | None) -> tuple[str, str]:
    """The suite to show, from the suites already in the file (store.hierarchy.suite_tables.open_suite would
    create tables, which a read-only connection cannot)."""
    loaded = con.execute("SELECT suite, version FROM suites ORDER BY loaded_at DESC").fetchall()
    name, _, version = (spec or "").partition("@")
    hits = [(n, v) for n, v in loaded if (not name or n == name) and (not version or v == version)]
    if not hits or (not name and len({n for n, _ in loaded}) > 1):
        have = ", ".join(sorted({f"{n}@{v}" for n, v in loaded})) or "none"
        raise SuiteError(f"pass --suite NAME[@VERSION] of a suite in the database (loaded: {have})")
    return hits[0]


def check_port(port: int, flag: str) -> int:
    """A TCP port, else a UserError: the OS would take 99999 modulo 65536, or a free port for 0."""
    if not 1 <= port <= 65535:
        raise UserError(f"{flag} {port}: give a port from 1 to 65535")
    return port


class ServeOptions(msgspec.Struct, frozen=True, kw_only=True):
    """`serve`'s options (engine/report/flags.py maps the flags onto them)."""

    db: Path
    port: int = 8000
    host: str = "127.0.0.1"  # loopback only unless asked
    suite: str | None = None  # name or name@version; None: the only one loaded


def serve(opts: ServeOptions) -> int:
    """Serve the report page until SIGINT/SIGTERM (exit 130); a UserError for bad input or a port it cannot
    listen on."""
    check_port(opts.port, "--port")
    if not opts.db.is_file():
        raise UserError(f"{opts.db}: no such database")
    source = FileSource(opts.db)  # read-only, this version's views, the snapshot while a sweep writes
    try:
        with source.connection() as (con, _):
            if source.note:
                print(source.note, file=sys.stderr)
            suite = loaded_suite(con, opts.suite)
            (title,) = con.execute("SELECT coalesce(title, suite) FROM suites WHERE suite = ? AND version = ?",
                                   suite).fetchone() or (suite[0],)
            con.execute("SELECT 1 FROM leaderboard LIMIT 0")
    except duckdb.Error as e:
        source.close()
        raise UserError(f"{opts.db}: not a results database this version can read "
                        f"({str(e).splitlines()[0]})") from None
    except BaseException:
        source.close()
        raise
    reader = Reader(source, suite)
    try:
        return anyio.run(_serve, reader, f"{title} — {suite[0]} {suite[1]} report", opts.host, opts.port)
    except OSError as e:
        raise UserError(f"cannot listen on {opts.host}:{opts.port}: {e.strerror or e}") from None
    finally:
        reader.close()

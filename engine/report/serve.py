"""`python -m engine serve DB [--port 8000] [--host 127.0.0.1] [--suite NAME]`: the report page, read-only.

The page is the one `report --html` writes; here it fetches its data instead of
carrying it: GET /api/report (everything but the items), GET /api/items?dataset=D&
models=A,B (one dataset's items for one or two models, responses whole). `sweep --serve
PORT` runs the same app inside the sweep (`serve_live`), reading through a cursor of the
sweep's own connection, with GET /api/live (progress per model, 429s, cost so far) that
the page polls.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import anyio
import duckdb
import msgspec
import orjson
from aiohttp import web

from benchmark.errors import UserError
from benchmark.suite import SuiteError
from engine.report.html.items import items_payload
from engine.report.html.page import render_page
from engine.report.html.gather import gather
from engine.run.progress import Progress, log
from store.db import connect

REPORT_TTL_S = 5.0  # live mode: the leaderboard is recomputed at most this often
_READER = web.AppKey("reader", object)


class Reader:
    """One cursor, one query at a time, in a worker thread: the event loop (the sweep's) never blocks."""

    def __init__(self, con: duckdb.DuckDBPyConnection, suite: tuple[str, str]):
        self.cur = con.cursor()  # a cursor of the sweep's connection sees its committed rows
        self.suite = suite
        self.lock = anyio.Lock()
        self._report: tuple[float, bytes] | None = None
        self._cost = 0.0  # seconds the last report took

    async def run(self, fn, *args: Any) -> Any:
        async with self.lock:
            return await anyio.to_thread.run_sync(fn, self.cur, *args)

    async def report(self, ttl: float = 0.0) -> bytes:
        """The report's data; live, no fresher than ttl and than 4x its own cost, so that
        recomputing the views takes at most a fifth of the machine from the sweep."""
        if self._report is None or time.monotonic() - self._report[0] > max(ttl, 4 * self._cost if ttl else 0):
            t0 = time.monotonic()
            data = await self.run(gather, self.suite)
            self._cost = time.monotonic() - t0
            self._report = (time.monotonic(), orjson.dumps(data, default=str))
        return self._report[1]

    def close(self) -> None:
        self.cur.close()


class LiveStatus:
    """What the sweep knows in memory: the progress counters and each model's 429 count."""

    def __init__(self, progress: Progress, limits: dict[str, Any], run_id: str | None):
        self.progress, self.limits, self.run_id = progress, limits, run_id

    def models(self, costs: dict[str, float | None]) -> list[dict]:
        out = []
        for name, c in self.progress.counters.items():
            lim = self.limits.get(name)
            out.append({"model": name, "done": c.done, "total": c.total, "rate": c.rate(), "errors": c.errors,
                        "throttled": getattr(lim, "throttled", 0), "cost_usd": costs.get(name)})
        return out


def _json(body: bytes) -> web.Response:
    return web.Response(body=body, content_type="application/json", headers={"Cache-Control": "no-store"})


def _run_costs(cur: duckdb.DuckDBPyConnection, run_id: str | None) -> dict[str, float | None]:
    return dict(cur.execute("SELECT model, sum(cost_usd) FROM results WHERE run_id = ? GROUP BY model",
                            [run_id]).fetchall())


def build_app(reader: Reader, *, title: str, live: LiveStatus | None = None) -> web.Application:
    app = web.Application()
    app[_READER] = reader
    page = render_page("live" if live else "serve", title=title).encode()

    async def index(request: web.Request) -> web.Response:
        return web.Response(body=page, content_type="text/html", charset="utf-8")

    async def report(request: web.Request) -> web.Response:
        return _json(await reader.report())

    async def items(request: web.Request) -> web.Response:
        dataset = request.query.get("dataset")
        models = [m for m in request.query.get("models", "").split(",") if m]
        if not dataset or not models:
            return web.Response(status=400, text="give dataset=ID and models=A[,B]")
        got = await reader.run(lambda cur: items_payload(cur, dataset=dataset, models=models))
        return _json(orjson.dumps(got.get(dataset, {"ids": [], "gold": [], "rows": {}})))

    app.router.add_get("/", index)
    app.router.add_get("/api/report", report)
    app.router.add_get("/api/items", items)
    if live is not None:
        async def live_view(request: web.Request) -> web.Response:
            costs = await reader.run(_run_costs, live.run_id)
            models = live.models(costs)
            state = "running" if any(m["done"] < m["total"] for m in models) else "all answered, finishing"
            body = {"state": state, "models": models}
            return _json(orjson.dumps(body)[:-1] + b',"report":' + await reader.report(REPORT_TTL_S) + b"}")

        app.router.add_get("/api/live", live_view)
    return app


async def _site(app: web.Application, host: str, port: int) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    h, p = runner.addresses[0][:2]
    return runner, f"http://{h}:{p}/"


async def serve_live(port: int, con: duckdb.DuckDBPyConnection, progress: Progress, limits: dict[str, Any],
                     host: str = "127.0.0.1") -> None:
    """Inside a running sweep (its task group): serve the live page until cancelled."""
    row = con.cursor().execute(
        "SELECT r.run_id, r.suite, r.suite_version, s.title FROM runs r LEFT JOIN suites s "
        "ON s.suite = r.suite AND s.version = r.suite_version ORDER BY r.started_at DESC LIMIT 1").fetchone()
    assert row is not None, "the sweep records its run before it serves"
    run_id, suite, version, title = row
    reader = Reader(con, (suite, version))
    try:
        runner, url = await _site(build_app(reader, title=f"{title or suite} — live sweep",
                                            live=LiveStatus(progress, limits, run_id)), host, port)
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


async def _serve(reader: Reader, title: str, host: str, port: int) -> None:
    runner, url = await _site(build_app(reader, title=title), host, port)
    print(f"serving {url} (Ctrl-C stops)", file=sys.stderr, flush=True)
    try:
        await anyio.sleep_forever()
    finally:
        with anyio.CancelScope(shield=True):
            await runner.cleanup()


def loaded_suite(con: duckdb.DuckDBPyConnection, spec: str | None) -> tuple[str, str]:
    """The suite to show, from the suites already in the file (store.suite_tables.open_suite would
    create tables, which a read-only connection cannot)."""
    loaded = con.execute("SELECT suite, version FROM suites ORDER BY loaded_at DESC").fetchall()
    name, _, version = (spec or "").partition("@")
    hits = [(n, v) for n, v in loaded if (not name or n == name) and (not version or v == version)]
    if not hits or (not name and len({n for n, _ in loaded}) > 1):
        have = ", ".join(sorted({f"{n}@{v}" for n, v in loaded})) or "none"
        raise SuiteError(f"pass --suite NAME[@VERSION] of a suite in the database (loaded: {have})")
    return hits[0]


class ServeOptions(msgspec.Struct, frozen=True, kw_only=True):
    """`serve`'s options (engine/cli_parsers.py maps the flags onto them)."""

    db: Path
    port: int = 8000
    host: str = "127.0.0.1"  # loopback only unless asked
    suite: str | None = None  # name or name@version; None: the only one loaded


def serve(opts: ServeOptions) -> int:
    """Serve the report page until Ctrl-C; a UserError for bad input or a port it cannot listen on."""
    if not opts.db.is_file():
        raise UserError(f"{opts.db}: no such database")
    con = connect(opts.db, read_only=True)
    try:
        suite = loaded_suite(con, opts.suite)
        (title,) = con.execute("SELECT coalesce(title, suite) FROM suites WHERE suite = ? AND version = ?",
                               suite).fetchone() or (suite[0],)
        con.execute("SELECT 1 FROM leaderboard LIMIT 0")
    except duckdb.Error as e:
        con.close()
        raise UserError(f"{opts.db}: {str(e).splitlines()[0]} (run `python -m engine report {opts.db}` once to "
                        "create the views)") from None
    except BaseException:
        con.close()
        raise
    reader = Reader(con, suite)
    try:
        anyio.run(_serve, reader, f"{title} — {suite[0]} {suite[1]} report", opts.host, opts.port)
    except KeyboardInterrupt:
        pass
    except OSError as e:
        raise UserError(f"cannot listen on {opts.host}:{opts.port}: {e.strerror or e}") from None
    finally:
        reader.close()
        con.close()
    return 0

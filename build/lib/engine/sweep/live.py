"""`--serve PORT` for a sweep whose loop is not an anyio task group (engine/cluster's driver waits on Ray):
the same live page (engine/report/serve.py:serve_live), served from a thread of its own."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import anyio
import duckdb

from engine.run.progress import Progress


@contextlib.contextmanager
def live_view_thread(port: int | None, con: duckdb.DuckDBPyConnection, progress: Progress, *,
                     cluster: bool) -> Iterator[None]:
    """The live view for the block (none when ``port`` is None); it reads through cursors of ``con``."""
    if port is None:
        yield
        return
    from engine.report.serve import serve_live  # the web server's imports: only when it serves

    stop = threading.Event()

    async def serve() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: serve_live(port, con, progress, {}, cluster=cluster))
            await anyio.to_thread.run_sync(stop.wait)
            tg.cancel_scope.cancel()

    thread = threading.Thread(target=anyio.run, args=(serve,), name="live-view", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(10)

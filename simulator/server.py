"""Simulated LLM provider server: OpenAI, Anthropic and Gemini wire formats, latency, rpm limits, faults.

Run:  python -m simulator.server --port 0 [--latency-ms 200 --rpm 600 ...]
prints one line ``READY http://HOST:PORT/v1`` once listening (the OpenAI base
URL; Anthropic and Gemini clients take the root, without /v1), serves until
SIGTERM/SIGINT. In Python: ``build_app(config)`` for in-process use, or
``SimServerProcess(**knobs)`` to run it in a subprocess (its own core).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

import orjson
from aiohttp import web

from simulator import anthropic as sim_anthropic, gemini as sim_gemini, openai as sim_openai
from simulator import batch_anthropic, batch_gemini, batch_openai
from simulator.batches import BATCHES, BatchStore
from simulator.core import FAULT_KINDS, SimConfig, SimState, config_from_knobs, parse_profile
from simulator.echo import echo_key_middleware
from simulator.llama import add_llama_server
from simulator.openai import STATE
from simulator.process import SimServerProcess

__all__ = ["SimConfig", "SimServerProcess", "build_app", "config_from_knobs", "main", "serve"]


async def _stats(request: web.Request) -> web.Response:
    """GET /_stats: counters since start or the last reset."""
    snapshot = request.app[STATE].stats.snapshot()
    return web.Response(body=orjson.dumps(snapshot), content_type="application/json")


async def _reset(request: web.Request) -> web.Response:
    """POST /_reset: clear counters, rpm windows and the jitter stream."""
    request.app[STATE].reset()
    return web.Response(body=b'{"ok":true}', content_type="application/json")


def build_app(config: SimConfig | None = None, middlewares: Sequence[Any] = ()) -> web.Application:
    """The aiohttp app; each wire format adds its routes over one shared SimState.
    ``middlewares``: a test's own, around every handler."""
    # Default limit is 1 MiB; long-context prompts in benchmarks can exceed it.
    config = config or SimConfig()
    middlewares = [*middlewares, *([echo_key_middleware] if config.echo_key else [])]
    app = web.Application(client_max_size=64 * 1024 * 1024, middlewares=middlewares)
    app[STATE] = SimState(config)
    if config.slots or config.n_ctx:
        add_llama_server(app, config)
    sim_openai.add_routes(app)
    sim_anthropic.add_routes(app)
    sim_gemini.add_routes(app)
    # The three batch APIs, over one store of files and batches (simulator/batches.py).
    app[BATCHES] = BatchStore(app[STATE])
    for batch_wire in (batch_openai, batch_anthropic, batch_gemini):
        batch_wire.add_routes(app)
    app.router.add_get("/_stats", _stats)
    app.router.add_post("/_reset", _reset)
    return app


async def serve(config: SimConfig, host: str = "127.0.0.1", port: int = 0,
                watch_stdin: bool = False) -> None:
    """Listen, print READY, serve until a signal (or stdin EOF when watched)."""
    # access_log=None: per-request logging would cost more than the handler itself.
    runner = web.AppRunner(build_app(config), access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=2048)
    await site.start()
    bound_host, bound_port = runner.addresses[0][:2]
    print(f"READY http://{bound_host}:{bound_port}/v1", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if watch_stdin:
        _stop_on_stdin_eof(loop, stop)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def _stop_on_stdin_eof(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    # The parent holds our stdin pipe open; if it dies (even by SIGKILL) the pipe
    # hits EOF and we exit instead of lingering as an orphan.
    fd = sys.stdin.fileno()

    def on_readable() -> None:
        if not os.read(fd, 4096):
            loop.remove_reader(fd)
            stop.set()

    loop.add_reader(fd, on_readable)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m simulator.server", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--latency-ms", type=float, help="mean latency per answer")
    p.add_argument("--jitter-ms", type=float, help="uniform +- jitter on the latency")
    p.add_argument("--rpm", type=int, help="requests per minute per model (sliding window)")
    p.add_argument("--fault", help=f"kind=prob,... kinds: {', '.join(FAULT_KINDS)}")
    p.add_argument("--profile", action="append", default=[], metavar="NAME:K=V,...",
                   help="per-model override, e.g. m1:latency_ms=50,rpm=120,fault.429=0.1")
    p.add_argument("--mode", help="letter (default), echo, gold, fixed:<text>, judge[:malformed[:refuse]] or seeker[:malformed]")
    p.add_argument("--fail-first", type=int, help="first N requests per prompt get 503")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--api-key", help="require this key (Bearer / x-api-key / x-goog-api-key)")
    p.add_argument("--models", help="comma-separated model names for /v1/models")
    p.add_argument("--strict-models", action="store_true", help="404 for unlisted models")
    p.add_argument("--echo-key", action="store_true", help="send the caller's key back in every answer")
    p.add_argument("--slots", type=int, help="llama.cpp-like: requests evaluated at once (the rest queue), /props")
    p.add_argument("--n-ctx", type=int, help="llama.cpp-like: context window; longer prompts get its 400")
    p.add_argument("--batch-latency-s", type=float, help="seconds from a batch's creation to its end (0.5)")
    p.add_argument("--batch-error-rate", type=float, help="share of batch requests answered with a 500")
    p.add_argument("--batch-expire-rate", type=float, help="share of batch requests left unanswered (the batch expires)")
    p.add_argument("--request-log", action="store_true",
                   help="count requests per model, X-Conversation-Id and prompt (/_stats 'requests')")
    p.add_argument("--rpm-window-s", type=float, default=60.0, help=argparse.SUPPRESS)
    p.add_argument("--config-json", help=argparse.SUPPRESS)  # used by SimServerProcess
    p.add_argument("--watch-stdin", action="store_true", help=argparse.SUPPRESS)
    return p


def knobs_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """CLI flags -> the keyword knobs of ``config_from_knobs``."""
    if args.config_json:
        return orjson.loads(args.config_json)
    knobs: dict[str, Any] = {"seed": args.seed, "api_key": args.api_key,
                             "strict_models": args.strict_models,
                             "rpm_window_s": args.rpm_window_s, "echo_key": args.echo_key,
                             "slots": args.slots, "n_ctx": args.n_ctx, "request_log": args.request_log}
    flags = {"latency_ms": args.latency_ms, "jitter_ms": args.jitter_ms, "rpm": args.rpm,
             "faults": args.fault, "mode": args.mode, "fail_first": args.fail_first,
             "batch_latency_s": args.batch_latency_s, "batch_error_rate": args.batch_error_rate,
             "batch_expire_rate": args.batch_expire_rate}
    knobs.update({k: v for k, v in flags.items() if v is not None})
    if args.models:
        knobs["models"] = [m.strip() for m in args.models.split(",") if m.strip()]
    if args.profile:
        knobs["profiles"] = dict(parse_profile(spec) for spec in args.profile)
    return knobs


def main(argv: Sequence[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    try:
        config = config_from_knobs(**knobs_from_args(args))
    except (ValueError, TypeError) as err:
        _parser().error(str(err))
    try:
        import uvloop  # optional: a faster event loop when installed
    except ImportError:
        asyncio.run(serve(config, args.host, args.port, args.watch_stdin))
    else:
        uvloop.run(serve(config, args.host, args.port, args.watch_stdin))


if __name__ == "__main__":
    main()

"""A stand-in for the `vllm` command: `vllm serve MODEL ... --host H --port P --served-model-name N` serves
the simulator's OpenAI wire (simulator/) with vLLM's `/health` and its `/v1/models` (`max_model_len`).

The tests put an executable named `vllm` that runs this module on PATH; provider = "vllm" is checked only
against it until a run on a GPU machine. Knobs: FAKE_VLLM_KNOBS (JSON, the simulator's), FAKE_VLLM_MAX_LEN
(the window it reports); `--die-after N` among the arguments (models.toml's serve_args): exit after N chat
requests, a server that dies; `--latency-ms MS`: each answer takes that long (a server still answering
when the fault tests kill it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

import orjson
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from simulator.core import config_from_knobs  # noqa: E402
from simulator.server import build_app  # noqa: E402


def write_executable(folder: Path) -> Path:
    """An executable `vllm` in ``folder`` running this module with this Python."""
    exe = folder / "vllm"
    exe.write_text(f"#!{sys.executable}\nimport runpy, sys\nsys.argv[0] = {str(__file__)!r}\n"
                   f"runpy.run_path({str(__file__)!r}, run_name='__main__')\n")
    exe.chmod(0o755)
    return exe


def main() -> None:
    p = argparse.ArgumentParser(prog="vllm")
    p.add_argument("command", choices=["serve"])
    p.add_argument("model")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--served-model-name")
    p.add_argument("--die-after", type=int, default=0)
    p.add_argument("--latency-ms", type=float, default=0.0)
    args, _rest = p.parse_known_args()
    name = args.served_model_name or args.model
    max_len = int(os.environ.get("FAKE_VLLM_MAX_LEN", "4096"))
    die_after = args.die_after
    served = 0

    @web.middleware
    async def vllm_routes(request: web.Request, handler):  # type: ignore[no-untyped-def]
        nonlocal served
        if request.path == "/health":
            return web.Response(text="")
        if request.path == "/v1/models":
            doc = {"object": "list", "data": [{"id": name, "object": "model", "max_model_len": max_len}]}
            return web.Response(body=orjson.dumps(doc), content_type="application/json")
        if request.path == "/v1/chat/completions" and die_after:
            served += 1
            if served > die_after:
                os._exit(3)
        return await handler(request)

    knobs = {**({"latency_ms": args.latency_ms} if args.latency_ms else {}),
             **orjson.loads(os.environ.get("FAKE_VLLM_KNOBS", "{}"))}
    app = build_app(config_from_knobs(**knobs), middlewares=[vllm_routes])
    web.run_app(app, host=args.host, port=args.port, print=None, access_log=None)


if __name__ == "__main__":
    asyncio.set_event_loop(asyncio.new_event_loop())
    main()

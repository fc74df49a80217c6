"""Ceiling for the engine: a bare aiohttp client loop against the sim server.

    python -m bench.baseline_aiohttp [--requests 10000] [--concurrency 64] [--models 1] [--uvloop] [--url URL]

Without --url it starts ``SimServerProcess`` at zero latency (own core). N
worker tasks share one pooled connector and pull from a shared counter, the
same shape as the engine's per-model lanes, with none of its work.
``--models 10 --concurrency 32`` is the zero-latency scenario's shape (a
session per model, 320 requests in flight), which costs aiohttp more per
request than 64 in flight; ``--uvloop`` runs it on the loop the engine uses.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import sys
import time

import aiohttp
import orjson

from simulator.server import SimServerProcess

LOOP_CPU_S = 0.0  # the client's CPU over the last run's requests (process start and imports left out)
PROMPT = "Which is right?\nA. one\nB. two\nC. three\nD. four\nAnswer with the letter."


async def run(url: str, total: int, concurrency: int, models: int = 1) -> tuple[int, int, float]:
    """Send ``total`` chat requests with ``concurrency`` workers per session; (ok, failed, seconds)."""
    next_index = 0
    ok = failed = 0

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal next_index, ok, failed
        while next_index < total:
            i = next_index
            next_index += 1
            body = orjson.dumps({"model": "baseline", "messages": [
                {"role": "user", "content": f"{PROMPT}\n#{i}"}]})
            async with session.post(url + "/chat/completions", data=body,
                                    headers={"Content-Type": "application/json"}) as resp:
                payload = orjson.loads(await resp.read())
            if resp.status == 200 and payload["choices"][0]["message"]["content"]:
                ok += 1
            else:
                failed += 1

    sessions = [aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency))
                for _ in range(models)]
    try:
        start = time.perf_counter()
        cpu0 = time.process_time()
        await asyncio.gather(*(worker(session) for session in sessions for _ in range(concurrency)))
        elapsed = time.perf_counter() - start
        global LOOP_CPU_S
        LOOP_CPU_S = time.process_time() - cpu0
    finally:
        for session in sessions:
            await session.close()
    return ok, failed, elapsed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--requests", type=int, default=10_000)
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--models", type=int, default=1, help="sessions, each with --concurrency workers")
    p.add_argument("--uvloop", action="store_true", help="run the client on uvloop")
    p.add_argument("--url", help="an already running server's base URL (ending in /v1)")
    args = p.parse_args()
    if args.uvloop:
        import uvloop

        runner = uvloop.run
    else:
        runner = asyncio.run
    command = shlex.join([sys.executable, "-m", "bench.baseline_aiohttp", *sys.argv[1:]])
    server_cpu = None
    if args.url:
        ok, failed, elapsed = runner(run(args.url, args.requests, args.concurrency, args.models))
    else:
        with SimServerProcess() as sim:
            runner(run(sim.base_url, 500, args.concurrency, args.models))  # warm-up
            cpu_before = _cpu_seconds(sim.pid)
            ok, failed, elapsed = runner(run(sim.base_url, args.requests, args.concurrency, args.models))
            cpu_after = _cpu_seconds(sim.pid)
            if cpu_before is not None and cpu_after is not None:
                server_cpu = cpu_after - cpu_before
    done = ok + failed
    print(f"command: {command}")
    shape = f"{args.models} x {args.concurrency}" if args.models > 1 else str(args.concurrency)
    print(f"{done} requests ({failed} failed), concurrency {shape}{' on uvloop' if args.uvloop else ''}, "
          f"{elapsed:.2f} s: {done / elapsed:,.0f} requests/s")
    print(f"client CPU {LOOP_CPU_S:.2f} s: {1e6 * LOOP_CPU_S / max(done, 1):.0f} us per request")
    if server_cpu:
        # The end-to-end rate is bounded by this Python client on the other core;
        # this is what the server alone could sustain on one core.
        print(f"server CPU {server_cpu:.2f} s: {done / server_cpu:,.0f} requests per core-second")


def _cpu_seconds(pid: int | None) -> float | None:
    """User+system CPU time of a process (Linux /proc), or None elsewhere."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()

"""Episodes at sweep throughput (docs/interactive.md): the engine's episode lanes against the simulated server.

    python bench/interactive.py            # 10 models x 2,000 episodes x 8 exchanges (long)
    python bench/interactive.py --quick    # 10 models x 100 episodes x 4 exchanges, 200 ms check on 40
    python bench/interactive.py --only memory [--tree OTHER]   # measurement 3 alone (of another checkout)

Prints three measurements:
1. zero latency: turns (calls) per second of `sweep` over `synthetic_episodes`, beside a bare aiohttp loop
   playing the same alternation (companion, then simulator, per episode; the same number of calls per
   episode and the same width) against the same server in the same sitting (target: engine >= 50%);
2. 200 ms latency: wall time of the calling phase (first turn started to last turn stored, from the
   `turns` table: process start-up and the end of run are left out, and printed apart) against the ideal,
   the largest of three lower bounds: the longest episode's calls one after the other, each model's
   companion calls through its max_concurrency, and all simulator calls through the simulator's
   max_concurrency, each x 0.2 s (target within 1.3x);
3. peak RSS of the sweep process at 200 and at 2,000 episodes per model (target: growth < 100 MB).
The load average is printed too: the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import aiohttp
import duckdb
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simulator.server import SimServerProcess  # noqa: E402

SEEKER = orjson.dumps({"reply": "I still feel low.", "emotion": 60, "reason": "heard", "end": False}).decode()
SUITE = """[suite]
name = "bench-episodes"
version = "1"
[scoring]
[[ability]]
id = "a"
weight = 1
[[ability.sub_ability]]
id = "s"
[[ability.sub_ability.task]]
id = "t"
level = "M"
datasets = ["synthetic_episodes"]
[datasets]
synthetic_episodes = { methods = [{ metric = "final_emotion", normalization = "ratio" }] }
"""
CONCURRENCY = 32  # per model and for the simulator: an episode lane holds 64 episodes in flight


def models_file(folder: Path, url: str, n: int) -> Path:
    parts = [f'[[models]]\nname = "m{i}"\nprovider = "openai"\nbase_url = "{url}"\nmodel = "m{i}"\n'
             f"max_concurrency = {CONCURRENCY}\nmax_tokens = 16\nmax_retries = 0\nadaptive = false\n"
             for i in range(n)]
    parts.append(f'[user_simulator]\nprovider = "openai"\nbase_url = "{url}"\nmodel = "seeker-sim"\n'
                 f"max_concurrency = {CONCURRENCY * n}\nmax_retries = 0\nadaptive = false\n")
    path = folder / "models.toml"
    path.write_text("\n".join(parts))
    (folder / "suite.toml").write_text(SUITE)
    return path


TREE = ROOT  # the engine's checkout the sweeps run (--tree)


def run_sweep(models: Path, db: Path, episodes: int, turns: int) -> tuple[float, float]:
    """(seconds, peak RSS MB) of one sweep process."""
    env = {**os.environ, "PYTHONPATH": str(TREE)}
    cmd = [sys.executable, "-m", "engine", "sweep", str(models), "--db", str(db), "--suite",
           str(models.parent / "suite.toml"), "--limit", str(episodes), "--turns", str(turns), "--quiet"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=TREE, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = [0]

    def watch() -> None:
        while proc.poll() is None:
            try:
                for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        peak[0] = max(peak[0], int(line.split()[1]))
            except OSError:
                return
            time.sleep(0.1)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    _, err = proc.communicate()
    t.join()
    if proc.returncode != 0:
        raise SystemExit(f"sweep failed: {err.decode()[-2000:]}")
    return time.perf_counter() - t0, peak[0] / 1024


def calling_phase(db: Path) -> tuple[float, int, dict[str, int], int]:
    """(seconds from the first turn started to the last stored, the longest episode's calls, companion calls
    per model, simulator calls): what the ideal of measurement 2 is computed from."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        secs = con.execute("SELECT epoch(max(finished_at)) - epoch(min(started_at)) FROM turns").fetchone()
        longest = con.execute("SELECT max(n) FROM (SELECT count(*) FILTER (WHERE speaker <> 'scenario') AS n "
                              "FROM turns GROUP BY model, item_id, sample)").fetchone()
        companion = dict(con.execute("SELECT model, count(*) FROM turns WHERE role = 'companion' "
                                     "GROUP BY ALL").fetchall())
        sim = con.execute("SELECT count(*) FROM turns WHERE role = 'seeker' AND speaker <> 'scenario'").fetchone()
    finally:
        con.close()
    assert secs is not None and longest is not None and sim is not None
    return float(secs[0]), int(longest[0]), companion, int(sim[0])


def calls_per_episode(db: Path) -> dict[tuple[str, str], int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT model, item_id, count(*) FILTER (WHERE speaker <> 'scenario') FROM turns "
                           "GROUP BY ALL").fetchall()
    finally:
        con.close()
    return {(m, i): n for m, i, n in rows}


async def bare_loop(url: str, plays: list[tuple[str, int]], width: int, limits: dict[str, int] | None = None) -> float:
    """The same alternation with nothing else: `width` workers, each playing episodes of n calls (with
    `limits`: at most that many calls at once per model name on the wire, as max_concurrency does)."""
    sems = {k: asyncio.Semaphore(v) for k, v in (limits or {}).items()}
    queue: asyncio.Queue[tuple[str, int]] = asyncio.Queue()
    for p in plays:
        queue.put_nowait(p)
    conn = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=conn) as session:
        async def worker() -> None:
            while True:
                try:
                    model, n = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                history = [{"role": "system", "content": "You are a companion."}]
                for k in range(n):
                    who = model if k % 2 else "seeker-sim"
                    body = orjson.dumps({"model": who, "messages": history, "max_tokens": 16, "seed": k})
                    async with contextlib.AsyncExitStack() as stack:
                        if who in sems:
                            await stack.enter_async_context(sems[who])
                        async with session.post(url + "/chat/completions", data=body,
                                                headers={"Content-Type": "application/json"}) as r:
                            text = orjson.loads(await r.read())["choices"][0]["message"]["content"]
                    history.append({"role": "assistant" if k % 2 else "user", "content": text})

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(width)))
        return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=["zero-latency", "latency", "memory"], help="one measurement")
    ap.add_argument("--tree", type=Path, default=ROOT, help="the engine checkout to run (default: this one)")
    args = ap.parse_args()
    global TREE
    TREE = args.tree.resolve()
    n_models, episodes, turns = (10, 100, 4) if args.quick else (10, 2000, 8)
    print(f"load average before: {os.getloadavg()}")
    rss_full = None
    if args.only in (None, "zero-latency"):
        rss_full = zero_latency(n_models, episodes, turns)
    if args.only in (None, "latency"):
        latency(turns, args.quick)
    if args.only in (None, "memory"):
        memory(n_models, (20, 200) if args.quick else (200, 2000), turns, {episodes: rss_full} if rss_full else {})
    print(f"load average after: {os.getloadavg()}")


def zero_latency(n_models: int, episodes: int, turns: int) -> float:
    """Measurement 1; returns the sweep's peak RSS (measurement 3's larger size, not run twice)."""
    with tempfile.TemporaryDirectory() as tmp, \
            SimServerProcess(mode="echo", profiles={"seeker-sim": {"mode": "fixed:" + SEEKER}}, seed=1) as sim:
        folder = Path(tmp)
        models = models_file(folder, sim.base_url, n_models)
        secs, rss_full = run_sweep(models, folder / "a.duckdb", episodes, turns)
        calls = sim.stats()["total"]
        plays = sorted(calls_per_episode(folder / "a.duckdb").items())
        bare = asyncio.run(bare_loop(sim.base_url, [(m, n) for (m, _), n in plays], 2 * CONCURRENCY * n_models))
        phase = calling_phase(folder / "a.duckdb")[0]
        print(f"1. zero latency, {n_models} models x {episodes} episodes x {turns} exchanges: {calls:,} calls; "
              f"sweep {secs:.1f} s (process, start-up included) = {calls / secs:,.0f} calls/s, calling phase "
              f"{phase:.1f} s = {calls / phase:,.0f} calls/s; bare aiohttp loop {bare:.1f} s = {calls / bare:,.0f} "
              f"calls/s; engine/bare = {bare / secs:.0%} (process), {bare / phase:.0%} (calling phase)")
    return rss_full


def latency(turns: int, quick: bool) -> None:
    lat_eps = 40 if quick else 400
    with tempfile.TemporaryDirectory() as tmp, SimServerProcess(
            mode="echo", latency_ms=200, profiles={"seeker-sim": {"mode": "fixed:" + SEEKER}}, seed=1) as sim:
        folder = Path(tmp)
        models = models_file(folder, sim.base_url, 2)
        secs, _ = run_sweep(models, folder / "b.duckdb", lat_eps, turns)
        phase, longest, companion, sim_calls = calling_phase(folder / "b.duckdb")
        lat = 0.2
        bounds = {"longest episode": longest * lat,
                  "companion (busiest model)": max(math.ceil(n / CONCURRENCY) for n in companion.values()) * lat,
                  "simulator": math.ceil(sim_calls / (CONCURRENCY * 2)) * lat}
        which, ideal = max(bounds.items(), key=lambda kv: kv[1])
        # The same plays, limits and episodes in flight (each lane's width: its max_concurrency + the
        # simulator's) with nothing else, on the same server in the same sitting: what this machine allows.
        # Interleaved by item (not all of m0's episodes, then m1's): both models' limits busy at once.
        timed = [(m, n) for (m, _), n in sorted(calls_per_episode(folder / "b.duckdb").items(),
                                                key=lambda kv: (kv[0][1], kv[0][0]))]
        bare = asyncio.run(bare_loop(sim.base_url, timed, 2 * (CONCURRENCY + 2 * CONCURRENCY),
                                     {"m0": CONCURRENCY, "m1": CONCURRENCY, "seeker-sim": 2 * CONCURRENCY}))
        print(f"2. 200 ms latency, 2 models x {lat_eps} episodes x {turns} exchanges: calling phase {phase:.1f} s "
              f"(process {secs:.1f} s, start-up and end included); ideal {ideal:.1f} s ({which}; bounds: "
              + ", ".join(f"{k} {v:.1f} s" for k, v in bounds.items())
              + f"; {sum(companion.values()):,} companion + {sim_calls:,} simulator calls) -> {phase / ideal:.2f}x; "
              f"bare aiohttp loop with the same limits {bare:.1f} s ({bare / ideal:.2f}x the ideal)")


def memory(n_models: int, sizes: tuple[int, int], turns: int, known: dict[int, float]) -> None:
    """Measurement 3; ``known``: peaks already measured (episodes -> MB)."""
    with tempfile.TemporaryDirectory() as tmp, \
            SimServerProcess(mode="echo", profiles={"seeker-sim": {"mode": "fixed:" + SEEKER}}, seed=1) as sim:
        folder = Path(tmp)
        models = models_file(folder, sim.base_url, n_models)
        peaks = [known[n] if n in known else run_sweep(models, folder / f"c{n}.duckdb", n, turns)[1] for n in sizes]
        print(f"3. peak RSS of the sweep: {sizes[0]} episodes/model {peaks[0]:.0f} MB, {sizes[1]} "
              f"{peaks[1]:.0f} MB: growth {peaks[1] - peaks[0]:.0f} MB")


if __name__ == "__main__":
    main()

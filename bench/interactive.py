"""Episodes at sweep throughput (docs/interactive.md): the engine's episode lanes against the simulated server.

    python bench/interactive.py            # 10 models x 2,000 episodes x 8 exchanges (long)
    python bench/interactive.py --quick    # 10 models x 100 episodes x 4 exchanges, 200 ms check on 40

Prints three measurements:
1. zero latency: turns (calls) per second of `sweep` over `synthetic_episodes`, beside a bare aiohttp loop
   playing the same alternation (companion, then simulator, per episode; the same number of calls per
   episode and the same width) against the same server in the same sitting (target: engine >= 50%);
2. 200 ms latency: wall time of the calling phase against the ideal (calls per episode x 0.2 s x the
   rounds the width allows; target within 1.3x);
3. peak RSS of the sweep process at 200 and at 2,000 episodes per model (target: growth < 100 MB).
The load average is printed too: the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
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


def run_sweep(models: Path, db: Path, episodes: int, turns: int) -> tuple[float, float]:
    """(seconds, peak RSS MB) of one sweep process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "engine", "sweep", str(models), "--db", str(db), "--suite",
           str(models.parent / "suite.toml"), "--limit", str(episodes), "--turns", str(turns), "--quiet"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
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


def calls_per_episode(db: Path) -> dict[tuple[str, str], int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT model, item_id, count(*) FILTER (WHERE speaker <> 'scenario') FROM turns "
                           "GROUP BY ALL").fetchall()
    finally:
        con.close()
    return {(m, i): n for m, i, n in rows}


async def bare_loop(url: str, plays: list[tuple[str, int]], width: int) -> float:
    """The same alternation with nothing else: `width` workers per model, each playing episodes of n calls."""
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
    args = ap.parse_args()
    n_models, episodes, turns = (10, 100, 4) if args.quick else (10, 2000, 8)
    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp, \
            SimServerProcess(mode="echo", profiles={"seeker-sim": {"mode": "fixed:" + SEEKER}}, seed=1) as sim:
        folder = Path(tmp)
        models = models_file(folder, sim.base_url, n_models)
        secs, rss = run_sweep(models, folder / "a.duckdb", episodes, turns)
        calls = sim.stats()["total"]
        plays = sorted(calls_per_episode(folder / "a.duckdb").items())
        bare = asyncio.run(bare_loop(sim.base_url, [(m, n) for (m, _), n in plays], 2 * CONCURRENCY * n_models))
        print(f"1. zero latency, {n_models} models x {episodes} episodes x {turns} exchanges: {calls:,} calls; "
              f"sweep {secs:.1f} s (process, start-up included) = {calls / secs:,.0f} calls/s; bare aiohttp loop "
              f"{bare:.1f} s = {calls / bare:,.0f} calls/s; engine/bare = {bare / secs:.0%}")
    lat_eps = 40 if args.quick else 400
    with tempfile.TemporaryDirectory() as tmp, SimServerProcess(
            mode="echo", latency_ms=200, profiles={"seeker-sim": {"mode": "fixed:" + SEEKER}}, seed=1) as sim:
        folder = Path(tmp)
        models = models_file(folder, sim.base_url, 2)
        secs, _ = run_sweep(models, folder / "b.duckdb", lat_eps, turns)
        per = calls_per_episode(folder / "b.duckdb")
        width = 2 * CONCURRENCY
        rounds = math.ceil(lat_eps / width)
        ideal = rounds * max(per.values()) * 0.2
        print(f"2. 200 ms latency, 2 models x {lat_eps} episodes: sweep {secs:.1f} s (process), ideal "
              f"{ideal:.1f} s ({rounds} round(s) of {max(per.values())} calls) -> {secs / ideal:.2f}x")
    sizes = (20, 200) if args.quick else (200, 2000)
    with tempfile.TemporaryDirectory() as tmp, \
            SimServerProcess(mode="echo", profiles={"seeker-sim": {"mode": "fixed:" + SEEKER}}, seed=1) as sim:
        folder = Path(tmp)
        models = models_file(folder, sim.base_url, n_models)
        peaks = [run_sweep(models, folder / f"c{n}.duckdb", n, turns)[1] for n in sizes]
        print(f"3. peak RSS of the sweep: {sizes[0]} episodes/model {peaks[0]:.0f} MB, {sizes[1]} "
              f"{peaks[1]:.0f} MB: growth {peaks[1] - peaks[0]:.0f} MB")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()

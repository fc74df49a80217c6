"""Episodes under kill -9 (docs/interactive.md): a run killed at random moments, each time continued by the same command.

    python bench/episode_kills.py              # 5 models x 100 episodes x 4 exchanges, 200 ms, 5 kills
    python bench/episode_kills.py --kills 2 --episodes 20 --latency-ms 50    # a short look

One simulated server (companion: echo; [user_simulator]: the scripted seeker of simulator/seeker.py, whose
emotion and end follow the companion's words, so episodes differ in length) serves an uninterrupted run,
then the same command killed with SIGKILL at `--kills` moments (drawn with `--seed` as shares of the
uninterrupted run's calls, counted by the server), then once more to the end. Prints and checks:

1. no call asked twice beyond those in flight at each kill: the server's own request log (``request_log``:
   ``/_stats`` ``requests``, counted per model on the wire, X-Conversation-Id and prompt fingerprint). A key
   is one (model, episode, session, turn, role) for the simulator's calls (the engine sends it the episode's
   conversation id) and one (model, dialogue so far) for the companion's: episodes whose dialogues are the
   same word for word share a key, asked as often as there are such episodes. So a call asked again is a
   request beyond the uninterrupted run's count of its key: after kill k, the excess over those counts
   grown during the run that follows it (or a later one: when that run is killed before asking it again,
   or when the call is a shared key's, whose excess shows only once its last episode asks it; the total
   is exact, the split over runs is not).
   Each must be a call in flight at a kill: up to kill k, at most k times the episodes
   then in flight (each keeps its turn in the run's journal before its next call), the sum of the lanes'
   widths (max_concurrency + its share of the simulator's, per model);
2. the final transcripts byte-equal to the uninterrupted run's: the `turns` table's content columns, ordered,
   and the `results` rows' responses.
Exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import duckdb
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.interactive import SUITE  # noqa: E402  (one synthetic_episodes suite for both benches)
from engine.lanes.episode import lane_width  # noqa: E402
from simulator.server import SimServerProcess  # noqa: E402

# What a transcript is: everything a turn says, none of when or how long.
CONTENT = ("model, dataset, item_id, sample, session, turn, role, status, content, emotion, reason, ended, "
           "speaker, attempts, error_class")


def write_config(folder: Path, url: str, n_models: int, concurrency: int, sim_concurrency: int) -> Path:
    parts = [f'[[models]]\nname = "m{i}"\nprovider = "openai"\nbase_url = "{url}"\nmodel = "m{i}"\n'
             f"max_concurrency = {concurrency}\nmax_tokens = 32\nmax_retries = 0\nadaptive = false\n"
             for i in range(n_models)]
    parts.append(f'[user_simulator]\nprovider = "openai"\nbase_url = "{url}"\nmodel = "seeker-sim"\n'
                 f"max_concurrency = {sim_concurrency}\nmax_retries = 0\nadaptive = false\n")
    path = folder / "models.toml"
    path.write_text("\n".join(parts))
    (folder / "suite.toml").write_text(SUITE)
    return path


def command(models: Path, db: Path, episodes: int, turns: int) -> list[str]:
    return [sys.executable, "-m", "engine", "sweep", str(models), "--db", str(db), "--suite",
            str(models.parent / "suite.toml"), "--limit", str(episodes), "--turns", str(turns), "--quiet"]


def run_to_end(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise SystemExit(f"sweep failed: {r.stderr.decode()[-2000:]}")
    return time.perf_counter() - t0


def transcripts(db: Path) -> bytes:
    con = duckdb.connect(str(db), read_only=True)
    try:
        turns = con.execute(f"SELECT {CONTENT} FROM turns ORDER BY ALL").fetchall()
        results = con.execute("SELECT model, dataset, item_id, sample, status, response FROM results "
                              "ORDER BY ALL").fetchall()
    finally:
        con.close()
    return orjson.dumps({"turns": turns, "results": results}, default=str)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=5)
    ap.add_argument("--episodes", type=int, default=100, help="per model")
    ap.add_argument("--turns", type=int, default=4)
    ap.add_argument("--latency-ms", type=float, default=200)
    ap.add_argument("--concurrency", type=int, default=4, help="each model's max_concurrency")
    ap.add_argument("--sim-concurrency", type=int, default=20)
    ap.add_argument("--kills", type=int, default=5)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # Episodes in flight at most: the lanes' widths (engine/lanes/episode.py).
    width = args.models * lane_width(args.concurrency, args.sim_concurrency, args.models)
    print(f"load average before: {os.getloadavg()}")
    failed: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, SimServerProcess(
            mode="echo", latency_ms=args.latency_ms, profiles={"seeker-sim": {"mode": "seeker"}}, seed=1,
            request_log=True) as sim:
        folder = Path(tmp)
        models = write_config(folder, sim.base_url, args.models, args.concurrency, args.sim_concurrency)
        whole = folder / "whole.duckdb"
        secs = run_to_end(command(models, whole, args.episodes, args.turns), env)
        once = Counter(sim.stats()["requests"])
        total = sum(once.values())
        print(f"uninterrupted: {args.models} models x {args.episodes} episodes x {args.turns} exchanges, "
              f"{args.latency_ms:g} ms: {total:,} calls in {secs:.1f} s (process)")
        sim.reset()

        db = folder / "killed.duckdb"
        cmd = command(models, db, args.episodes, args.turns)
        rng = random.Random(args.seed)
        at = sorted(int(total * rng.uniform(0.05, 0.95)) for _ in range(args.kills))
        before: Counter[str] = Counter()
        runs: list[Counter[str]] = []
        for k, stop_at in enumerate(at, 1):
            stop_at = max(stop_at, sum(before.values()) + 1)
            proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            t0 = time.perf_counter()
            while sim.stats()["total"] < stop_at and proc.poll() is None:
                time.sleep(0.05)
            if proc.poll() is not None:
                failed.append(f"kill {k}: the run ended (status {proc.returncode}) before call {stop_at}: "
                              f"{proc.stderr.read().decode()[-500:] if proc.stderr else ''}")
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            time.sleep(args.latency_ms / 1000 + 0.2)  # requests sent before the kill reach the server's count
            now = Counter(sim.stats()["requests"])
            runs.append(now - before)
            print(f"kill {k}: SIGKILL at call {stop_at:,} ({stop_at / total:.0%} of the uninterrupted run's calls), "
                  f"{time.perf_counter() - t0:.1f} s after its start")
            before = now
        secs = run_to_end(cmd, env)
        final = Counter(sim.stats()["requests"])
        runs.append(final - before)
        print(f"last run: to the end in {secs:.1f} s")

        def excess(asked: Counter[str]) -> int:
            return sum(max(0, n - once[key]) for key, n in asked.items())

        asked: Counter[str] = Counter()
        for k, this in enumerate(runs):
            was = excess(asked)
            asked.update(this)
            again, so_far = excess(asked) - was, excess(asked)
            if k:  # a run killed early leaves some of the calls in flight at the kill before it to the next
                ok = so_far <= k * width
                print(f"  run after kill {k}: {sum(this.values()):,} calls, {again} asked again; so far {so_far} "
                      f"(bound: {k} kill(s) x {width} episodes in flight) {'ok' if ok else 'FAIL'}")
                if not ok:
                    failed.append(f"after kill {k}: {so_far} calls asked again > {k} x {width}")
        repeated = excess(final)
        missing = set(once) - set(final)
        extra = set(final) - set(once)
        print(f"1. calls: {sum(final.values()):,} over {len(runs)} runs for {total:,} uninterrupted "
              f"({len(once):,} keys); {repeated} asked again in all ({args.kills} kills, bound "
              f"{args.kills * width}); keys never asked: {len(missing)}, keys the uninterrupted run never "
              f"asked: {len(extra)}")
        if missing or extra:
            failed.append(f"{len(missing)} prompts missing, {len(extra)} unexpected")
        a, b = transcripts(whole), transcripts(db)
        same = a == b
        print(f"2. transcripts: uninterrupted sha256 {hashlib.sha256(a).hexdigest()[:16]} ({len(a):,} bytes), "
              f"killed {args.kills}x sha256 {hashlib.sha256(b).hexdigest()[:16]} ({len(b):,} bytes): "
              f"{'byte-equal' if same else 'DIFFERENT'}")
        if not same:
            failed.append("transcripts differ")
            for part in ("turns", "results"):
                x, y = orjson.loads(a)[part], orjson.loads(b)[part]
                diff = [(u, v) for u, v in zip(x, y) if u != v]
                print(f"   {part}: {len(x)} vs {len(y)} rows, {len(diff)} differ; first: {diff[:2]}")
    print(f"load average after: {os.getloadavg()}")
    if failed:
        print("FAILED: " + "; ".join(failed))
        raise SystemExit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()

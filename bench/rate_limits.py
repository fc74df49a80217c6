"""30 simulated models with different latencies and rate limits in one sweep.

    .venv/bin/python bench/rate_limits.py                 # ~45 s
    .venv/bin/python bench/rate_limits.py --seconds 20    # quicker (startup weighs more)

The 30 models of the paper's Table 3, each on its vendor's wire format
(OpenAI-compatible, Anthropic Messages, Gemini generateContent), each with its
own latency and requests-per-minute limit; the three Doubao models share one
account limit. The simulated server (its own process) enforces every limit
over a sliding window and counts the 429s it had to send. The engine is given
the same limits in models.toml, and must finish within 5% of the time the
limits allow (the slowest lane's items divided by its rate) with no 429.
The server's window is shortened to --window seconds (default 15; limits
scaled to it) so that a 40-second lane spans several windows: a client that
bursts, or paces above its limit, is caught. (The engine paces 1% under each
limit: over a real 60 s window that is 600 ms of slack for network and
scheduling jitter, over 15 s it is 150 ms.)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# (name, wire, latency ms, share of the slowest lane's time this model needs alone, account)
MODELS = [
    ("doubao-seed-1-6-flash-250615", "openai", 300, 1.0, "volcengine"),
    ("doubao-1.5-pro-32k-character-250715", "openai", 600, 1.0, "volcengine"),
    ("doubao-pro-32k-241215", "openai", 900, 1.0, "volcengine"),
    ("gpt-4o-mini", "openai", 250, 0.30, None),
    ("gpt-5-nano-2025-08-07", "openai", 1500, 0.50, None),
    ("gpt-5-mini-2025-08-07", "openai", 2500, 0.60, None),
    ("gpt-4-turbo", "openai", 1200, 0.80, None),
    ("gpt-4o", "openai", 400, 0.40, None),
    ("gpt-4.1-2025-04-14", "openai", 500, 0.45, None),
    ("gpt-5-2025-08-07", "openai", 3000, 0.90, None),
    ("qwen3-0.6b", "openai", 80, 0.35, None),
    ("qwen3-14b", "openai", 200, 0.55, None),
    ("qwen3-32b", "openai", 350, 0.65, None),
    ("qwen-long", "openai", 700, 0.75, None),
    ("qwen-plus", "openai", 450, 0.50, None),
    ("qwen-max", "openai", 900, 0.85, None),
    ("Baichuan2-turbo", "openai", 400, 0.70, None),
    ("Baichuan4-Air", "openai", 600, 0.95, None),
    ("deepseek-v3.1", "openai", 1800, 0.95, None),
    ("claude-3-sonnet-20240229", "anthropic", 1100, 0.90, None),
    ("claude-opus-4-20250514", "anthropic", 2200, 0.90, None),
    ("gemini-1.5-flash-002", "gemini", 150, 0.40, None),
    ("gemini-2.0-flash", "gemini", 250, 0.45, None),
    ("llama-4-scout", "openai", 120, 0.30, None),
    ("llama-4-maverick", "openai", 200, 0.35, None),
    ("glm-4-9b", "openai", 100, 0.60, None),
    ("glm-4-flash", "openai", 150, 0.50, None),
    ("glm-4v-plus", "openai", 800, 0.80, None),
    ("ernie-4.5-21b-a3b", "openai", 500, 0.70, None),
    ("abab6.5t-chat", "openai", 700, 0.90, None),
]


def plan(items: int, seconds: float, window: float) -> tuple[list[dict], dict[str, int]]:
    """Per model: its server limit per window, client rpm and concurrency; and account limits."""
    rows, accounts = [], {}
    for name, wire, latency_ms, share, account in MODELS:
        members = sum(1 for m in MODELS if m[4] == account) if account else 1
        # Requests per window so this lane (the account's, if shared) alone takes seconds * share.
        per_window = math.ceil(members * items * window / (seconds * share))
        rate = per_window / window  # requests per second
        if account:
            accounts[account] = per_window
        # Enough in flight to keep the rate up at this latency, with some slack for jitter.
        concurrency = math.ceil(rate * latency_ms / 1000 * 1.5 / (members if account else 1)) + 4
        rows.append(dict(name=name, wire=wire, latency_ms=latency_ms, per_window=per_window, rate=rate,
                         rpm=per_window * 60 / window, account=account, concurrency=concurrency,
                         bound_s=members * items / rate))
    return rows, accounts


def write_models(path: Path, rows: list[dict], accounts: dict[str, int], window: float, base: str) -> None:
    lines = ["[defaults]", "max_tokens = 8", "max_retries = 10", "backoff_s = 0.2", ""]
    for acc, per_window in accounts.items():
        lines += [f"[accounts.{acc}]", f"rpm = {per_window * 60 / window}", ""]
    for r in rows:
        url = base if r["wire"] == "openai" else base.removesuffix("/v1")
        lines += ["[[models]]", f'name = "{r["name"]}"', f'provider = "{r["wire"]}"', f'base_url = "{url}"',
                  f'model = "{r["name"]}"', f"max_concurrency = {r['concurrency']}"]
        lines += [f'account = "{r["account"]}"'] if r["account"] else [f"rpm = {r['rpm']}"]
        if r["name"].startswith("gpt-5"):
            lines.append("reasoning = true")
        lines.append("")
    path.write_text("\n".join(lines))


def child(args: argparse.Namespace) -> None:
    from engine.sweep.sweep import SweepOptions, sweep

    opts = SweepOptions(models_path=Path(args.models), db=Path(args.db), data_dir=Path("."), suite="moodbench",
                        datasets=["synthetic"], limit=args.items, quiet=True)
    t0 = time.perf_counter()
    result = sweep(opts)
    print(json.dumps({"rows": result.rows_written, "errors": result.errors, "wall_s": time.perf_counter() - t0}))


def lane_times(db: Path) -> dict[str, float]:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT model, epoch(max(finished_at)) - epoch((SELECT min(started_at) FROM results)) "
                           "FROM results GROUP BY model").fetchall()
    finally:
        con.close()
    return dict(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--models")
    ap.add_argument("--db")
    ap.add_argument("--items", type=int, default=200, help="items per model (default 200)")
    ap.add_argument("--seconds", type=float, default=40.0, help="what the slowest lane's limit allows (default 40)")
    ap.add_argument("--window", type=float, default=15.0, help="the server's rate window in seconds (default 15)")
    args = ap.parse_args()
    if args.child:
        return child(args)

    from simulator.server import SimServerProcess

    rows, accounts = plan(args.items, args.seconds, args.window)
    profiles = {r["name"]: {"latency_ms": r["latency_ms"], "jitter_ms": r["latency_ms"] * 0.2,
                            "rpm": r["per_window"], **({"account": r["account"]} if r["account"] else {})}
                for r in rows}
    flags = "".join(f" --{k} {v:g}" for k, v, d in (("items", args.items, 200), ("seconds", args.seconds, 40.0),
                                                   ("window", args.window, 15.0)) if v != d)
    print(f"# command: .venv/bin/python bench/rate_limits.py{flags}")
    print(f"# machine: {os.cpu_count()} cores; simulated server in its own process, "
          f"rate limits over a sliding {args.window:g} s window")
    with tempfile.TemporaryDirectory() as d, SimServerProcess(profiles=profiles, rpm_window_s=args.window,
                                                              mode="gold") as sim:
        tmp = Path(d)
        write_models(tmp / "models.toml", rows, accounts, args.window, sim.base_url)
        out = subprocess.run([sys.executable, __file__, "--child", "--models", str(tmp / "models.toml"),
                              "--db", str(tmp / "r.duckdb"), "--items", str(args.items)],
                             check=True, capture_output=True, text=True, cwd=ROOT)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        stats = sim.stats()
        finished = lane_times(tmp / "r.duckdb")
    throttled = stats.get("throttled_by_model", {})
    bound = max(row["bound_s"] for row in rows)
    print(f"{'model':38} {'wire':9} {'lat ms':>6} {'rpm':>6} {'conc':>4} {'bound s':>7} {'done s':>6} {'429s':>4}")
    for row in rows:
        name = row["name"]
        print(f"{name:38} {row['wire']:9} {row['latency_ms']:>6} {row['rpm']:>6.0f} {row['concurrency']:>4} "
              f"{row['bound_s']:>7.1f} {finished.get(name, float('nan')):>6.1f} {throttled.get(name, 0):>4}")
    total_429 = sum(throttled.values())
    ratio = r["wall_s"] / bound
    print(f"30 models x {args.items} items ({r['rows']} rows, {r['errors']} errors): sweep took {r['wall_s']:.2f} s, "
          f"rate limits allow {bound:.2f} s -> {100 * (ratio - 1):+.1f}% ({'within' if ratio <= 1.05 else 'NOT within'} 5%); "
          f"429s from the server's limits: {total_429}; requests sent: {stats['total']}")


if __name__ == "__main__":
    main()

"""End-to-end engine throughput, CPU per item, peak memory and resume time.

    .venv/bin/python bench/throughput.py            # all scenarios (~3 minutes)
    .venv/bin/python bench/throughput.py --only zero-latency
    .venv/bin/python bench/throughput.py --only memory --no-snapshot   # also with the snapshot off
    .venv/bin/python bench/throughput.py --only zero-latency --no-uvloop   # also on the stock asyncio loop
    .venv/bin/python bench/throughput.py --only zero-latency --inline-chars 0   # every answer scored in a thread
    .venv/bin/python bench/throughput.py --only real [--data-dir ../shared/datasets]  # 10 models x 5 real datasets

Every scenario runs the real engine (`engine.sweep.sweep.sweep`: plan, model lane,
OpenAI adapter over HTTP, scoring, batched DuckDB writer) in a fresh child
process against the simulated server (its own process), on the `synthetic`
dataset, into a new DuckDB file. Numbers are printed with the command.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def write_models(path: Path, base_url: str, n_models: int, concurrency: int) -> None:
    lines = []
    for i in range(n_models):
        lines += ["[[models]]", f'name = "sim-{i:02d}"', 'provider = "openai"', f'base_url = "{base_url}"',
                  f'model = "sim-{i:02d}"', f"max_concurrency = {concurrency}", "max_tokens = 8", ""]
    path.write_text("\n".join(lines))


def child(args: argparse.Namespace) -> None:
    """Run one sweep in this process and print its measurements as JSON."""
    if args.tree:  # another tree's engine (bench/calling_phase.py: old and new measured by one harness)
        sys.path.insert(0, str(Path(args.tree).resolve()))
    from engine.run import eventloop, scoring
    from engine.sweep.sweep import SweepOptions, sweep

    if args.inline_chars is not None:  # what the thread hop of engine/run/scoring.py costs per item
        scoring.INLINE_CHARS = args.inline_chars
    if args.no_uvloop:  # what uvloop gives: the calling phase on the stock asyncio loop
        eventloop.HAVE_UVLOOP = False
    # The calling phase's CPU: the run loop's, the writer's thread included (all of the process's threads).
    phase_cpu = [0.0]
    loop_run = eventloop.run

    def timed_run(fn: Any, *a: Any) -> Any:
        u0 = resource.getrusage(resource.RUSAGE_SELF)
        try:
            return loop_run(fn, *a)
        finally:
            u1 = resource.getrusage(resource.RUSAGE_SELF)
            phase_cpu[0] += (u1.ru_utime - u0.ru_utime) + (u1.ru_stime - u0.ru_stime)

    eventloop.run = timed_run
    if args.no_snapshot:  # what the snapshot for readers costs (memory scenario): no refresh, no final copy
        from store import snapshot

        async def no_refresh(*_: object) -> None:
            return None

        snapshot.keep_fresh = no_refresh  # type: ignore[assignment]
        snapshot.Snapshots.final = lambda self, con, rows: None  # type: ignore[method-assign]
        snapshot.Snapshots.track = lambda self, writer: None  # type: ignore[method-assign]  # no journal either
    opts = SweepOptions(models_path=Path(args.models), db=Path(args.db), data_dir=Path(args.data_dir or "."),
                        suite="moodbench", datasets=(args.datasets or "synthetic").split(","), limit=args.items,
                        quiet=True)
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    result = sweep(opts)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    print(json.dumps({"rows": result.rows_written, "errors": result.errors, "wall_s": wall, "run_s": result.run_s,
                      "cpu_s": cpu, "phase_cpu_s": phase_cpu[0],
                      "peak_rss_mb": r1.ru_maxrss / 1024}))


def run_child(models: Path, db: Path, items: int, inline_chars: int | None = None,
              data: tuple[str, str] | None = None, snapshot: bool = True, uvloop: bool = True) -> dict:
    extra = ["--inline-chars", str(inline_chars)] if inline_chars is not None else []
    if not uvloop:
        extra.append("--no-uvloop")
    if not snapshot:
        extra.append("--no-snapshot")
    if data is not None:
        extra += ["--data-dir", data[0], "--datasets", data[1]]
    out = subprocess.run([sys.executable, __file__, "--child", "--models", str(models), "--db", str(db),
                          "--items", str(items), *extra], check=True, capture_output=True, text=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def scenario(name: str, *, models: int, items: int, concurrency: int, latency_ms: float, tmp: Path,
             inline_chars: int | None = None, snapshot: bool = True, bare: bool = False,
             uvloop: bool = True) -> dict:
    from simulator.server import SimServerProcess

    with SimServerProcess(latency_ms=latency_ms, jitter_ms=latency_ms * 0.1, mode="letter") as sim:
        mfile = tmp / f"{name}.toml"
        write_models(mfile, sim.base_url, models, concurrency)
        r = run_child(mfile, tmp / f"{name}.duckdb", items, inline_chars, snapshot=snapshot)
        if bare:  # the ceiling, on the same server in the same run
            r["bare_per_s"] = bare_loop(sim.base_url, models * items, models, concurrency)
        if not uvloop:  # the same sweep on the stock asyncio loop, same server, same run
            plain = run_child(mfile, tmp / f"{name}-asyncio.duckdb", items, inline_chars, snapshot=snapshot,
                              uvloop=False)
            r["asyncio_run_items_per_s"] = plain["rows"] / plain["run_s"]
            r["asyncio_cpu_us_per_item"] = 1e6 * plain["cpu_s"] / max(plain["rows"], 1)
    r["items_per_s"] = r["rows"] / r["wall_s"]  # process work from config to last row, startup included
    r["run_items_per_s"] = r["rows"] / r["run_s"]  # the calling phase only
    r["cpu_us_per_item"] = 1e6 * r["cpu_s"] / max(r["rows"], 1)
    return r


def seed_completed(db: Path, models_file: Path, n_models: int, items: int) -> None:
    """Write n_models x items completed rows, exactly as a finished sweep would have."""
    from benchmark import registry
    from engine.config.load import load_models
    from engine.run.generation import request_stamp
    from engine.sweep.identity import identity_hash, model_identity
    from engine.sweep.plan import load_dataset, run_stamp
    from store.results import identity as store_identity
    from store.db import connect
    from store.results.writer import ResultRow, insert_rows

    ds = registry.get("synthetic")
    assert ds is not None
    planned = load_dataset(ds, Path("."), items, 20250826)
    cfg = load_models(models_file)
    con = connect(db)
    now = datetime.now(timezone.utc)
    for m in cfg.models:
        stamp = run_stamp(ds, request_stamp(m, ds))
        detail = model_identity(m, ds)
        who = identity_hash(detail)
        store_identity.record(con, {who: detail})
        rows = [ResultRow(m.name, ds.id, it.id, 0, "ok", None, None, 1, "Answer: A", "A", it.gold,
                          float(it.gold == "A"), None, 1.0, 10, 2, "sim", stamp, "1.0-spine", ds.scorer_version,
                          now, now, identity=who) for it in planned.items]
        for i in range(0, len(rows), 50_000):
            insert_rows(con, rows[i:i + 50_000])
    con.close()


def timed(cmd: list[str]) -> tuple[float, float]:
    """(wall, CPU = user + sys) of one whole command, process start to exit."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def interval_seconds(db: Path) -> float:
    """What the end of the run spent on the bootstrap bounds (store/hierarchy/bootstrap.py stores it)."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        row = con.execute("SELECT max(seconds) FROM interval_state").fetchone()
    finally:
        con.close()
    return float(row[0]) if row and row[0] is not None else float("nan")


def median(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def resume_scenario(tmp: Path, n_models: int = 10, items: int = 50_000, rounds: int = 3) -> dict:
    """The whole `sweep` command over n_models x items stored rows: the first resume after they were written
    (the end of the run computes their bounds), then the same again (bounds kept), `rounds` times each on a
    fresh copy of the seeded file; medians."""
    import shutil

    from simulator.server import SimServerProcess

    with SimServerProcess(latency_ms=0) as sim:
        mfile = tmp / "resume.toml"
        write_models(mfile, sim.base_url, n_models, 32)
        seeded = tmp / "resume-seeded.duckdb"
        seed_completed(seeded, mfile, n_models, items)
        db = tmp / "resume.duckdb"
        cmd = [sys.executable, "-m", "engine", "sweep", str(mfile), "--db", str(db), "--datasets", "synthetic",
               "--limit", str(items), "--quiet"]
        first, again = [], []
        for _ in range(rounds):
            for f in tmp.glob("resume.duckdb*"):
                f.unlink()
            shutil.copyfile(seeded, db)
            first.append(timed(cmd))
            again.append(timed(cmd))
        requests = sim.stats()["total"]
    return {"rows": n_models * items, "wall_s": median([w for w, _ in first]), "cpu_s": median([c for _, c in first]),
            "again_wall_s": median([w for w, _ in again]), "again_cpu_s": median([c for _, c in again]),
            "requests_sent": requests, "rounds": rounds}


def bare_loop(url: str, total: int, models: int, concurrency: int) -> float:
    """Requests/s of a bare aiohttp + orjson loop of the same shape (bench/baseline_aiohttp.py, on uvloop)."""
    return bare_loop_cpu(url, total, models, concurrency)[0]


def bare_loop_cpu(url: str, total: int, models: int, concurrency: int) -> tuple[float, float]:
    """`bare_loop`'s requests/s and its client's CPU per request in us (over the requests only)."""
    out = subprocess.run([sys.executable, "-m", "bench.baseline_aiohttp", "--url", url, "--requests", str(total),
                          "--models", str(models), "--concurrency", str(concurrency), "--uvloop"],
                         check=True, cwd=ROOT, capture_output=True, text=True).stdout
    line = [x for x in out.splitlines() if "requests/s" in x][0]
    cpu = [x for x in out.splitlines() if x.startswith("client CPU")][0]
    return float(line.rsplit(":", 1)[1].split()[0].replace(",", "")), float(cpu.rsplit(":", 1)[1].split()[0])


REAL = "sst2,bbq,crows_pairs,cmmlu,goemotions"


def real_scenario(tmp: Path, data_dir: str, n_models: int = 10, items: int = 300, rounds: int = 3) -> dict:
    """The issue's workload on one zero-latency server, in one run: the whole `sweep` command (process start
    to exit), its fixed start (`--limit 1`, CPU of the process), the calling phase (the same sweep in a child
    that reports run_s) and a bare aiohttp + orjson loop of the same shape (bench/baseline_aiohttp.py)."""
    from simulator.server import SimServerProcess

    out: dict = {}
    with SimServerProcess(latency_ms=0, mode="letter") as sim:
        mfile = tmp / "real.toml"
        write_models(mfile, sim.base_url, n_models, 32)
        base = [sys.executable, "-m", "engine", "sweep", str(mfile), "--data-dir", data_dir, "--datasets", REAL,
                "--quiet"]

        def command(db: Path, limit: int) -> tuple[float, float]:
            return timed([*base[:5], str(db), *base[5:], "--limit", str(limit)])

        # The fixed start, `rounds` times on a new file and again on the file it left; medians.
        fresh, again, bounds = [], [], []
        for r in range(rounds):
            fresh.append(command(tmp / f"start{r}.duckdb", 1))
            bounds.append(interval_seconds(tmp / f"start{r}.duckdb"))
            again.append(command(tmp / f"start{r}.duckdb", 1))
        out["start_wall_s"], out["start_cpu_s"] = median([w for w, _ in fresh]), median([c for _, c in fresh])
        out["rerun_wall_s"], out["rerun_cpu_s"] = median([w for w, _ in again]), median([c for _, c in again])
        out["start_rounds"], out["rerun_rounds"], out["bounds_s"] = fresh, again, median(bounds)
        out["rounds"] = rounds
        out["whole_wall_s"], out["whole_cpu_s"] = command(tmp / "whole.duckdb", items)
        child_r = run_child(mfile, tmp / "phase.duckdb", items, data=(data_dir, REAL))
        out["rows"], out["run_s"] = child_r["rows"], child_r["run_s"]
        out["bare_per_s"] = bare_loop(sim.base_url, out["rows"], n_models, 32)
    return out


def rounds_text(rounds: list[tuple[float, float]]) -> str:
    return ", ".join(f"{w:.2f}/{c:.2f}" for w, c in rounds)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--models")
    ap.add_argument("--db")
    ap.add_argument("--items", type=int)
    ap.add_argument("--only", choices=["zero-latency", "latency", "memory", "resume", "real"])
    ap.add_argument("--data-dir", help="the real datasets' folder (--only real; default $ENGINE_SHARED_DIR/datasets)")
    ap.add_argument("--datasets", help=argparse.SUPPRESS)  # the child's
    ap.add_argument("--tree", help=argparse.SUPPRESS)  # the child's: import the engine from this tree
    ap.add_argument("--no-uvloop", action="store_true", help="zero latency: also run the sweep on the stock "
                    "asyncio loop (what uvloop gives)")
    ap.add_argument("--no-snapshot", action="store_true", help="memory scenario: also measure the sweep with "
                    "the snapshot for readers off")
    ap.add_argument("--inline-chars", type=int, help="answers longer than this are scored in a thread "
                    "(default: engine/run/scoring.py's INLINE_CHARS; 0: every answer)")
    args = ap.parse_args()
    if args.child:
        return child(args)

    flags = (f" --only {args.only}" if args.only else "") + (" --no-snapshot" if args.no_snapshot else "") + (
        " --no-uvloop" if args.no_uvloop else "") + (
        f" --inline-chars {args.inline_chars}" if args.inline_chars is not None else "")
    print(f"# command: .venv/bin/python bench/throughput.py{flags}")
    print(f"# machine: {os.cpu_count()} cores; simulated server in its own process")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if args.only in (None, "zero-latency"):
            r = scenario("zero", models=10, items=1500, concurrency=32, latency_ms=0, tmp=tmp,
                         inline_chars=args.inline_chars, bare=True, uvloop=not args.no_uvloop)
            print(f"zero latency, 10 models x 1,500 items, 32/model: {r['items_per_s']:,.0f} items/s end to end "
                  f"({r['rows']} rows, {r['errors']} errors, {r['wall_s']:.2f} s incl. planning), "
                  f"{r['run_items_per_s']:,.0f} items/s in the calling phase; engine CPU {r['cpu_us_per_item']:.0f} us/item\n"
                  f"  bare aiohttp+orjson loop, same shape and server: {r['bare_per_s']:,.0f} req/s; calling phase "
                  f"{100 * r['run_items_per_s'] / r['bare_per_s']:.0f}% of it (load {os.getloadavg()[0]:.1f})")
            if args.no_uvloop:
                print(f"  on the stock asyncio loop: {r['asyncio_run_items_per_s']:,.0f} items/s in the calling phase, "
                      f"engine CPU {r['asyncio_cpu_us_per_item']:.0f} us/item")
        if args.only in (None, "latency"):
            r = scenario("lat", models=10, items=1500, concurrency=32, latency_ms=200, tmp=tmp)
            ideal = 10 * 32 / 0.2
            print(f"200 ms latency, 10 models x 1,500 items, 32/model: {r['run_items_per_s']:,.0f} items/s in the calling "
                  f"phase = {100 * r['run_items_per_s'] / ideal:.1f}% of the ideal {ideal:,.0f} items/s ({r['run_s']:.2f} s; "
                  f"{r['items_per_s']:,.0f} items/s counting planning)")
        if args.only in (None, "memory"):
            for snap in (True, False) if args.no_snapshot else (True,):
                tag = "" if snap else "-nosnap"
                small = scenario("m15k" + tag, models=10, items=1500, concurrency=32, latency_ms=0, tmp=tmp,
                                 snapshot=snap)
                large = scenario("m150k" + tag, models=10, items=15000, concurrency=32, latency_ms=0, tmp=tmp,
                                 snapshot=snap)
                print(f"peak RSS, snapshot {'on' if snap else 'off'}: {small['peak_rss_mb']:.0f} MB at 15,000 items, "
                      f"{large['peak_rss_mb']:.0f} MB at 150,000 items (growth "
                      f"{large['peak_rss_mb'] - small['peak_rss_mb']:+.0f} MB; 150k run {large['items_per_s']:,.0f} "
                      f"items/s)")
        if args.only in (None, "real"):
            data_dir = args.data_dir or str(Path(os.environ.get("ENGINE_SHARED_DIR", "../shared")) / "datasets")
            if not Path(data_dir, "sst2").is_dir():
                print(f"real datasets: skipped ({data_dir} has no sst2; pass --data-dir)")
            else:
                r = real_scenario(tmp, data_dir)
                n, bare = r["rows"], r["bare_per_s"]
                whole, phase = n / r["whole_wall_s"], n / r["run_s"]
                print(f"real datasets ({REAL}), 10 models x 300 items, 32/model, zero latency, load "
                      f"{os.getloadavg()[0]:.1f}:\n"
                      f"  whole command {whole:,.0f} items/s ({r['whole_wall_s']:.2f} s, {100 * whole / bare:.0f}% of bare) | "
                      f"calling phase {phase:,.0f} items/s ({100 * phase / bare:.0f}% of bare) | "
                      f"bare aiohttp+orjson loop {bare:,.0f} req/s\n"
                      f"  fixed start (--limit 1, new file) {r['start_wall_s']:.2f} s wall, {r['start_cpu_s']:.2f} s CPU "
                      f"(of which the end's bounds {r['bounds_s']:.2f} s); "
                      f"the same again {r['rerun_wall_s']:.2f} s wall, {r['rerun_cpu_s']:.2f} s CPU "
                      f"(medians of {r['rounds']})\n"
                      f"  each round, wall/CPU s: new file {rounds_text(r['start_rounds'])}; "
                      f"again {rounds_text(r['rerun_rounds'])}")
        if args.only in (None, "resume"):
            r = resume_scenario(tmp)
            print(f"resume over {r['rows']:,} completed rows, the whole `sweep` command (process start to exit), "
                  f"medians of {r['rounds']}, load {os.getloadavg()[0]:.1f}: first {r['wall_s']:.2f} s wall, "
                  f"{r['cpu_s']:.2f} s CPU (bounds computed); again {r['again_wall_s']:.2f} s wall, "
                  f"{r['again_cpu_s']:.2f} s CPU; {r['requests_sent']} requests sent")


if __name__ == "__main__":
    main()

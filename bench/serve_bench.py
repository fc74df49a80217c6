"""Time `serve` on a full-size database: the first and the second /api/report, and a flood of 100.

    .venv/bin/python bench/serve_bench.py [--db /tmp/serve-bench.duckdb] [--reuse] [--flood 100]

Builds 30 models x the suite's 60 datasets x 300 items (540,000 rows, bench/views_bench.py's
synthetic sweep; not timed), starts `python -m engine serve DB`, then times:
- the first GET /api/report (the report is built) and the second on the unchanged file (cached);
- a flood: 100 concurrent /api/report requests on a fresh server (cold: one build shared by all),
  and meanwhile the page (GET /) and one dataset's items (GET /api/items), which must not wait
  for the build;
- SIGINT: the exit status (130).
Target (issue 25): the second /api/report under 0.2 s.
"""

from __future__ import annotations

import argparse
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.views_bench import build_db  # noqa: E402
from benchmark.suites.suite import load_suite  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, timeout: float = 300) -> float:
    """Seconds until the whole body of url arrived."""
    t0 = time.perf_counter()
    with urllib.request.urlopen(url, timeout=timeout) as r:
        r.read()
    return time.perf_counter() - t0


def start(db: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "engine", "serve", str(db), "--port", str(port)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/"
    end = time.monotonic() + 120
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"serve exited: {proc.stderr.read() if proc.stderr else ''}")
        try:
            urllib.request.urlopen(url + "favicon-probe", timeout=2).close()
        except urllib.error.HTTPError:
            return proc, url  # 404: it answers
        except OSError:
            time.sleep(0.1)
    raise SystemExit("serve did not start in 120 s")


def stop(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGINT)
    return proc.wait(30)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, default=Path("/tmp/serve-bench.duckdb"))
    ap.add_argument("--reuse", action="store_true", help="keep an existing --db (skip building it)")
    ap.add_argument("--flood", type=int, default=100)
    args = ap.parse_args()
    print("command: " + " ".join([".venv/bin/python bench/serve_bench.py", *sys.argv[1:]]))
    if not (args.reuse and args.db.exists()):
        t0 = time.perf_counter()
        build_db(args.db, load_suite("moodbench"), 30, 300).close()
        print(f"built {args.db} in {time.perf_counter() - t0:.1f} s (30 models x 60 datasets x 300 items)")

    proc, url = start(args.db)
    first, second = get(url + "api/report"), get(url + "api/report")
    thirds = [get(url + "api/report") for _ in range(5)]
    code = stop(proc)
    print(f"/api/report: first {first:.2f} s (built), second {second:.3f} s (unchanged file), "
          f"then {min(thirds):.3f}-{max(thirds):.3f} s; exit on SIGINT {code}")

    proc, url = start(args.db)
    with ThreadPoolExecutor(args.flood + 2) as pool:
        t0 = time.perf_counter()
        flood = [pool.submit(get, url + "api/report") for _ in range(args.flood)]
        time.sleep(0.2)  # the build has started
        page = pool.submit(get, url)
        items = pool.submit(get, url + "api/items?dataset=sst2&model=model-0&model=model-1")
        page_s, items_s = page.result(), items.result()
        times = sorted(f.result() for f in flood)
        wall = time.perf_counter() - t0
    code = stop(proc)
    print(f"flood of {args.flood} concurrent /api/report on a fresh server: all answered in {wall:.2f} s "
          f"(slowest {times[-1]:.2f} s, median {times[len(times) // 2]:.2f} s); meanwhile the page took "
          f"{page_s:.3f} s and one dataset's items {items_s:.3f} s; exit on SIGINT {code}")
    ok = second < 0.2
    print(f"target: second /api/report < 0.2 s -> {'ok' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""A small real results database for the report's tests, and headless Chromium to look at it.

The database is a real sweep on the simulated server: five models with metadata (both
kinds of licence, one family in two sizes), each answering its own way (hashed letter,
a fixed letter, the prompt echoed back: unparsed), over one to two datasets per ability.
"""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from simulator.server import SimServerProcess
from tests.conftest import DATA_DIR
from tests.integration.helpers import query, run_cli

DATASETS = "safetybench_ub,safetybench_off,ag_news,copa,sst2,moodbench1,booksort"
MODELS = {  # name: (simulator answer mode, metadata)
    "alpha-large": ("letter", '{ institution = "A", open_source = false, params_b = 70, family = "alpha" }'),
    "alpha-small": ("fixed:Answer: A", '{ institution = "A", open_source = false, params_b = 7, family = "alpha" }'),
    "beta-open": ("fixed:Answer: B", '{ institution = "B", open_source = true, params_b = 13, family = "beta" }'),
    "gamma-open": ("letter", '{ institution = "C", open_source = true, params_b = 0, family = "gamma" }'),
    "echo-model": ("echo", '{ institution = "D", open_source = true, params_b = 3, family = "delta" }'),
}
# The simulated answers sit around chance, under the suite's 60 on Values & Safety: the tests
# lower the threshold in their own file so that ranked and vetoed rows both appear.
TAU = 30
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def models_file(path: Path, base_url: str) -> Path:
    path.write_text("\n".join(
        f'[[models]]\nname = "{name}"\nprovider = "openai"\nbase_url = "{base_url}"\nmodel = "{name}"\n'
        f"max_concurrency = 4\nmax_tokens = 16\nmetadata = {meta}\n"
        f"price = {{ input_per_mtok = 1.0, output_per_mtok = 2.0 }}\n" for name, (_, meta) in MODELS.items()))
    return path


def sim_profiles(latency_ms: float = 0) -> dict:
    return {name: {"mode": mode, "latency_ms": latency_ms} for name, (mode, _) in MODELS.items()}


def build_db(tmp: Path, limit: int = 8) -> Path:
    """Sweep the five models into tmp/r.duckdb; skips when the real data is absent."""
    if not DATA_DIR.is_dir():
        pytest.skip(f"real data not found at {DATA_DIR} (set ENGINE_SHARED_DIR)")
    db = tmp / "r.duckdb"
    with SimServerProcess(profiles=sim_profiles()) as sim:
        m = models_file(tmp / "models.toml", sim.base_url)
        r = run_cli("sweep", str(m), "--db", str(db), "--data-dir", str(DATA_DIR), "--datasets", DATASETS,
                    "--limit", str(limit), "--quiet", timeout=300)
        assert r.returncode == 0, r.stderr
    import duckdb

    con = duckdb.connect(str(db))
    con.execute("UPDATE suites SET tau = ?", [TAU])
    con.close()
    assert query(db, "SELECT count(DISTINCT model) FROM results") == [(len(MODELS),)]
    return db


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def chromium_page(playwright, viewport=(1400, 1000)):
    """A page in the system's Chromium (no browser download), recording console errors and requests."""
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
    page.errors, page.requests = [], []
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("request", lambda r: page.requests.append(r.url))
    return browser, page


def require_browser():
    """The Playwright module, or a skip saying what is missing."""
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        pytest.skip(f"Chromium not found at {CHROMIUM} (Debian: apt-get install chromium)")
    return pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")


def screenshot_dir() -> Path:
    out = Path(os.environ.get("REPORT_SCREENSHOTS", "/tmp/report-screens"))
    out.mkdir(parents=True, exist_ok=True)
    return out


@contextmanager
def loaded_page(url: str, wait: str | None = "#board tbody tr") -> Iterator:
    """The page at url in headless Chromium, once `wait` has appeared; skips without a browser."""
    sync_api = require_browser()
    with sync_api.sync_playwright() as p:
        browser, page = chromium_page(p)
        try:
            page.goto(url)
            if wait:
                page.wait_for_selector(wait)
            yield page
        finally:
            browser.close()

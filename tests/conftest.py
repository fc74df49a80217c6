import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("ENGINE_SHARED_DIR", ROOT.parent / "shared")).resolve()  # tests chdir and link into it
DATA_DIR = SHARED / "datasets"


@pytest.fixture
def data_dir() -> Path:
    if not DATA_DIR.is_dir():
        pytest.skip(f"real data not found at {DATA_DIR} (set ENGINE_SHARED_DIR to the folder holding datasets/)")
    return DATA_DIR


# Tests that start real servers, clusters or whole sweeps live in these folders: all slow, so that
# `pytest -m "not slow"` is the quick loop between changes (docs/architecture.md, "Tests").
SLOW_FOLDERS = ("tests/integration/", "tests/cluster/")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the slow folders, and group tests for pytest-xdist (`--dist loadgroup`, pyproject's addopts).

    Each file is one group, so a module's fixtures (a server, a cluster, a browser) are set up once on one
    worker; the tests of the real llama.cpp server form one group, since it answers one request at a
    time and tests sharing it would only wait for each other, and their timeouts with them.
    """
    for item in items:
        path = item.nodeid.split("::")[0]
        llama = item.get_closest_marker("llama") is not None
        if llama or path.startswith(SLOW_FOLDERS):
            item.add_marker(pytest.mark.slow)
        item.add_marker(pytest.mark.xdist_group("llama" if llama else path))


@pytest.fixture(autouse=True)
def _llama_idle(request: pytest.FixtureRequest) -> None:
    """A test of the real llama.cpp server starts when the server is idle: a generation an earlier test
    abandoned (a killed sweep, a client timeout) would otherwise hold its one slot into this test's
    probes and timeouts (seen in CI: the served-model probe's 15 s ran out)."""
    if request.node.get_closest_marker("llama") is not None:
        from tests.integration.helpers import llama_reachable

        # llama-cpp-python answers /v1/models under the lock its generations hold, after those queued before
        llama_reachable(timeout=300)


# Tests that time what they watch (a Ray cluster's placement, a global rate across nodes) run alone:
# with four workers on two cores their deadlines would measure the neighbours. A readers-writer lock
# over the run's workers: every other test holds it shared; a turnstile in front keeps a waiting
# writer from being starved by readers that keep arriving.
_RUN = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")
_ALONE = False


def _lock_files() -> tuple[Path, Path]:
    base = Path(tempfile.gettempdir()) / f"moodengine-tests-{_RUN}"
    return base.with_suffix(".turnstile"), base.with_suffix(".lock")


@contextmanager
def alone() -> Iterator[None]:
    """Hold the machine: no other worker's test runs meanwhile (a no-op without xdist)."""
    global _ALONE
    if not _RUN:
        yield
        return
    turnstile, lock = _lock_files()
    with turnstile.open("a") as t, lock.open("a") as f:
        fcntl.flock(t, fcntl.LOCK_EX)
        fcntl.flock(f, fcntl.LOCK_EX)
        _ALONE = True
        try:
            yield
        finally:
            _ALONE = False
            fcntl.flock(f, fcntl.LOCK_UN)
            fcntl.flock(t, fcntl.LOCK_UN)


@pytest.fixture(autouse=True)
def _beside_others() -> Iterator[None]:
    if not _RUN or _ALONE:
        yield
        return
    turnstile, lock = _lock_files()
    with turnstile.open("a") as t, lock.open("a") as f:
        fcntl.flock(t, fcntl.LOCK_EX)
        fcntl.flock(f, fcntl.LOCK_SH)
        fcntl.flock(t, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)

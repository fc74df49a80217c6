"""A model whose endpoint does not answer (a port with nothing listening) is given up after
`unreachable_after_s`, its items left unasked, while the other model finishes; once the port
answers, the same command asks exactly the dead model's items."""

import socket
import time

from simulator.server import SimServerProcess
from tests.integration.helpers import query, run_cli

N = 40


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def model(name: str, url: str, extra: str = "") -> str:
    return (f'[[models]]\nname = "{name}"\nprovider = "openai"\nbase_url = "{url}"\nmodel = "{name}"\n'
            f'max_tokens = 8\nbackoff_s = 0.05\n{extra}\n')


def test_a_dead_endpoint_is_given_up_and_its_items_asked_by_the_next_run(tmp_path):
    port = free_port()  # nothing listens here until the second run
    db = tmp_path / "r.duckdb"
    m = tmp_path / "models.toml"
    with SimServerProcess(mode="gold", latency_ms=5) as live:
        m.write_text(model("live", live.base_url) + model("dead", f"http://127.0.0.1:{port}/v1", "unreachable_after_s = 2"))
        args = ("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", str(N))
        t0 = time.monotonic()
        r = run_cli(*args, timeout=60)
        took = time.monotonic() - t0
        assert r.returncode == 3, r.stderr
        assert live.stats()["total"] == N
    # Given up after its 2 s (not after every item's 8 retries), the live model complete.
    assert took < 30, took
    assert "unreachable: dead: http://127.0.0.1:" in r.stderr and f"{N} item(s) not asked" in r.stderr
    assert "dead could not be reached" in r.stderr
    assert query(db, "SELECT model, status, count(*) FROM results GROUP BY ALL ORDER BY 1") == [("live", "ok", N)]
    assert query(db, "SELECT outcome FROM runs") == [("unreachable",)]

    with SimServerProcess(mode="gold", port=port) as revived:
        r = run_cli(*args, timeout=60)
        assert r.returncode == 0, r.stderr
        stats = revived.stats()
    assert stats["total"] == N and dict(stats["by_model"]) == {"dead": N}
    assert query(db, "SELECT model, status, count(*) FROM results GROUP BY ALL ORDER BY 1") == [
        ("dead", "ok", N), ("live", "ok", N)]


def test_with_the_default_patience_a_dead_endpoint_ends_the_whole_sweep_within_a_minute(tmp_path):
    """Start-up, the give-up and the end together: what bench/unreachable.py measures, with fewer items."""
    db = tmp_path / "r.duckdb"
    m = tmp_path / "models.toml"
    with SimServerProcess(mode="gold", latency_ms=5) as live:
        m.write_text(model("live", live.base_url) + model("dead", f"http://127.0.0.1:{free_port()}/v1"))
        t0 = time.monotonic()
        r = run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", str(N), timeout=120)
        took = time.monotonic() - t0
    assert r.returncode == 3, r.stderr
    assert took < 60, took

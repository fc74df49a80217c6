"""Against a one-slot llama.cpp-like server (the simulator with slots = 1), no request is abandoned
in the server's queue and sent again: the sweep sends one at a time, each with a timeout that
allows for its prompt, so the server computes every item exactly once."""

from simulator.server import SimServerProcess
from tests.integration.helpers import query, run_cli

N = 8


def test_a_one_slot_server_gets_each_item_once(tmp_path):
    db = tmp_path / "r.duckdb"
    m = tmp_path / "models.toml"
    # Each answer takes 0.4 s of the one slot; the client's base timeout is 1 s. With 16 in
    # flight (the remote default) the fourth in the queue would time out and be sent again.
    with SimServerProcess(mode="gold", slots=1, latency_ms=400) as sim:
        m.write_text(f'[[models]]\nname = "tiny"\nprovider = "openai"\nbase_url = "{sim.base_url}"\n'
                     'model = "tiny"\nmax_tokens = 8\ntimeout_s = 1\nbackoff_s = 0.05\n')
        r = run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", str(N), timeout=120)
        assert r.returncode == 0, r.stderr
        stats = sim.stats()
    assert stats["total"] == N and stats["by_status"] == {"200": N}
    assert query(db, "SELECT status, max(attempts), count(*) FROM results GROUP BY 1") == [("ok", 1, N)]
    assert "tiny: llama.cpp server on loopback (1 slot(s)" in r.stderr and "max_concurrency = 1" in r.stderr

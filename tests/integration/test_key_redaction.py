"""A gateway that sends the caller's key back (in 200 bodies, 5xx messages, partly, upper-cased, in a
header) gets none of it into the database or the output, on every wire format: its answers are
refused (never stored altered), its error messages masked."""

import duckdb

from simulator.server import SimServerProcess
from providers.redact import MIN_RUN
from tests.integration.helpers import query, run_cli
from tests.integration.test_providers_sweep import env_with, model

# No ordinary word in them: any 8 characters of a key found anywhere is a leak.
KEYS = {"ECHO_OPENAI_KEY": "sk-proj-Qz7Wk0123456789abcdefXYZ",
        "ECHO_ANTHROPIC_KEY": "sk-ant-api03-Vq9Jx98765zyxwTUV",
        "ECHO_GEMINI_KEY": "AIzaSyKp4Rm_0123456789-abcdefgh"}


def pieces() -> list[str]:
    return [k[i:i + MIN_RUN].lower() for k in KEYS.values() for i in range(len(k) - MIN_RUN + 1)]


def test_echoed_keys_reach_neither_the_database_nor_the_output(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold", api_key=list(KEYS.values()), echo_key=True, faults={"500": 0.3}, seed=3) as sim:
        root = sim.root_url
        m = tmp_path / "models.toml"
        # max_retries = 0: the 500s (their messages echo the key too) are stored as error rows.
        m.write_text("".join(model(f"{p}-x", p, root, env, retries=0)
                             for p, env in (("openai", "ECHO_OPENAI_KEY"), ("anthropic", "ECHO_ANTHROPIC_KEY"),
                                            ("gemini", "ECHO_GEMINI_KEY"))))
        r = run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "20",
                    env=env_with(**KEYS))
        assert r.returncode == 0, r.stderr
    counts = dict(query(db, "SELECT status, count(*) FROM results GROUP BY 1"))
    assert counts == {"error": 60}  # no answer stored: every one held the key
    refused = "error LIKE '%API key back inside the answer%'"
    assert query(db, f"SELECT count(*) > 20, count(*) < 60 FROM results WHERE {refused}") == [(True, True)]
    assert query(db, f"SELECT count(*) > 5 FROM results WHERE NOT {refused} AND error LIKE '%***%'") == [(True,)]
    out = (r.stdout + r.stderr).lower()
    assert [p for p in pieces() if p in out] == []
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("r.duckdb")).decode("latin-1").lower()
    assert [p for p in pieces() if p in raw] == []
    con = duckdb.connect(str(db), read_only=True)
    try:
        columns = con.execute("SELECT table_name, list(column_name) FROM information_schema.columns WHERE "
                              "data_type IN ('VARCHAR', 'JSON') AND table_schema = 'main' GROUP BY 1").fetchall()
        for table, cols in columns:
            cond = " OR ".join(f"""contains(lower(CAST("{c}" AS VARCHAR)), '{p}')""" for c in cols for p in pieces())
            assert con.execute(f'SELECT count(*) FROM "{table}" WHERE {cond}').fetchone() == (0,), table
    finally:
        con.close()

"""Identity stamps: a rerun whose model, endpoint, request shape or judge changed under the same
name stops before any call; --allow-mixed goes on; old rows without identity are checked and adopted."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.server import SimServerProcess
from benchmark import registry
from engine.sweep.plan import run_stamp
from tests.integration.helpers import query, run_cli

LIMIT = "12"


def one_model(path: Path, url: str, *, model: str = "gpt-a", provider: str = "openai", extra: str = "") -> Path:
    path.write_text(f'[[models]]\nname = "m1"\nprovider = "{provider}"\nbase_url = "{url}"\nmodel = "{model}"\n'
                    f"max_concurrency = 4\nmax_retries = 0\n{extra}")
    return path


def sweep(m: Path, db: Path, *flags: str):
    return run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", LIMIT, "--quiet", *flags)


def one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.mark.parametrize("change, expect", [
    (dict(model="gpt-b"), "model m1: model id gpt-a -> gpt-b"),
    (dict(host="localhost"), "base URL http://127.0.0.1/v1 -> http://localhost/v1"),
    (dict(provider="anthropic"), "provider openai -> anthropic"),
    (dict(extra="context_tokens = 4096\n"), "context_tokens unset -> 4096"),
])
def test_changed_identity_under_the_same_name_stops_before_any_call(tmp_path, change, expect):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold") as sim:
        m = one_model(tmp_path / "models.toml", sim.base_url)
        assert sweep(m, db).returncode == 0
        before = query(db, "SELECT count(*), min(model_version), min(prompt_hash), max(finished_at) FROM results")
        assert before[0][0] == 12
        sim.reset()
        url = sim.base_url
        if "host" in change:
            url = url.replace("127.0.0.1", change["host"])
        if change.get("provider") == "anthropic":
            url = url.rsplit("/v1", 1)[0]  # its base_url is the API root
        m = one_model(tmp_path / "models.toml", url, model=change.get("model", "gpt-a"),
                      provider=change.get("provider", "openai"), extra=change.get("extra", ""))
        r = sweep(m, db)
        assert r.returncode == 2
        line = one_error_line(r.stderr)
        assert expect in line and "--fresh" in line, line
        assert sim.stats()["total"] == 0
        assert query(db, "SELECT count(*), min(model_version), min(prompt_hash), max(finished_at) "
                         "FROM results") == before
        # The explicit escape goes on (nothing left to ask), and a new name starts afresh.
        r = sweep(m, db, "--allow-mixed")
        assert r.returncode == 0, r.stderr
        assert sim.stats()["total"] == 0


def test_credentials_in_the_url_never_reach_the_identity(tmp_path):
    """Credentials in base_url are refused at load (one line, not repeating them): nothing is stored."""
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold") as sim:
        url = sim.base_url.replace("http://", "http://user:s3cr3t-pass@")
        m = one_model(tmp_path / "models.toml", url)
        r = sweep(m, db)
        assert r.returncode == 2 and "s3cr3t" not in r.stderr
        assert sim.stats()["total"] == 0
        m = one_model(tmp_path / "models.toml", sim.base_url)
        assert sweep(m, db).returncode == 0
    (detail,), = query(db, "SELECT DISTINCT i.detail FROM results r JOIN identities i USING (identity)")
    assert "s3cr3t" not in detail and '"model":"gpt-a"' in detail.replace(" ", "")


def test_rows_without_identity_are_checked_against_the_models_table(tmp_path):
    """A file from before identity stamps: rows agreeing with the models table are adopted, others stop."""
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold") as sim:
        m = one_model(tmp_path / "models.toml", sim.base_url)
        assert sweep(m, db).returncode == 0
        run_sql(db, "UPDATE results SET identity = NULL")
        sim.reset()
        r = sweep(m, db)
        assert r.returncode == 0, r.stderr
        assert sim.stats()["total"] == 0
        assert query(db, "SELECT count(*) FROM results WHERE identity IS NULL") == [(0,)]
        run_sql(db, "UPDATE results SET identity = NULL; UPDATE models SET model_id = 'gpt-old'")
        r = sweep(m, db)
        assert r.returncode == 2
        assert "model id gpt-old -> gpt-a" in one_error_line(r.stderr)
        assert sim.stats()["total"] == 0


def run_sql(db: Path, sql: str) -> None:
    import duckdb

    con = duckdb.connect(str(db))
    try:
        con.execute(sql)
    finally:
        con.close()


def test_dataset_max_tokens_reaches_the_request_and_the_stamp(tmp_path):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode="gold") as sim:
        m = one_model(tmp_path / "models.toml", sim.base_url)  # no max_tokens in models.toml
        assert sweep(m, db).returncode == 0
        assert sim.stats()["by_max_tokens"] == {"16": 12}  # synthetic declares 16
        expected = run_stamp(registry.get("synthetic"), {"temperature": 0.0, "max_tokens": 16})
        assert query(db, "SELECT DISTINCT prompt_hash FROM results") == [(expected,)]
        # The same value written in models.toml is the same request: nothing is asked again.
        sim.reset()
        m = one_model(tmp_path / "models.toml", sim.base_url, extra="max_tokens = 16\n")
        assert sweep(m, db).returncode == 0
        assert sim.stats()["total"] == 0
        # models.toml's own value wins, and is a different stamp.
        m = one_model(tmp_path / "models.toml", sim.base_url, extra="max_tokens = 24\n")
        r = sweep(m, db)
        assert r.returncode == 2 and "different prompt" in one_error_line(r.stderr)


JUDGE_ANSWER = "Summary: 新线路下月开通，市民出行更方便。"


def test_changed_judge_model_stops_before_any_call(tmp_path, data_dir):
    db = tmp_path / "r.duckdb"
    with SimServerProcess(mode=f"fixed:{JUDGE_ANSWER}", profiles={"judge-a": {"mode": "judge:0:0"},
                                                                  "judge-b": {"mode": "judge:0:0"}}) as sim:
        def models(judge_model: str) -> Path:
            path = one_model(tmp_path / "models.toml", sim.base_url, extra="max_tokens = 64\n")
            path.write_text(path.read_text() + f'\n[judge]\nprovider = "openai"\nbase_url = "{sim.base_url}"\n'
                                               f'model = "{judge_model}"\nmax_retries = 0\n')
            return path

        args = ("--data-dir", str(data_dir), "--datasets", "lcsts", "--limit", "4", "--quiet")
        r = run_cli("sweep", str(models("judge-a")), "--db", str(db), *args)
        assert r.returncode == 0, r.stderr
        assert sim.stats()["by_model"] == {"gpt-a": 4, "judge-a": 4}
        sim.reset()
        r = run_cli("sweep", str(models("judge-b")), "--db", str(db), *args)
        assert r.returncode == 2
        assert "judge judge: model id judge-a -> judge-b" in one_error_line(r.stderr)
        assert sim.stats()["total"] == 0
        # --fresh, as the message says, asks both again, the new judge judging.
        r = run_cli("sweep", str(models("judge-b")), "--db", str(db), *args, "--fresh")
        assert r.returncode == 0, r.stderr
        assert sim.stats()["by_model"] == {"gpt-a": 4, "judge-b": 4}


def _ipv6(sim) -> str:
    """The simulator's URL with its IPv6 host in brackets, as a models file writes it."""
    port = sim.base_url.rsplit(":", 1)[1].split("/")[0]
    return f"http://[::1]:{port}/v1"


def test_a_loopback_server_serving_other_weights_after_a_restart_stops_the_sweep(tmp_path):
    db, m = tmp_path / "r.duckdb", tmp_path / "models.toml"
    with SimServerProcess(mode="gold", models=("weights-a",)) as sim:
        assert sweep(one_model(m, sim.base_url), db).returncode == 0
    with SimServerProcess(mode="gold", models=("weights-b",)) as sim:  # another free port, other weights
        r = sweep(one_model(m, sim.base_url), db)
        assert r.returncode == 2
        assert "model m1: served model weights-a -> weights-b" in one_error_line(r.stderr)
        assert sim.stats()["total"] == 0
    with SimServerProcess(mode="gold", models=("weights-a",)) as sim:  # the same weights again: nothing to ask
        r = sweep(one_model(m, sim.base_url), db)
        assert r.returncode == 0, r.stderr
        assert sim.stats()["total"] == 0


def test_rows_stored_before_the_served_model_was_recorded_are_kept_and_stamped_with_it(tmp_path):
    db, m = tmp_path / "r.duckdb", tmp_path / "models.toml"
    with SimServerProcess(mode="gold") as sim:  # lists no model: what it serves is unknown
        assert sweep(one_model(m, sim.base_url), db).returncode == 0
    with SimServerProcess(mode="gold", models=("weights-a",)) as sim:
        r = sweep(one_model(m, sim.base_url), db)
        assert r.returncode == 0, r.stderr
        assert sim.stats()["total"] == 0
    assert query(db, "SELECT DISTINCT json_extract_string(i.detail, '$.served') FROM results r "
                     "JOIN identities i USING (identity)") == [("weights-a",)]
    with SimServerProcess(mode="gold", models=("weights-b",)) as sim:
        r = sweep(one_model(m, sim.base_url), db)
        assert r.returncode == 2 and "served model weights-a -> weights-b" in one_error_line(r.stderr)


def test_an_ipv6_loopback_server_restarted_on_another_port_is_the_same_endpoint(tmp_path):
    db, m = tmp_path / "r.duckdb", tmp_path / "models.toml"
    with SimServerProcess(mode="gold", host="::1", models=("weights-a",)) as sim:
        assert sweep(one_model(m, _ipv6(sim)), db).returncode == 0
    with SimServerProcess(mode="gold", host="::1", models=("weights-a",)) as sim:
        r = sweep(one_model(m, _ipv6(sim)), db)
        assert r.returncode == 0, r.stderr
        assert sim.stats()["total"] == 0
    assert query(db, "SELECT DISTINCT json_extract_string(i.detail, '$.base_url') FROM results r "
                     "JOIN identities i USING (identity)") == [("http://[::1]/v1",)]


class VersionedServer:
    """An OpenAI-compatible chat server, in a thread, reporting `version` as the model that answered."""

    def __init__(self, version: str):
        self.version, self.calls = version, 0

    def __enter__(self) -> "VersionedServer":
        import asyncio
        import socket
        import threading

        from aiohttp import web

        async def chat(request: web.Request) -> web.Response:
            await request.read()
            self.calls += 1
            return web.json_response({
                "id": "c", "object": "chat.completion", "model": self.version,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "Answer: A"},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self.loop = asyncio.new_event_loop()
        app = web.Application()
        app.router.add_post("/v1/chat/completions", chat)
        self.runner = web.AppRunner(app)
        ready = threading.Event()

        async def serve() -> None:
            await self.runner.setup()
            await web.TCPSite(self.runner, "127.0.0.1", port).start()
            ready.set()

        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(serve(), self.loop)
        assert ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        import asyncio

        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def test_a_model_version_that_moves_under_the_same_alias_stops_the_model(tmp_path):
    db, m = tmp_path / "r.duckdb", tmp_path / "models.toml"
    with VersionedServer("gpt-x-2024-08-06") as server:
        one_model(m, server.base_url, model="gpt-x")
        assert sweep(m, db).returncode == 0
        server.version = "gpt-x-2024-11-20"  # the provider moved the alias to a new snapshot
        r = run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "24", "--quiet")
        assert r.returncode == 2
        line = one_error_line(r.stderr)
        assert "model m1: reported model version gpt-x-2024-08-06 -> gpt-x-2024-11-20" in line, line
        assert "--allow-mixed keeps both" in line
        # Nothing of the new snapshot is stored: the 12 answers of the first run are all there is.
        assert query(db, "SELECT model_version, count(*) FROM results GROUP BY 1") == [("gpt-x-2024-08-06", 12)]
        assert query(db, "SELECT outcome FROM runs ORDER BY started_at") == [("complete",), ("stopped",)]
        r = run_cli("sweep", str(m), "--db", str(db), "--datasets", "synthetic", "--limit", "24", "--quiet",
                    "--allow-mixed")
        assert r.returncode == 0, r.stderr
    assert query(db, "SELECT model_version, count(*) FROM results GROUP BY 1 ORDER BY 1") == [
        ("gpt-x-2024-08-06", 12), ("gpt-x-2024-11-20", 12)]

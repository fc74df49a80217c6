"""`python -m engine data pull|list` against a local HTTP server on 127.0.0.1.

The server mirrors raw.githubusercontent.com / huggingface.co paths under a
temporary folder holding real files copied from the team's data folder (the
tests skip without it), answers Range requests, records every request, and
can drop a connection half-way through a file.
"""

from __future__ import annotations

import asyncio
import bz2
import hashlib
import io
import json
import shutil
import socket
import threading
import zipfile
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from aiohttp import web

from benchmark import sources
from benchmark.suites.suite import load_suite
from engine.data import fetch, files
from engine.cli import main

EQ60 = "moodbench/values/mental_health/liangbiao/data/meq/EQ-60共情商量表-中文.json"
CROWS_REF = "moodbench/values/value/CrowS-Pairs_csv/crows_pairs_anonymized.csv"
GOEMO = "goemotions/data/original/test.tsv"
REFERENCE_URL = "https://raw.githubusercontent.com/QuwanAI/MoodBench/dcc444aafbb1830ff7348a12f4a4cdec807f2175/data/"


class Server:
    """Static files by URL path, with Range support; records (path, Range header) per request."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.requests: list[tuple[str, str | None]] = []
        self.cut_once: set[str] = set()  # paths whose first answer stops half-way
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def put(self, url: str, data: bytes) -> None:
        """Serve data at the path of a public URL (what --base-url keeps)."""
        path = self.root / unquote(urlsplit(url).path).lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        rng = request.headers.get("Range")
        self.requests.append((request.path, rng))
        f = self.root / request.path.lstrip("/")
        if not f.is_file():
            return web.Response(status=404)
        data = f.read_bytes()
        start = int(rng.removeprefix("bytes=").split("-")[0]) if rng else 0
        if start >= len(data) and rng:
            return web.Response(status=416, headers={"Content-Range": f"bytes */{len(data)}"})
        body = data[start:]
        resp = web.StreamResponse(status=206 if rng else 200)
        resp.content_length = len(body)
        if rng:
            resp.headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
        await resp.prepare(request)
        if request.path in self.cut_once:
            self.cut_once.discard(request.path)
            await resp.write(body[: len(body) // 2])
            request.transport.close()  # the client sees a short body
            return resp
        await resp.write(body)
        await resp.write_eof()
        return resp


@pytest.fixture
def server(tmp_path: Path):
    srv = Server(tmp_path / "www")
    srv.root.mkdir()
    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", srv.handle)
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    runner = web.AppRunner(app, access_log=None)

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        srv.port = runner.addresses[0][1]
        ready.set()
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())
        loop.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(5)
    yield srv
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


@pytest.fixture(autouse=True)
def no_retry_wait_no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fetch, "RETRY_WAIT", 0.0)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)  # the server is on loopback


def local_copy(shared: Path, dest: str) -> Path:
    """The team's copy of a destination: moodbench/ is the reference tree, the rest the originals."""
    return shared / dest


def mirror(server: Server, shared: Path, ids: list[str]) -> list[sources.Target]:
    """Serve the real files of these dataset ids at their public URL paths."""
    targets, _ = sources.resolve(sources.load(), ids)
    for t in targets:
        server.put(t.url, local_copy(shared, t.dest).read_bytes())
    return targets


def run(*argv: str) -> int:
    return main(["data", *argv])


def pull_args(server_url: str, data: Path, *extra: str) -> list[str]:
    return ["pull", "--quiet", "--data-dir", str(data), "--base-url", server_url, *extra]


# ------------------------------------------------------------------ manifest
def test_manifest_is_valid_and_covers_every_suite(data_dir: Path) -> None:
    m = sources.load()
    for suite in ("moodbench", "moodbench-reference"):
        missing = [d for d in load_suite(suite).datasets if d not in m.datasets]
        assert not missing, f"{suite}: no sources for {missing}"
    # Reference files are byte copies of the pinned commit: their hashes are those of the team's copy.
    targets, listings = sources.resolve(m, sorted(m.datasets))
    checked = 0
    for t in targets:
        local = local_copy(data_dir, t.dest)
        if t.url.startswith(REFERENCE_URL) and t.sha256 and local.is_file():
            assert hashlib.sha256(local.read_bytes()).hexdigest() == t.sha256, t.dest
            checked += 1
    assert checked > 400
    assert {t.dest for t in targets} >= {"bbq/analysis_scripts/additional_metadata.csv", "ceval/ceval-exam.zip"}
    assert any(lst.source.repo == "PersonalAILab/PersonaFeedback" for lst in listings)


def test_bad_manifest_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "sources.toml"
    bad.write_text('version = 1\n[sources.a]\nkind = "github"\nrepo = "o/r"\nrevision = "main"\ndest = "a"\n'
                   "[datasets]\n", encoding="utf-8")
    assert run("list", "--manifest", str(bad), "--datasets", "x") == 2
    assert "full commit hash" in capsys.readouterr().err


# ---------------------------------------------------------------------- pull
def test_pull_places_and_verifies_files_then_a_second_pull_fetches_nothing(
        server: Server, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = "eq60,crows_pairs,goemotions"
    targets = mirror(server, data_dir, ids.split(","))
    data = tmp_path / "data"
    assert run("list", "--data-dir", str(data), "--datasets", ids) == 0
    assert capsys.readouterr().out.count("missing") == 3

    assert run(*pull_args(server.url, data, "--datasets", ids)) == 0
    for t in targets:
        assert (data / t.dest).read_bytes() == local_copy(data_dir, t.dest).read_bytes(), t.dest
    assert (data / EQ60).is_file() and (data / "crows_pairs/data/crows_pairs_anonymized.csv").is_file()
    assert not list(data.rglob("*.part"))
    err = capsys.readouterr().err
    assert f"{len(targets)} downloaded" in err

    n = len(server.requests)
    assert run(*pull_args(server.url, data, "--datasets", ids)) == 0
    assert len(server.requests) == n  # nothing fetched: every file was there and verified
    assert f"0 downloaded (0 bytes), {len(targets)} already present and verified" in capsys.readouterr().err

    assert run("list", "--data-dir", str(data), "--datasets", ids) == 0
    out = capsys.readouterr().out
    assert out.count("complete") == 3 + 1 and "3 of 3 datasets complete" in out


def test_corrupted_file_is_rejected_and_named(
        server: Server, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    targets = mirror(server, data_dir, ["eq60"])
    good = local_copy(data_dir, EQ60).read_bytes()
    server.put(targets[0].url, good[:100] + b"X" + good[101:])  # same size, one byte changed
    data = tmp_path / "data"
    assert run(*pull_args(server.url, data, "--datasets", "eq60")) == 1
    err = capsys.readouterr().err
    assert f"error: {data / EQ60}: checksum mismatch: sha256 " in err
    assert targets[0].sha256 in err and "partial file was deleted" in err
    assert not (data / EQ60).exists() and not list(data.rglob("*.part"))


def test_interrupted_download_resumes_with_a_range_request(
        server: Server, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    targets = {t.dest: t for t in mirror(server, data_dir, ["crows_pairs", "goemotions", "eq60"])}
    data = tmp_path / "data"
    # 1. an earlier run was killed: half of the file is in the .part
    whole = local_copy(data_dir, CROWS_REF).read_bytes()
    part = data / (CROWS_REF + ".part")
    part.parent.mkdir(parents=True)
    part.write_bytes(whole[:40000])
    # 2. the connection drops half-way through another file
    goemo_path = unquote(urlsplit(targets[GOEMO].url).path)
    server.cut_once.add(goemo_path)
    # 3. a stale .part holds other bytes: the resumed file fails its check and is fetched again whole
    stale = data / (EQ60 + ".part")
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"old upstream bytes")

    assert run(*pull_args(server.url, data, "--datasets", "crows_pairs,goemotions,eq60")) == 0
    crows_path = unquote(urlsplit(targets[CROWS_REF].url).path)
    assert (crows_path, "bytes=40000-") in server.requests
    goemo = [r for p, r in server.requests if p == goemo_path]
    assert goemo[0] is None and goemo[1].startswith("bytes=") and goemo[1] != "bytes=0-"
    assert (data / CROWS_REF).read_bytes() == whole
    assert (data / GOEMO).read_bytes() == local_copy(data_dir, GOEMO).read_bytes()
    eq60_path = unquote(urlsplit(targets[EQ60].url).path)
    assert [r for p, r in server.requests if p == eq60_path] == ["bytes=18-", None]
    assert (data / EQ60).read_bytes() == local_copy(data_dir, EQ60).read_bytes()
    assert "on disk" not in capsys.readouterr().err


# The head of the test manifests: BBQ's GitHub source, pinned.
BBQ_SOURCE = """version = 1
[sources.bbq]
kind = "github"
repo = "nyu-mll/BBQ"
revision = "bea11bd97d79217245b5871acd247b9d6eb24598"
dest = "bbq"
"""


def dead_url() -> str:
    """A port nobody listens on: connection refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_unreachable_host_names_each_file_and_its_destination(
        data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dead = dead_url()
    data = tmp_path / "data"
    ids = ["eq60", "crows_pairs", "personafeedback"]
    assert run(*pull_args(dead, data, "--datasets", ",".join(ids))) == 3
    out, err = capsys.readouterr()
    assert "unreachable (offline, or blocked" in err
    targets, listings = sources.resolve(sources.load(), ids)
    lines = out.splitlines()
    assert len(lines) == len(targets) + len(listings)
    for t in targets:
        assert f"  {t.url} -> {data / t.dest}" in lines
    assert any("huggingface.co/datasets/PersonalAILab/PersonaFeedback/tree/" in ln
               and f"-> {data / 'personafeedback'}/" in ln for ln in lines)


def test_unreachable_optional_file_is_a_note_when_the_needed_data_is_present(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Offline with every needed file present: exit 0, and no line says error."""
    dead = dead_url()
    needed = b"id,question\n1,q\n"
    manifest = tmp_path / "sources.toml"
    manifest.write_text(BBQ_SOURCE + f"""[datasets.bbq]
files = [
  {{ source = "bbq", path = "a.csv", size = {len(needed)}, sha256 = "{hashlib.sha256(needed).hexdigest()}" }},
  {{ source = "bbq", path = "extra/notes.csv", optional = true }},
]
""", encoding="utf-8")
    data = tmp_path / "data"
    (data / "bbq").mkdir(parents=True)
    (data / "bbq/a.csv").write_bytes(needed)
    assert run(*pull_args(dead, data, "--manifest", str(manifest), "--datasets", "bbq")) == 0
    out, err = capsys.readouterr()
    assert "error" not in err.lower() and not out.strip(), err
    assert "note: 1 optional file(s) not downloaded" in err and str(data / "bbq/extra/notes.csv") in err
    assert "1 already present and verified" in err


# ------------------------------------------- a manifest of the test's own
def test_trust_on_first_download_hub_listing_and_zip(
        server: Server, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bbq = (data_dir / "bbq/analysis_scripts/additional_metadata.csv").read_bytes()
    age = (data_dir / "bbq/data/Age.jsonl").read_bytes()
    persona = b'{"Name": "A"}\n'
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("val/a.csv", "id,question\n1,q\n")
        z.writestr("dev/a.csv", "id,question\n")
    archive = buf.getvalue()
    text = "ctx\n0\nend a\n" * 50
    manifest = tmp_path / "sources.toml"
    manifest.write_text(BBQ_SOURCE + f"""[sources.hub]
kind = "hf"
repo = "Org/Feedback"
revision = "e69b124ade0f52c51802be2f4fae094b19e8a7ef"
fallback_revision = "main"
dest = "feedback"
[datasets.bbq]
files = [
  {{ source = "bbq", path = "analysis_scripts/additional_metadata.csv" }},
  {{ source = "bbq", path = "text.txt.bz2", unpack = "bz2" }},
  {{ source = "bbq", path = "pack.zip", dest = "zipped/pack.zip", unpack = "zip", size = {len(archive)}, sha256 = "{hashlib.sha256(archive).hexdigest()}" }},
]
[datasets.feedback]
files = [{{ source = "hub", glob = "data/*.jsonl" }}, {{ source = "hub", glob = "persona/*.json" }}]
[datasets.extra]
files = [{{ source = "bbq", path = "not/there.csv", optional = true }}]
""", encoding="utf-8")
    gh = "https://raw.githubusercontent.com/nyu-mll/BBQ/bea11bd97d79217245b5871acd247b9d6eb24598"
    server.put(f"{gh}/analysis_scripts/additional_metadata.csv", bbq)
    server.put(f"{gh}/pack.zip", archive)
    server.put(f"{gh}/text.txt.bz2", bz2.compress(text.encode()))
    # The Hub does not know the pinned revision (404), so the listing of `main` is used.
    listing = [
        {"type": "directory", "oid": "0" * 40, "size": 0, "path": "data"},
        {"type": "file", "oid": "1" * 40, "size": len(age), "path": "data/general/Age.jsonl",
         "lfs": {"oid": hashlib.sha256(age).hexdigest(), "size": len(age), "pointerSize": 130}},
        {"type": "file", "oid": hashlib.sha1(b"blob %d\0" % len(persona) + persona).hexdigest(),
         "size": len(persona), "path": "persona/u1.json"},
        {"type": "file", "oid": "2" * 40, "size": 5, "path": "README.md"},
    ]
    server.put("https://huggingface.co/api/datasets/Org/Feedback/tree/main", json.dumps(listing).encode())
    hub = "https://huggingface.co/datasets/Org/Feedback/resolve/main"
    server.put(f"{hub}/data/general/Age.jsonl", age)
    server.put(f"{hub}/persona/u1.json", persona)
    data = tmp_path / "data"
    args = pull_args(server.url, data, "--manifest", str(manifest), "--datasets", "bbq,feedback")

    assert run(*args) == 0
    err = capsys.readouterr().err
    assert "has no revision e69b124ade0f52c51802be2f4fae094b19e8a7ef; used main" in err
    assert (data / "bbq/analysis_scripts/additional_metadata.csv").read_bytes() == bbq
    assert (data / "bbq/zipped/val/a.csv").read_text() == "id,question\n1,q\n"
    assert (data / "bbq/text.txt").read_text() == text
    assert (data / "feedback/data/general/Age.jsonl").read_bytes() == age
    assert (data / "feedback/persona/u1.json").read_bytes() == persona
    assert not (data / "feedback/README.md").exists()
    lock = json.loads((data / files.LOCK_NAME).read_text())
    assert lock["files"]["bbq/analysis_scripts/additional_metadata.csv"]["sha256"] == hashlib.sha256(bbq).hexdigest()
    assert next(iter(lock["listings"].values()))["revision"] == "main"

    n = len(server.requests)
    assert run(*args) == 0  # the listing comes from the lock: no request at all
    assert len(server.requests) == n

    # Upstream changed the unpinned file: the lock rejects the new bytes and says how to accept them.
    server.put(f"{gh}/analysis_scripts/additional_metadata.csv", bbq + b"extra\n")
    (data / "bbq/analysis_scripts/additional_metadata.csv").unlink()
    shutil.rmtree(data / "bbq/zipped/val")
    assert run(*args) == 1
    err = capsys.readouterr().err
    assert "checksum mismatch" in err and "delete the entry for bbq/analysis_scripts/additional_metadata.csv" in err
    assert (data / "bbq/zipped/val/a.csv").is_file()  # a verified archive is unpacked again

    # An optional file that fails is a note, not an error.
    assert run(*pull_args(server.url, data, "--manifest", str(manifest), "--datasets", "extra")) == 0
    err = capsys.readouterr().err
    assert "note (optional file, not needed to run)" in err and "error" not in err


def test_unknown_dataset_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("pull", "--quiet", "--data-dir", str(tmp_path), "--datasets", "nope") == 2
    assert "no download source known for nope" in capsys.readouterr().err

"""Downloading manifest files: verified, resumable, a few at a time.

A file is written to ``<dest>.part``; an interrupted transfer continues from the
``.part`` size with an HTTP Range request. Only a file whose size and hashes
check out is renamed into place, so a file at its destination is always whole.
Files the manifest has no sha256 for are trusted on first download and their
hash is kept in ``<data-dir>/.engine-data.lock.json`` (with the Hub listings
used), so every later pull checks them and needs no network when all is there.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, Self
from urllib.parse import urlsplit

import aiohttp
import msgspec
import orjson
from yarl import URL

from benchmark.sources import (
    Listing,
    Source,
    Target,
    listing_url,
    rebase,
)
from engine.data.files import LOCK_NAME, UNPACK, FetchFailed, Lock, check, listed_targets
from engine.run.workers import run_workers

CHUNK = 1 << 16
RETRIES = 3
RETRY_WAIT = 1.0  # seconds before the 2nd attempt, doubled after; tests set 0
CONNECT_TIMEOUT = 20.0
READ_TIMEOUT = 60.0
RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})


class HostDown(Exception):
    """The host cannot be reached at all (refused, DNS, TLS, timeouts): offline or blocked."""


class Outcome(msgspec.Struct):
    kind: str  # "downloaded" | "present" | "failed" | "unreachable"
    item: Target | Listing
    message: str = ""
    bytes: int = 0


class DownloadProgress:
    """DownloadProgress callbacks; this one does nothing (engine.data.pull draws a rich one)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None: ...
    def set_total(self, files: int) -> None: ...
    def start(self, name: str, total: int | None, done: int) -> Any: ...
    def advance(self, handle: Any, n: int) -> None: ...
    def stop(self, handle: Any) -> None: ...
    def file_done(self) -> None: ...


class Puller:
    def __init__(self, data_dir: Path, session: aiohttp.ClientSession, base_url: str | None,
                 progress: DownloadProgress) -> None:
        self.data_dir = data_dir
        self.session = session
        self.base_url = base_url
        self.progress = progress
        self.lock = Lock(data_dir / LOCK_NAME)
        self.down: dict[str, str] = {}  # host -> why it is unreachable; its other files are not tried
        self.warnings: list[str] = []
        self.bad_listings: dict[str, tuple[str, str]] = {}

    # ---------------------------------------------------------------- listings
    async def expand(self, lst: Listing) -> tuple[list[Target], Outcome | None]:
        """The files of a Hub listing that match its glob (the listing is cached in the lock)."""
        src = lst.source
        key = listing_url(src, src.revision)
        cached = self.lock.listings.get(key)
        if key in self.bad_listings:  # one request per repository, whatever the number of globs
            kind, why = self.bad_listings[key]
            return [], Outcome(kind, lst, why)
        if cached is None:
            try:
                cached = await self._listing(src)
            except (HostDown, FetchFailed) as e:
                kind = "unreachable" if isinstance(e, HostDown) else "failed"
                self.bad_listings[key] = (kind, str(e))
                return [], Outcome(kind, lst, str(e))
            self.lock.listings[key] = cached
            self.lock.dirty = True
            self.lock.save()
        targets, unsafe = listed_targets(lst, cached)
        self.warnings += [f"{src.repo}: skipping unsafe path {p!r} in the Hub listing" for p in unsafe]
        if not targets:
            return [], Outcome("failed", lst, f"no file of {src.repo}@{cached['revision']} matches {lst.glob!r}")
        return targets, None

    async def _listing(self, src: Source) -> dict:
        for rev in filter(None, (src.revision, src.fallback_revision)):
            files = await self._list_pages(rebase(listing_url(src, rev), self.base_url))
            if files is not None:
                if rev != src.revision:
                    self.warnings.append(f"{src.repo}: the Hub has no revision {src.revision}; used {rev}")
                return {"revision": rev, "files": files}
        tried = " or ".join(filter(None, (src.revision, src.fallback_revision)))
        raise FetchFailed(f"{src.repo} at revision {tried}: not found on the Hub (HTTP 404)")

    async def _list_pages(self, url: str | None) -> list[dict] | None:
        files: list[dict] = []
        while url:
            host = urlsplit(url).netloc
            try:
                async with self.session.get(URL(url, encoded=True)) as r:
                    if r.status == 404:
                        return None
                    if r.status != 200:
                        raise FetchFailed(f"HTTP {r.status} {r.reason} for {url}")
                    page = orjson.loads(await r.read())
                    link = r.links.get("next")  # the Hub pages long listings
                    nxt = link.get("url") if link is not None else None
                    if not isinstance(page, list):
                        raise FetchFailed(f"{url}: the listing is not a JSON list")
            except aiohttp.ClientConnectorError as e:
                raise HostDown(f"cannot connect to {host} ({e.os_error or e})") from None
            except (TimeoutError, aiohttp.ClientError) as e:
                raise HostDown(f"{host}: {type(e).__name__} {e}".strip()) from None
            except orjson.JSONDecodeError:
                raise FetchFailed(f"{url}: the listing is not JSON") from None
            for entry in page:
                if entry.get("type") != "file":
                    continue
                lfs = entry.get("lfs")  # LFS files: sha256 of the content; others: git blob id
                files.append({"path": entry["path"], "size": entry["size"],
                              "sha256": lfs["oid"] if lfs else "", "git_sha1": "" if lfs else entry.get("oid", "")})
            url = rebase(str(nxt), self.base_url) if nxt else None
        return files

    # ------------------------------------------------------------------- files
    async def one(self, t: Target) -> Outcome:
        path = self.data_dir / t.dest
        expected = t.sha256 or self.lock.expected(t)
        if path.is_file():
            problem, sha = await asyncio.to_thread(check, path, t, expected)
            if problem is None:
                if not expected:  # placed by hand or by an older pull: pin what is there
                    self.lock.record(t, sha, path.stat().st_size)
                return await self._unpack(t, path, Outcome("present", t))
            self.warnings.append(f"{t.dest} on disk does not match ({problem}); downloading it again")
        url = rebase(t.url, self.base_url)
        host = urlsplit(url).netloc
        part = path.with_name(path.name + ".part")
        resumed = part.is_file()
        for _ in range(2):  # a second go, from scratch, only if a resumed .part turned out bad
            if host in self.down:
                return Outcome("unreachable", t, self.down[host])
            try:
                got = await self._download(t, url, part)
            except HostDown as e:
                self.down.setdefault(host, str(e))
                return Outcome("unreachable", t, str(e))
            except FetchFailed as e:
                return Outcome("failed", t, str(e))
            problem, sha = await asyncio.to_thread(check, part, t, expected)
            if not problem or not resumed:
                break
            part.unlink(missing_ok=True)  # an old .part of other bytes (the upstream file changed)
            resumed = False
        if problem:
            part.unlink(missing_ok=True)
            msg = f"{problem}; downloaded from {url}; the partial file was deleted"
            if expected and not t.sha256:
                msg += (f". The hash was pinned by {self.lock.path} on an earlier download: the upstream file "
                        f"changed. To accept the new bytes, delete the entry for {t.dest} from that file")
            return Outcome("failed", t, msg)
        os.replace(part, path)
        if not t.sha256:
            self.lock.record(t, sha, path.stat().st_size)
        return await self._unpack(t, path, Outcome("downloaded", t, bytes=got))

    async def _unpack(self, t: Target, path: Path, ok: Outcome) -> Outcome:
        if not t.unpack:
            return ok
        try:
            # A new download replaces what an older archive left; a present one only fills gaps.
            await asyncio.to_thread(UNPACK[t.unpack], path, ok.kind == "downloaded")
        except FetchFailed as e:
            return Outcome("failed", t, str(e))
        return ok

    async def _download(self, t: Target, url: str, part: Path) -> int:
        """Fetch url into part, resuming from its current size; the number of bytes received."""
        host = urlsplit(url).netloc
        last, received, timeouts = "", 0, 0
        for attempt in range(RETRIES):
            if attempt:
                await asyncio.sleep(RETRY_WAIT * 2 ** (attempt - 1))
            offset = part.stat().st_size if part.exists() else 0
            headers = {"Range": f"bytes={offset}-"} if offset else {}
            try:
                async with self.session.get(URL(url, encoded=True), headers=headers) as r:
                    if r.status == 416 and offset:
                        if _range_total(r.headers.get("Content-Range", "")) == offset:
                            return received  # the .part was already whole: a kill hit before the rename
                        part.unlink()
                        last = "HTTP 416 for the partial file: starting over"
                        continue
                    if r.status in RETRY_STATUS:
                        last = f"HTTP {r.status} {r.reason}"
                        continue
                    if r.status not in (200, 206):
                        raise FetchFailed(f"HTTP {r.status} {r.reason} for {url}")
                    append = r.status == 206 and _range_start(r.headers.get("Content-Range", "")) == offset
                    done = offset if append else 0  # a 200 answers a Range with the whole file
                    total = done + r.content_length if r.content_length is not None else t.size
                    handle = self.progress.start(t.dest, total, done)
                    part.parent.mkdir(parents=True, exist_ok=True)  # only once the host answered
                    try:
                        with part.open("ab" if append else "wb") as f:
                            async for chunk in r.content.iter_chunked(CHUNK):
                                f.write(chunk)
                                received += len(chunk)
                                self.progress.advance(handle, len(chunk))
                    finally:
                        self.progress.stop(handle)
                    return received
            except aiohttp.ClientConnectorError as e:
                raise HostDown(f"cannot connect to {host} ({e.os_error or e})") from None
            except TimeoutError:
                timeouts += 1
                last = "timed out"
            except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError) as e:
                last = f"connection dropped ({type(e).__name__})"  # the next attempt resumes from the .part
        if timeouts == RETRIES:
            raise HostDown(f"{host} timed out {RETRIES} times")
        raise FetchFailed(f"{last} ({RETRIES} attempts) for {url}")


def _range_start(content_range: str) -> int | None:
    # "bytes 100-199/200"
    try:
        return int(content_range.split()[1].split("-")[0])
    except (IndexError, ValueError):
        return None


def _range_total(content_range: str) -> int | None:
    # "bytes */200"
    try:
        return int(content_range.rsplit("/", 1)[1])
    except (IndexError, ValueError):
        return None


async def pull(targets: list[Target], listings: list[Listing], data_dir: Path, *, base_url: str | None = None,
               concurrency: int = 4, progress: DownloadProgress | None = None) -> tuple[list[Outcome], list[str]]:
    """Bring every target (and every listed Hub file) to data_dir; (outcomes, warnings)."""
    progress = progress or DownloadProgress()
    # connect covers DNS too; no total: a big file may take long, sock_read catches a stall.
    timeout = aiohttp.ClientTimeout(total=None, connect=CONNECT_TIMEOUT, sock_read=READ_TIMEOUT)
    # identity encoding: Range offsets and hashes are about the stored bytes, not a gzip stream.
    headers = {"Accept-Encoding": "identity", "User-Agent": "moodengine-data/1"}
    connector = aiohttp.TCPConnector(limit=max(1, concurrency))
    # trust_env: HTTPS_PROXY / NO_PROXY are honoured, as users behind a proxy expect.
    async with aiohttp.ClientSession(timeout=timeout, auto_decompress=False, headers=headers,
                                     connector=connector, trust_env=True) as session:
        puller = Puller(data_dir, session, base_url, progress)
        outcomes: list[Outcome] = []
        targets = list(targets)
        known = {t.dest for t in targets}
        for lst in listings:
            more, problem = await puller.expand(lst)
            if problem:
                outcomes.append(problem)
            targets += [t for t in more if t.dest not in known]
            known |= {t.dest for t in more}
        progress.set_total(len(targets))
        done: list[Outcome | None] = [None] * len(targets)

        async def one(job: tuple[int, Target]) -> None:
            i, t = job
            done[i] = await puller.one(t)
            progress.file_done()

        try:  # the run's worker pool: at most `concurrency` files in flight
            await run_workers(enumerate(targets), width=max(1, concurrency), handle=one)
        finally:
            puller.lock.save()
    return outcomes + [o for o in done if o is not None], puller.warnings  # in manifest order

"""A fetched file on disk: checked against its size and hashes, unpacked, and the lock file that keeps
the hashes the manifest lacks and the Hub listings used (engine/data/fetch.py downloads)."""

from __future__ import annotations

import bz2
import hashlib
import os
import shutil
import zipfile
from fnmatch import fnmatchcase
from pathlib import Path

import orjson

from benchmark.sources import Listing, Target, dest_of, file_url, safe_relpath

LOCK_NAME = ".engine-data.lock.json"


class FetchFailed(Exception):
    """The host answered, but not with the file (HTTP error, repeated drops, bad archive)."""


class Lock:
    """Hashes the manifest lacks (trust on first download) and cached Hub listings."""

    def __init__(self, path: Path) -> None:
        self.path = path
        doc: dict = {}
        if path.is_file():
            try:
                doc = orjson.loads(path.read_bytes())
            except orjson.JSONDecodeError as e:
                raise FetchFailed(f"{path}: not valid JSON ({e}); delete it to start a new lock") from None
        self.files: dict[str, dict] = doc.get("files", {})
        self.listings: dict[str, dict] = doc.get("listings", {})
        self.dirty = False

    def expected(self, t: Target) -> str:
        """The pinned sha256 of a file, if its lock entry is for the same URL."""
        e = self.files.get(t.dest)
        return e["sha256"] if e and e.get("url") == t.url else ""

    def record(self, t: Target, sha256: str, size: int) -> None:
        self.files[t.dest] = {"url": t.url, "sha256": sha256, "size": size}
        self.dirty = True
        self.save()

    def save(self) -> None:
        if not self.dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        doc = {"version": 1, "files": dict(sorted(self.files.items())), "listings": self.listings}
        tmp.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
        os.replace(tmp, self.path)  # atomic: a kill never leaves half a lock


def check(path: Path, t: Target, expected: str) -> tuple[str | None, str]:
    """(what is wrong or None, sha256) of a file against its size and hashes."""
    size = path.stat().st_size
    if t.size is not None and size != t.size:
        return f"size mismatch: {size} bytes, expected {t.size}", ""
    sha = hashlib.sha256()
    blob = hashlib.sha1(b"blob %d\0" % size) if t.git_sha1 else None  # git's object id of the bytes
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            sha.update(chunk)
            if blob:
                blob.update(chunk)
    got = sha.hexdigest()
    if expected and got != expected:
        return f"checksum mismatch: sha256 {got}, expected {expected}", got
    if blob and blob.hexdigest() != t.git_sha1:
        return f"checksum mismatch: git blob id {blob.hexdigest()}, expected {t.git_sha1}", got
    return None, got


def unpack_zip(path: Path, force: bool = False) -> int:
    """Extract a zip next to itself; members already there with the right size are kept unless force."""
    n = 0
    try:
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                if info.is_dir():
                    continue
                if not safe_relpath(info.filename):
                    raise FetchFailed(f"{path}: refusing unsafe member {info.filename!r}")
                out = path.parent / info.filename
                if not force and out.is_file() and out.stat().st_size == info.file_size:
                    continue
                out.parent.mkdir(parents=True, exist_ok=True)
                tmp = out.with_name(out.name + ".part")
                with z.open(info) as src, tmp.open("wb") as dst:
                    shutil.copyfileobj(src, dst)  # zipfile checks each member's CRC
                os.replace(tmp, out)
                n += 1
    except zipfile.BadZipFile as e:
        raise FetchFailed(f"{path}: bad zip archive ({e})") from None
    return n


def listed_targets(lst: Listing, cached: dict) -> tuple[list[Target], list[str]]:
    """The files of a cached Hub listing that match the listing's glob; (targets, unsafe paths)."""
    src, rev = lst.source, cached["revision"]
    targets, unsafe = [], []
    for f in cached["files"]:
        rel = f["path"][len(src.root) + 1:] if src.root else f["path"]
        if not fnmatchcase(rel, lst.glob):
            continue
        if not safe_relpath(rel):
            unsafe.append(rel)
            continue
        targets.append(Target(dataset=lst.dataset, dest=dest_of(src, rel), url=file_url(src, rel, rev),
                              size=f["size"], sha256=f.get("sha256", ""), git_sha1=f.get("git_sha1", ""),
                              optional=lst.optional))
    return targets, unsafe


def unpack_bz2(path: Path, force: bool = False) -> int:
    """Decompress x.bz2 to x beside it (again only if x is missing, unless force)."""
    out = path.with_suffix("")
    if out.is_file() and not force:
        return 0
    tmp = out.with_name(out.name + ".part")
    try:
        with bz2.open(path, "rb") as src, tmp.open("wb") as dst:
            shutil.copyfileobj(src, dst)  # bz2 checks its own block CRCs
    except (OSError, EOFError) as e:
        tmp.unlink(missing_ok=True)
        raise FetchFailed(f"{path}: bad bz2 file ({e})") from None
    os.replace(tmp, out)
    return 1


UNPACK = {"zip": unpack_zip, "bz2": unpack_bz2}

"""The download manifest (benchmark/sources.toml): where each dataset's files come from.

The manifest is data; this module only reads it, checks it and turns a list of
dataset ids into concrete downloads (``Target``: URL -> destination under
``--data-dir``) plus Hub listings to expand at pull time (``Listing``).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path, PurePosixPath
from typing import Literal
from urllib.parse import quote, urlsplit

import msgspec

from benchmark.errors import UserError

MANIFEST = Path(__file__).with_name("sources.toml")

_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX40 = re.compile(r"[0-9a-f]{40}")


class SourcesError(UserError):
    """The manifest is malformed; the message names the file and the entry."""


class Source(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A repository at a pinned revision."""

    kind: Literal["github", "hf"]
    repo: str
    revision: str
    dest: str  # folder under --data-dir ("" = the data dir itself)
    root: str = ""  # folder inside the repository that file paths are relative to
    fallback_revision: str = ""  # hf listings only: used if the Hub does not know `revision`


class FileSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    source: str
    path: str = ""
    glob: str = ""  # hf only, instead of path: files of the Hub's listing that match
    dest: str = ""  # name inside the source's dest folder; default: path
    size: int | None = None
    sha256: str = ""  # empty: trust on first download, then pinned by the lock file
    git_sha1: str = ""
    unpack: Literal["", "zip", "bz2"] = ""
    optional: bool = False


class Entry(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    files: tuple[FileSpec, ...] = ()
    uses: tuple[str, ...] = ()


class Manifest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    version: int
    sources: dict[str, Source]
    datasets: dict[str, Entry]


class Target(msgspec.Struct, frozen=True):
    """One file to have: its public URL and where it goes (relative to --data-dir)."""

    dataset: str
    dest: str
    url: str
    size: int | None = None
    sha256: str = ""
    git_sha1: str = ""
    unpack: str = ""
    optional: bool = False


class Listing(msgspec.Struct, frozen=True):
    """A glob over a Hub repository's file list, expanded when pulling."""

    dataset: str
    source: Source
    glob: str
    optional: bool = False

    @property
    def dest(self) -> str:
        return self.source.dest


def load(path: Path = MANIFEST) -> Manifest:
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
        manifest = msgspec.convert(doc, Manifest)
    except (OSError, UnicodeDecodeError) as e:
        raise SourcesError(f"{path}: cannot read: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise SourcesError(f"{path}: {e}") from None
    except msgspec.ValidationError as e:
        raise SourcesError(f"{path}: {e}") from None
    _check(manifest, str(path))
    return manifest


def _check(m: Manifest, where: str) -> None:
    if m.version != 1:
        raise SourcesError(f"{where}: unsupported version {m.version}")
    for name, declared in m.sources.items():
        for part in (declared.dest, declared.root):
            if part:
                _safe(part, f"{where}: sources.{name}")
        if declared.kind == "github" and not _HEX40.fullmatch(declared.revision):
            raise SourcesError(f"{where}: sources.{name}: a GitHub revision must be a full commit hash")
    seen: dict[str, str] = {}
    for ds, entry in m.datasets.items():
        at = f"{where}: datasets.{ds}"
        for u in entry.uses:
            if u not in m.datasets:
                raise SourcesError(f"{at}: uses unknown entry {u!r}")
        for i, f in enumerate(entry.files):
            fat = f"{at}.files[{i}]"
            src = m.sources.get(f.source)
            if src is None:
                raise SourcesError(f"{fat}: unknown source {f.source!r}")
            if bool(f.path) == bool(f.glob):
                raise SourcesError(f"{fat}: give exactly one of path and glob")
            if f.glob and (src.kind != "hf" or f.dest or f.unpack or f.sha256 or f.git_sha1 or f.size is not None):
                raise SourcesError(f"{fat}: glob is for hf sources only and takes no dest, unpack or hashes")
            if f.sha256 and not _HEX64.fullmatch(f.sha256):
                raise SourcesError(f"{fat}: sha256 must be 64 lower-case hex digits")
            if f.unpack == "bz2" and not f.path.endswith(".bz2"):
                raise SourcesError(f"{fat}: unpack = \"bz2\" needs a path ending in .bz2")
            if f.git_sha1 and not _HEX40.fullmatch(f.git_sha1):
                raise SourcesError(f"{fat}: git_sha1 must be 40 lower-case hex digits")
            if f.path:
                _safe(f.path, fat)
                dest = dest_of(src, f.dest or f.path)
                # Two entries may name one file (shared folders), but never two sources for one place.
                url = file_url(src, f.path)
                if seen.setdefault(dest, url) != url:
                    raise SourcesError(f"{fat}: {dest} already comes from {seen[dest]}")


def _safe(rel: str, where: str) -> str:
    """A relative POSIX path that stays inside its folder."""
    p = PurePosixPath(rel)
    if not rel or "\\" in rel or p.is_absolute() or any(part in ("..", "") for part in rel.split("/")):
        raise SourcesError(f"{where}: unsafe path {rel!r}")
    return rel


def safe_relpath(rel: str) -> bool:
    try:
        _safe(rel, "")
    except SourcesError:
        return False
    return True


def dest_of(src: Source, rel: str) -> str:
    return f"{src.dest}/{rel}" if src.dest else rel


def file_url(src: Source, path: str, revision: str | None = None) -> str:
    """The public URL of a file of a source (path below the source's root)."""
    full = f"{src.root}/{path}" if src.root else path
    rev = quote(revision or src.revision, safe="")  # refs/convert/parquet -> refs%2Fconvert%2Fparquet
    if src.kind == "github":
        return f"https://raw.githubusercontent.com/{src.repo}/{rev}/{quote(full)}"
    return f"https://huggingface.co/datasets/{src.repo}/resolve/{rev}/{quote(full)}"


def listing_url(src: Source, revision: str) -> str:
    """The Hub API call that lists every file of the repository below the source's root."""
    tail = f"/{quote(src.root)}" if src.root else ""
    return f"https://huggingface.co/api/datasets/{src.repo}/tree/{quote(revision, safe='')}{tail}?recursive=true"


def browse_url(src: Source) -> str:
    """Where a person finds a Hub repository's files (for the offline message)."""
    return f"https://huggingface.co/datasets/{src.repo}/tree/{quote(src.revision, safe='')}"


def rebase(url: str, base: str | None) -> str:
    """Replace scheme and host with a mirror's (--base-url); the path and query stay."""
    if not base:
        return url
    parts = urlsplit(url)
    return base.rstrip("/") + parts.path + (f"?{parts.query}" if parts.query else "")


def resolve(m: Manifest, ids: list[str]) -> tuple[list[Target], list[Listing]]:
    """Every file the given dataset ids need, each destination once, in manifest order."""
    targets: dict[str, Target] = {}
    listings: dict[tuple[str, str], Listing] = {}
    for ds in ids:
        for name in _closure(m, ds):
            for f in m.datasets[name].files:
                src = m.sources[f.source]
                if f.glob:
                    listings.setdefault((f.source, f.glob), Listing(ds, src, f.glob, f.optional))
                    continue
                dest = dest_of(src, f.dest or f.path)
                targets.setdefault(dest, Target(
                    dataset=ds, dest=dest, url=file_url(src, f.path), size=f.size, sha256=f.sha256,
                    git_sha1=f.git_sha1, unpack=f.unpack, optional=f.optional))
    return list(targets.values()), list(listings.values())


def _closure(m: Manifest, ds: str) -> list[str]:
    """The entry and every entry it uses, each once (a `uses` cycle is harmless)."""
    order: list[str] = []
    stack = [ds]
    while stack:
        name = stack.pop()
        if name not in order:
            order.append(name)
            stack.extend(reversed(m.datasets[name].uses))
    return order

"""What the engine can always make again, kept per machine: a dataset's seeded sample.

Reading a dataset's whole pool (parsing its JSON or CSV) and hashing every id to keep the sample
costs 20-100 ms per dataset on every run, for the same few hundred records. An entry holds the
sample of (dataset, limit, seed), keyed by

- the state of the files the adapter may read: path, size and modification time of every file
  under the folder its data was found in and under the dataset's own folder (bbq reads a metadata
  file beside its data), so a changed, added or removed file misses;
- the loader's version: a hash of benchmark/'s source (every adapter, loader and dataset declaration;
  any change there misses) and FORMAT.

An entry is kept only when it reads back equal to what it stores (a record msgpack cannot hold as it
is, a tuple or a NaN, is never cached). A missing, corrupt or partial entry is made again; entries
are written to a temporary file and renamed, so concurrent runs each leave a whole one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import uuid
from pathlib import Path
from typing import Any, Callable

import msgspec

from benchmark.dataset import Dataset
from benchmark.loaders import locate

FORMAT = 1
_BENCHMARK = Path(__file__).parent
_source: list[str] = []


def cache_dir() -> Path:
    """$ENGINE_CACHE_DIR, else $XDG_CACHE_HOME/moodengine, else ~/.cache/moodengine."""
    if os.environ.get("ENGINE_CACHE_DIR"):
        return Path(os.environ["ENGINE_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "moodengine"


def source_digest() -> str:
    if not _source:
        h = hashlib.sha256(str(FORMAT).encode())
        for f in sorted(_BENCHMARK.rglob("*.py")):
            h.update(b"\0" + str(f.relative_to(_BENCHMARK)).encode() + b"\0" + f.read_bytes())
        _source.append(h.hexdigest())
    return _source[0]


def _files_state(ds: Dataset, data_dir: Path) -> list[tuple[str, int, int]]:
    _, root, _ = locate(ds.files, data_dir, ds.id)  # DataMissing: not cached, the adapter says it
    folders = {root, data_dir / ds.id, *(data_dir / (f.folder or ds.id) for f in ds.files)}
    out = []
    for folder in sorted(folders):
        for here, dirs, files in os.walk(folder):
            dirs.sort()
            for name in sorted(files):
                st = os.stat(os.path.join(here, name))
                out.append((os.path.join(here, name), st.st_size, st.st_mtime_ns))
    return out


def cached_sample(ds: Dataset, data_dir: Path, limit: int | None, seed: int,
                  make: Callable[[], list[tuple[str, Any]]]) -> list[tuple[str, Any]]:
    """``make()`` (the seeded sample of ds's records), or the stored result of the same call on the same files."""
    try:
        key = msgspec.msgpack.encode([FORMAT, source_digest(), type(ds).__module__, type(ds).__qualname__,
                                      ds.id, limit, seed, str(data_dir.resolve()), _files_state(ds, data_dir)])
        path = cache_dir() / "samples" / f"{ds.id}-{hashlib.sha256(key).hexdigest()[:32]}.msgpack"
    except Exception:  # noqa: BLE001 - no key (no files where the declaration says, say): the adapter's own way
        return make()
    with contextlib.suppress(OSError, msgspec.MsgspecError, ValueError, TypeError):
        stored_key, records = msgspec.msgpack.decode(path.read_bytes())
        if stored_key == key:
            return [(item_id, raw) for item_id, raw in records]
    chosen = make()
    _store(path, key, chosen)
    return chosen


def _store(path: Path, key: bytes, chosen: list[tuple[str, Any]]) -> None:
    try:
        body = msgspec.msgpack.encode([key, [[item_id, raw] for item_id, raw in chosen]])
        if [tuple(r) for r in msgspec.msgpack.decode(body)[1]] != chosen:
            return  # it would not read back as it is
    except (msgspec.MsgspecError, TypeError, ValueError, OverflowError):
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(body)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()

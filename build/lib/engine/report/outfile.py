"""Where a report page or an export is written: a checked target, filled under a temporary name and renamed.

A page written over the results database (or its snapshot, or a write-ahead log DuckDB would replay)
loses every result, and a write cut short leaves half a file where a whole one was. So a target that is
one of the database's files is refused, a missing folder or a folder as the target is one line, and the
file is written beside itself under a temporary name, flushed to disk, then renamed into place: a reader
sees the old file or the new one, never a part.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmark.errors import UserError
from store.snapshot import SUFFIX, snapshot_path


def database_files(db: Path) -> dict[Path, str]:
    """Every file of the database ``db`` a write must not touch, with what it is."""
    main = db.with_name(db.name.removesuffix(SUFFIX)) if db.name.endswith(SUFFIX) else db
    snap = snapshot_path(main)
    tmp = snap.with_name(snap.name + ".tmp")  # the snapshot being written (store/snapshot.py)
    out: dict[Path, str] = {}
    for path, what in ((main, "the results database"), (snap, "the database's snapshot"),
                       (tmp, "the snapshot being written"), (db, "the database read")):
        out.setdefault(path, what)
        out.setdefault(path.with_name(path.name + ".wal"), f"the write-ahead log of {what.removeprefix('the ')}")
    return out


def _same(a: Path, b: Path) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):  # also a file that does not exist yet (a WAL)
        return True
    try:
        return os.path.samefile(a, b)  # a hard link
    except OSError:
        return False


def check_target(path: Path, db: Path, what: str) -> Path:
    """``path`` if ``what`` (e.g. "the HTML report") may be written there, else a UserError saying why."""
    for guarded, name in database_files(db).items():
        if _same(path, guarded):
            raise UserError(f"{path}: is {name}; writing {what} there would destroy it: give another file")
    if path.is_dir():
        raise UserError(f"{path}: is a folder; give a file name for {what}")
    folder = path.parent
    if not folder.is_dir():
        raise UserError(f"{path}: folder {folder} does not exist" if not folder.exists()
                        else f"{path}: {folder} is not a folder")
    return path


def _mode(path: Path) -> int:
    """The mode the file gets: the old file's, else what the umask allows (mkstemp's 0600 would hide it)."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextmanager
def replaced(path: Path) -> Iterator[Path]:
    """A temporary file beside ``path`` to fill; renamed onto ``path`` when the block ends, removed on an error."""
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise UserError(f"{path}: cannot write there ({e.strerror or e})") from None
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, _mode(path))
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())  # on disk before the rename: a crash leaves the old file, not an empty one
        os.replace(tmp, path)
    except OSError as e:  # a full disk, a folder made read-only meanwhile: the old file stays
        tmp.unlink(missing_ok=True)
        raise UserError(f"{path}: cannot write ({e.strerror or e}); the previous file, if any, is unchanged") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise

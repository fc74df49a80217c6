"""`python -m engine data pull|list`: bring the datasets onto this machine, show what is there.

Where each file comes from is data (benchmark/sources.toml); the transfer
itself (Range resume, checksums, the lock file) is engine/data/fetch.py.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, Self

import msgspec
from rich import filesize
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.progress import Progress as RichProgress
from rich.table import Column
from rich.text import Text

from benchmark import sources
from benchmark.sources import Listing, Manifest, Target
from engine.data import fetch, files
from benchmark.errors import UserError
from engine.errors import EXIT_FAILED, EXIT_UNREACHABLE

EXIT_OFFLINE = EXIT_UNREACHABLE  # the message lists what to fetch by hand; EXIT_FAILED: a file did not verify
SHOW_FAILED = 5  # failures printed per dataset


class DataOptions(msgspec.Struct, frozen=True, kw_only=True):
    """`data pull` and `data list` options (engine/data/flags.py maps the flags onto them)."""

    suite: str | None = None  # suite name or TOML path; None: moodbench
    datasets: str | None = None  # comma-separated dataset ids; None: every dataset of the suite
    data_dir: Path = Path("data")
    manifest: Path = sources.MANIFEST  # where each file comes from (a test points it elsewhere)
    base_url: str | None = None  # pull: fetch from this mirror (replaces every source's scheme and host)
    concurrency: int = 4  # pull: files downloaded at once
    quiet: bool = False  # pull: no progress bar


def pull(opts: DataOptions) -> int:
    """Fetch the selected datasets' files: 0, EXIT_FAILED or EXIT_OFFLINE; a UserError for bad input."""
    manifest = sources.load(opts.manifest)  # a SourcesError is a UserError
    return _pull(opts, manifest, _ids(opts, manifest))


def list_data(opts: DataOptions) -> int:
    """Print, per dataset, whether its files are under ``opts.data_dir``."""
    manifest = sources.load(opts.manifest)  # a SourcesError is a UserError
    return _list(opts, manifest, _ids(opts, manifest))


def _ids(args: DataOptions, manifest: Manifest) -> list[str]:
    if args.datasets:
        ids = list(dict.fromkeys(d.strip() for d in args.datasets.split(",") if d.strip()))
        unknown = [d for d in ids if d not in manifest.datasets]
        if unknown:
            raise UserError(f"no download source known for {', '.join(unknown)} "
                            f"(known: {', '.join(sorted(manifest.datasets))})")
        return ids
    from benchmark.suites.suite import load_suite  # a SuiteError is a UserError

    suite = load_suite(args.suite or "moodbench")
    ids = list(dict.fromkeys(suite.datasets))
    missing = [d for d in ids if d not in manifest.datasets]
    if missing:
        print(f"warning: suite {suite.name}: no download source known for {', '.join(missing)}", file=sys.stderr)
    return [d for d in ids if d in manifest.datasets]


# -------------------------------------------------------------------- pull
def _pull(args: DataOptions, manifest: Manifest, ids: list[str]) -> int:
    if args.concurrency < 1:
        raise UserError("--concurrency must be at least 1")
    targets, listings = sources.resolve(manifest, ids)
    progress = fetch.DownloadProgress() if args.quiet else _Bars()
    try:
        with progress:
            outcomes, warnings = asyncio.run(fetch.pull(
                targets, listings, args.data_dir, base_url=args.base_url,
                concurrency=args.concurrency, progress=progress))
    except files.FetchFailed as e:  # an unreadable lock file
        raise UserError(str(e)) from None
    return _report(outcomes, warnings, args)


def _report(outcomes: list[fetch.Outcome], warnings: list[str], args: DataOptions) -> int:
    err = sys.stderr
    for w in warnings:
        print(f"warning: {w}", file=err)
    by = {k: [o for o in outcomes if o.kind == k] for k in ("downloaded", "present", "failed", "unreachable")}
    shown: dict[str, int] = {}
    for o in by["failed"]:
        n = shown[o.item.dataset] = shown.get(o.item.dataset, 0) + 1
        if n <= SHOW_FAILED:  # a whole missing folder would otherwise bury the other messages
            level = "note (optional file, not needed to run)" if o.item.optional else "error"
            print(f"{level}: {_label(o.item, args.data_dir)}: {o.message}", file=err)
    for ds, n in shown.items():
        if n > SHOW_FAILED:
            print(f"... and {n - SHOW_FAILED} more failed files of {ds}", file=err)
    # An optional file nothing needs is a note, not an error: errors that are not teach users to ignore them.
    skipped = [o for o in by["unreachable"] if o.item.optional]
    offline = [o for o in by["unreachable"] if not o.item.optional]
    if skipped:
        print(f"note: {len(skipped)} optional file(s) not downloaded, their source is unreachable; nothing "
              f"needs them to run: {', '.join(_label(o.item, args.data_dir) for o in skipped)}", file=err)
    if offline:
        reasons = sorted({o.message for o in offline})
        print("error: cannot download, the source is unreachable (offline, or blocked by a firewall or proxy): "
              + "; ".join(reasons), file=err)
        print("Fetch these files on a machine that can reach them (or pass --base-url MIRROR), put each at "
              "its destination, then run the same command again to check them:", file=err)
        for o in offline:
            print("  " + _by_hand(o.item, args.data_dir), flush=True)
    got = sum(o.bytes for o in by["downloaded"])
    print(f"{len(by['downloaded'])} downloaded ({filesize.decimal(got)}), {len(by['present'])} already present "
          f"and verified, {len(by['failed'])} failed, {len(offline)} unreachable"
          + (f", {len(skipped)} optional skipped" if skipped else "") + f", under {args.data_dir}", file=err)
    if offline:
        return EXIT_OFFLINE
    if any(not o.item.optional for o in by["failed"]):
        return EXIT_FAILED
    return 0


def _label(item: Target | Listing, data_dir: Path) -> str:
    where = data_dir / item.dest
    return str(where) if isinstance(item, Target) else f"{where}/{item.glob}"


def _by_hand(item: Target | Listing, data_dir: Path) -> str:
    """One line of the offline message: where a file comes from -> where it goes."""
    note = " (optional)" if item.optional else ""
    if isinstance(item, Target):
        return f"{item.url} -> {data_dir / item.dest}{note}"
    src = item.source
    folder = data_dir / src.dest
    return (f"{sources.browse_url(src)} -> {folder}/ (the repository's files matching {item.glob!r}; e.g. "
            f"huggingface-cli download {src.repo} --repo-type dataset --revision {src.revision} "
            f"--local-dir {folder}){note}")


class _Amount(ProgressColumn):
    """Files done for the overall bar, bytes for a file's bar."""

    def __init__(self, table_column: Column | None = None) -> None:
        super().__init__(table_column)
        self.bytes = DownloadColumn()

    def render(self, task: Any) -> Text:
        if task.fields.get("files"):
            return Text(f"{int(task.completed)}/{int(task.total or 0)} files")
        return self.bytes.render(task)


class _Bars(fetch.DownloadProgress):
    """rich: one bar for the whole pull, one per file in flight."""

    def __init__(self) -> None:
        # Fixed widths: the bars would jump as file names of other lengths come and go.
        name = TextColumn("{task.description}", table_column=Column(width=40, no_wrap=True))
        amount = _Amount(table_column=Column(width=20, justify="right", no_wrap=True))
        self.bars = RichProgress(name, BarColumn(), amount, TimeElapsedColumn(), console=Console(stderr=True))
        self.overall = self.bars.add_task("data pull", total=None, files=True)

    def __enter__(self) -> Self:
        self.bars.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bars.stop()

    def set_total(self, files: int) -> None:
        self.bars.update(self.overall, total=files)

    def start(self, name: str, total: int | None, done: int) -> Any:
        label = name if len(name) <= 40 else "…" + name[-39:]  # the end of a path says most
        return self.bars.add_task(label, total=total, completed=done)

    def advance(self, handle: Any, n: int) -> None:
        self.bars.advance(handle, n)

    def stop(self, handle: Any) -> None:
        self.bars.remove_task(handle)

    def file_done(self) -> None:
        self.bars.advance(self.overall, 1)


# -------------------------------------------------------------------- list
def _list(args: DataOptions, manifest: Manifest, ids: list[str]) -> int:
    try:
        lock = files.Lock(args.data_dir / files.LOCK_NAME)
    except files.FetchFailed as e:
        raise UserError(str(e)) from None
    rows, incomplete = [], []
    for ds in ids:
        targets, listings = sources.resolve(manifest, [ds])
        unlisted = False
        for lst in listings:
            cached = lock.listings.get(sources.listing_url(lst.source, lst.source.revision))
            if cached is None:
                unlisted = unlisted or not lst.optional  # its file list is known only after a pull
            else:
                targets += files.listed_targets(lst, cached)[0]
        ref = [t for t in targets if t.dest.startswith("moodbench/")]
        orig = [t for t in targets if not t.dest.startswith("moodbench/")]
        need = [t for t in targets if not t.optional]
        have = sum(_present(args.data_dir, t) for t in need)
        status = ("complete" if have == len(need) and not unlisted
                  else "missing" if have == 0 else "partial")
        if status != "complete":
            incomplete.append(ds)
        orig_n = "?" if unlisted else _count(args.data_dir, orig)  # "?": listed by the Hub on pull
        rows.append((ds, _count(args.data_dir, ref), orig_n, status))
    width = max([len(r[0]) for r in rows] + [7])
    print(f"{'dataset':<{width}}  {'reference':>11}  {'originals':>11}  status")
    for ds, ref_n, orig_n, status in rows:
        print(f"{ds:<{width}}  {ref_n:>11}  {orig_n:>11}  {status}")
    print(f"{len(rows) - len(incomplete)} of {len(rows)} datasets complete under {args.data_dir} "
          "(reference = the MoodBench data/ tree in moodbench/, originals = the upstream files)")
    if incomplete:
        which = (f" --datasets {','.join(incomplete)}" if len(incomplete) <= 5
                 else f" --suite {args.suite}" if args.suite else "")
        print(f"fetch the rest with: python -m engine data pull --data-dir {args.data_dir}{which}")
    return 0


def _present(data_dir: Path, t: Target) -> bool:
    # A cheap check (no hashing): `data pull` verifies hashes.
    p = data_dir / t.dest
    return p.is_file() and (t.size is None or p.stat().st_size == t.size)


def _count(data_dir: Path, targets: list[Target]) -> str:
    return f"{sum(_present(data_dir, t) for t in targets)}/{len(targets)}" if targets else "-"

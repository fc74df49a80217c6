"""The flags of `data pull` and `data list`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from engine.flags import Command, add_data_dir, add_datasets


def _data_args(p: argparse.ArgumentParser) -> None:
    from benchmark import sources

    p.add_argument("--suite", help="suite name or TOML path (default: moodbench)")
    add_datasets(p, "every dataset of the suite")
    add_data_dir(p)
    p.add_argument("--manifest", type=Path, default=sources.MANIFEST, help=argparse.SUPPRESS)


def _pull_args(p: argparse.ArgumentParser) -> None:
    _data_args(p)
    p.add_argument("--base-url", help="fetch from this mirror: replaces every source's scheme and host")
    p.add_argument("--concurrency", type=int, default=4, help="files downloaded at once (default: 4)")
    p.add_argument("--quiet", action="store_true", help="no progress bar (for CI)")


def _data_options(args: argparse.Namespace) -> Any:
    from engine.data.pull import DataOptions

    more = {k: getattr(args, k) for k in ("base_url", "concurrency", "quiet") if hasattr(args, k)}
    return DataOptions(suite=args.suite, datasets=args.datasets, data_dir=args.data_dir, manifest=args.manifest,
                       **more)


def _pull(args: argparse.Namespace) -> int:
    from engine.data.pull import pull

    return pull(_data_options(args))


def _list(args: argparse.Namespace) -> int:
    from engine.data.pull import list_data

    return list_data(_data_options(args))


GROUP = "fetch datasets onto this machine (data pull) and show what is there (data list); see docs/data.md"
PULL = Command("download the datasets of a suite (checked, resumable)", _pull_args, _pull)
LIST = Command("show, per dataset, whether its files are under --data-dir", _data_args, _list)

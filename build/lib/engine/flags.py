"""What every command's flags share: the `Command` record and the arguments spelled alike everywhere.

Each command's flags live beside its code (`engine/<wing>/flags.py`: `sweep/`, `report/`, `data/`,
`compactbench/`); `engine/cli.py` names them in COMMANDS. A `Command`'s `build` adds its arguments to a
parser, `run` maps the parsed arguments onto the typed options of the command's module (a msgspec Struct)
and calls its function, which returns the exit status or raises a UserError. Modules are imported inside
`run`, so `--help` stays fast and an ImportError in a command's own code surfaces as the bug it is.

One spelling per argument, in every command (tests/engine/test_cli.py holds it):
- the results database is the positional `DB`. The commands that took `--db DB` before
  (`sweep`, `report`, `import-scores`, `compactbench run|scores`) still accept it, hidden and
  deprecated, so old scripts keep working; giving both, differently, is an error.
- `--suite`, `--datasets` (comma-separated ids), `--data-dir`, `--quiet` mean the same everywhere.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmark.errors import UserError


@dataclass(frozen=True)
class Command:
    help: str
    build: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def add_db(p: argparse.ArgumentParser, help_: str, *, optional: bool = False, alias: bool = False) -> None:
    """The positional DB; `alias`: also the deprecated, hidden `--db DB` the command once took."""
    p.add_argument("db", metavar="DB", type=Path, nargs="?" if optional or alias else None, help=help_)
    if alias:
        p.add_argument("--db", dest="db_flag", type=Path, help=argparse.SUPPRESS)


def db_of(args: argparse.Namespace, default: Path | None = None) -> Path:
    """The database given as DB or as the deprecated --db; `default` when neither (else a UserError)."""
    db = given_db(args) or default
    if db is None:
        raise UserError("give the results database: DB")
    return db


def given_db(args: argparse.Namespace) -> Path | None:
    """DB or the deprecated --db, None when neither; a UserError when both differ."""
    flag = getattr(args, "db_flag", None)
    if flag is not None and args.db is not None and flag != args.db:
        raise UserError(f"two databases given: DB {args.db} and --db {flag} (--db is deprecated: give DB only)")
    return args.db or flag


def add_suite(p: argparse.ArgumentParser, help_: str = "suite name, name@version or .toml path "
                                                      "(default: the only one loaded)") -> None:
    p.add_argument("--suite", help=help_)


def add_datasets(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument("--datasets", metavar="ID,ID", help=f"comma-separated dataset ids (default: {default})")


def add_data_dir(p: argparse.ArgumentParser, help_: str = "data folder (default: ./data)",
                 default: Path | None = Path("data")) -> None:
    p.add_argument("--data-dir", type=Path, default=default, metavar="DIR", help=help_)


def csv_list(text: str | None) -> list[str] | None:
    """'a, b,,c' -> ['a', 'b', 'c']; None or '' -> None (every one)."""
    items = [x.strip() for x in text.split(",") if x.strip()] if text else []
    return items or None

"""`moodengine ...` / `python -m engine ...`: the command line and its exit statuses.

Exit statuses, the same for every command (the policy is `_guard`, the only place that maps
exceptions to statuses):

    0    done
    1    done, but something failed (a file not fetched, a relation not exported), or a bug:
         any exception that is not a UserError keeps its traceback, ImportError included
    2    bad input: a UserError (benchmark/errors.py) or a usage error; one line `error: ...`
    3    a host could not be reached (EXIT_UNREACHABLE): run the same command again later
    130  interrupted (Ctrl-C, SIGTERM)

Adding a command: one `Command` in the flags module of its wing (`engine/<wing>/flags.py`: its flags, and
a `run` that maps them onto the typed options of the command's module and calls its function), and its
name in COMMANDS below.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import engine.compactbench.flags as compactbench
import engine.data.flags as data
import engine.report.flags as report
import engine.sweep.flags as sweep
from benchmark.errors import UserError
from engine.errors import EXIT_INTERRUPTED, EXIT_UNREACHABLE, EXIT_USAGE
from engine.flags import Command

__all__ = ["COMMANDS", "EXIT_UNREACHABLE", "GROUPS", "main", "run"]

# Every command, in the order `--help` lists them; each one's flags live in its wing's flags.py.
COMMANDS: dict[str, Command] = {
    "sweep": sweep.SWEEP,
    "report": report.REPORT,
    "batches": sweep.BATCHES,
    "import-scores": sweep.IMPORT_SCORES,
    "import-items": sweep.IMPORT_ITEMS,
    "estimate": sweep.ESTIMATE,
    "data pull": data.PULL,
    "data list": data.LIST,
    "compactbench generate": compactbench.GENERATE,
    "compactbench run": compactbench.RUN,
    "compactbench scores": compactbench.SCORES,
    "serve": report.SERVE,
    "export": report.EXPORT,
    "compare": report.COMPARE,
    "extract": sweep.EXTRACT,
    "rescore": sweep.RESCORE,
}
GROUPS = {"data": data.GROUP, "compactbench": compactbench.GROUP}  # a name with a space is a group's command


def main(argv: list[str] | None = None) -> int:
    """Run one command line; returns its exit status (a bug raises)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        command, args = parse(argv)
    except SystemExit as e:  # --help (0) or a usage error (2, argparse printed it)
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    return _guard(lambda: command.run(args))


def _guard(fn: Callable[[], int]) -> int:
    """The exit-status policy (the module docstring)."""
    try:
        return fn()
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def run() -> None:
    """The process entry of `python -m engine` and of the `moodengine` console script."""
    from engine.run.signals import catch_start_up_signals, signalled

    # A signal during start-up (imports, planning) ends quietly with 130, like one during the run;
    # the run loop installs its own handlers while it calls models (engine/run/interrupt.py).
    catch_start_up_signals()
    try:
        code = main()
    except (KeyboardInterrupt, Exception) as e:
        # After a signal, whatever it cut short is the interruption (DuckDB turns it into a RuntimeError
        # 'Query interrupted' in the middle of a query).
        if not (isinstance(e, KeyboardInterrupt) or signalled()):
            raise
        print("interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    sys.exit(code)


def build(name: str) -> argparse.ArgumentParser:
    """The parser of one command ("report", "data pull")."""
    command = COMMANDS[name]
    p = argparse.ArgumentParser(prog=f"{_prog()} {name}", description=command.help)
    command.build(p)
    return p


def parse(argv: list[str]) -> tuple[Command, argparse.Namespace]:
    """The command named by argv and its parsed arguments; SystemExit for --help or a usage error.

    Each command has its own parser, parsed with `parse_intermixed_args`, so an optional positional
    (DB) may come before or after the flags: argparse's subparsers could not place it."""
    name = argv[0] if argv else ""
    if name in GROUPS:
        name = f"{name} {argv[1]}" if len(argv) > 1 and f"{name} {argv[1]}" in COMMANDS else name
    if name not in COMMANDS:  # no command, --help, an unknown one, or a group without its sub-command
        group = name if name in GROUPS else None
        _overview(group).parse_args(argv[1:2] if group else argv)
        raise SystemExit(2)  # not reached: argparse exits for each case above
    rest = argv[len(name.split()):]
    args = build(name).parse_intermixed_args(rest)
    args.argv = rest  # as typed, for the commands that log their command line
    return COMMANDS[name], args


def _prog() -> str:
    """How the user called us, for usage lines: the console script or `python -m engine`."""
    return "moodengine" if sys.argv and sys.argv[0].endswith("moodengine") else "python -m engine"


def _overview(group: str | None) -> argparse.ArgumentParser:
    """The top-level parser (or a group's), for help and usage errors only."""
    p = argparse.ArgumentParser(prog=f"{_prog()} {group}" if group else _prog(),
                                description=GROUPS[group] if group else "moodengine: evaluate dialogue models. "
                                "`COMMAND --help` lists a command's flags.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    names: dict[str, str] = {}
    for name, command in COMMANDS.items():
        first, _, second = name.partition(" ")
        if group and first == group:
            names[second] = command.help
        elif not group:
            names.setdefault(first, GROUPS.get(first, command.help))
    for name, help_ in names.items():
        sub.add_parser(name, help=help_, add_help=False)
    return p

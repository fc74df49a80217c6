"""The command line: one exit-status policy, each command's flags beside its code, one spelling per argument."""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from benchmark.compactbench.artifact import ArtifactError
from benchmark.compactbench.config import ConfigError
from benchmark.compactbench.plugins import PluginError
from benchmark.compactbench.scoring import ScoringError
from benchmark.compactbench.templates import TemplateError
from benchmark.dataset import DataMissing
from benchmark.errors import UserError
from benchmark.sources import SourcesError
from benchmark.suites.suite import SuiteError
from engine import cli
from engine.cli import COMMANDS, build, main, parse
from engine.flags import Command, db_of, given_db
from engine.report.export import ExportError
from engine.report.leaderboard import ReportError
from providers.errors import ProviderError
from store.db import StoreError, StoreLocked
from store.import_scores import ScoreFileError

ROOT = Path(__file__).resolve().parents[2]
USER_ERRORS = [ArtifactError, ConfigError, PluginError, ScoringError, TemplateError, DataMissing, SourcesError,
               SuiteError, ExportError, ReportError, StoreError, StoreLocked, ScoreFileError]


def _with_command(monkeypatch, run) -> None:
    monkeypatch.setitem(COMMANDS, "boom", Command("raises", lambda p: None, run))


def _raise(e: BaseException):
    def run(args: argparse.Namespace) -> int:
        raise e
    return run


@pytest.mark.parametrize("cls", USER_ERRORS, ids=lambda c: c.__name__)
def test_every_user_error_exits_2_with_one_line(monkeypatch, capsys, cls):
    assert issubclass(cls, UserError)
    _with_command(monkeypatch, _raise(cls("models.toml: [defaults] must be a table")))
    assert main(["boom"]) == 2
    out, err = capsys.readouterr()
    assert err == "error: models.toml: [defaults] must be a table\n" and not out


def test_a_provider_error_is_not_a_user_error():
    assert not issubclass(ProviderError, UserError)


def test_interrupted_exits_130(monkeypatch, capsys):
    _with_command(monkeypatch, _raise(KeyboardInterrupt()))
    assert main(["boom"]) == 130
    assert capsys.readouterr().err == "interrupted\n"


def test_exit_statuses_are_the_documented_ones():
    from engine.data import pull as data
    from engine import errors

    assert (errors.EXIT_FAILED, errors.EXIT_USAGE, errors.EXIT_UNREACHABLE, errors.EXIT_INTERRUPTED) == (1, 2, 3, 130)
    assert data.EXIT_OFFLINE == cli.EXIT_UNREACHABLE == 3


def test_a_bug_keeps_its_traceback(monkeypatch):
    _with_command(monkeypatch, _raise(RuntimeError("a bug")))
    with pytest.raises(RuntimeError, match="a bug"):
        main(["boom"])


def test_an_import_error_in_a_command_surfaces(monkeypatch):
    def run(args: argparse.Namespace) -> int:
        importlib.import_module("engine.no_such_module")
        return 0

    _with_command(monkeypatch, run)
    with pytest.raises(ModuleNotFoundError, match="engine.no_such_module"):
        main(["boom"])


def test_an_import_error_exits_1_with_a_traceback_in_the_process():
    script = ("import importlib, sys\nfrom engine import cli, flags\n"
              "def run(args):\n    return importlib.import_module('engine.no_such_module')\n"
              "cli.COMMANDS['broken'] = flags.Command('a broken command', lambda p: None, run)\n"
              "sys.argv = ['moodengine', 'broken']\ncli.run()\n")
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120,
                       check=False)
    assert p.returncode == 1
    assert "Traceback" in p.stderr and "No module named 'engine.no_such_module'" in p.stderr
    assert "not available" not in p.stderr


@pytest.mark.parametrize("argv", [[], ["--help"], *([*name.split(), "--help"] for name in COMMANDS),
                                  ["data", "--help"], ["compactbench", "--help"]], ids=" ".join)
def test_every_help_works(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    if argv:
        assert code == 0 and out.startswith("usage: python -m engine") and not err
    else:
        assert code == 2 and "required: COMMAND" in err


@pytest.mark.parametrize("argv", [["nosuch"], ["data"], ["data", "nosuch"], ["report", "--nosuch"],
                                  ["compare", "only.duckdb"]])
def test_usage_errors_exit_2(capsys, argv):
    assert main(argv) == 2
    assert "error:" in capsys.readouterr().err


def test_every_import_the_parsers_make_resolves():
    """The parsers import each command's module lazily; a renamed function must fail here, not in use."""
    files = [ROOT / "engine" / "flags.py", *sorted((ROOT / "engine").glob("*/flags.py"))]
    assert len(files) == 5  # the shared arguments, sweep, report, data, compactbench
    imports = [(n.module, a.name) for f in files for n in ast.walk(ast.parse(f.read_text()))
               if isinstance(n, ast.ImportFrom) and n.module for a in n.names if n.module != "__future__"]
    assert len(imports) > 20
    for module, name in imports:
        mod = importlib.import_module(module)
        assert hasattr(mod, name) or importlib.util.find_spec(f"{module}.{name}"), f"{module}.{name}"


def _actions(name: str) -> list[argparse.Action]:
    return [a for a in build(name)._actions if not isinstance(a, argparse._HelpAction)]


# The commands that read or write a results database, and those that took `--db DB` before.
WITH_DB = {"sweep", "report", "import-scores", "compactbench run", "compactbench scores", "serve", "export",
           "compare", "rescore", "batches", "import-items", "estimate"}
HAD_DB_FLAG = {"sweep", "report", "import-scores", "compactbench run", "compactbench scores"}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_database_is_the_positional_db_everywhere(name):
    actions = _actions(name)
    db = [a for a in actions if a.dest == "db"]
    flags = [a for a in actions if "--db" in a.option_strings]
    if name not in WITH_DB:
        assert not db and not flags
        return
    assert len(db) == 1 and not db[0].option_strings and db[0].metavar == "DB" and db[0].type is Path
    if name in HAD_DB_FLAG:  # the deprecated alias: hidden, and read through db_of
        assert len(flags) == 1 and flags[0].help == argparse.SUPPRESS and flags[0].dest == "db_flag"
    else:
        assert not flags
    assert not any("db" in s for a in actions for s in a.option_strings if s != "--db")


def test_shared_flags_are_spelled_alike():
    seen: dict[str, set[tuple]] = {}
    for name in COMMANDS:
        for a in _actions(name):
            for s in a.option_strings:
                if s in ("--suite", "--datasets", "--data-dir", "--quiet", "--benchmarks-dir"):
                    seen.setdefault(s, set()).add((a.dest, a.metavar, a.type, type(a).__name__))
    assert set(seen) == {"--suite", "--datasets", "--data-dir", "--quiet", "--benchmarks-dir"}
    for flag, forms in seen.items():
        assert len(forms) == 1, (flag, forms)


@pytest.mark.parametrize("argv", [
    ["import-scores", "r.duckdb", "s.csv", "--suite", "moodbench"],
    ["import-scores", "--suite", "moodbench", "r.duckdb", "s.csv"],
    ["import-scores", "r.duckdb", "--suite", "moodbench", "s.csv"],
    ["import-scores", "--db", "r.duckdb", "--suite", "moodbench", "s.csv"],  # deprecated spelling
    ["import-scores", "--suite", "moodbench", "s.csv", "--db=r.duckdb"],
])
def test_db_and_its_alias_parse_alike_wherever_placed(argv):
    _, args = parse(argv)
    assert (db_of(args), args.file, args.suite) == (Path("r.duckdb"), Path("s.csv"), "moodbench")


def test_sweep_takes_the_db_after_the_models_file():
    for argv in (["sweep", "m.toml", "r.duckdb"], ["sweep", "m.toml", "--db", "r.duckdb"],
                 ["sweep", "--quiet", "m.toml", "r.duckdb"]):
        _, args = parse(argv)
        assert (args.models, db_of(args)) == (Path("m.toml"), Path("r.duckdb"))
    _, args = parse(["sweep", "m.toml"])
    assert given_db(args) is None  # the models file's [sweep] db, else results.duckdb


def test_two_different_databases_are_a_user_error(capsys):
    assert main(["report", "a.duckdb", "--db", "b.duckdb"]) == 2
    assert "two databases given" in capsys.readouterr().err
    assert main(["report"]) == 2
    assert capsys.readouterr().err == "error: give the results database: DB\n"


def test_no_argparse_caught_error_print_or_exit_outside_the_cli():
    for pkg in ("engine", "store", "benchmark", "providers"):
        for f in (ROOT / pkg).rglob("*.py"):
            if pkg == "engine" and (f.name == "flags.py" or f.parent.name == "engine" and (
                    f.name.startswith("cli") or f.name == "__main__.py")):
                continue  # the CLI, the commands' flags, the process entry (130 for a signal during its imports)
            if f == ROOT / "store" / "snapshot_apply.py":
                continue  # a child process's entry: store/snapshot.py reads its exit status, no user sees it
            text = f.read_text()
            assert "import argparse" not in text and "sys.exit(" not in text, f
            # an error caught and printed is the policy's job (`data pull` printing its outcome is not)
            assert not re.search(r'print\(f"error: \{(e|err|exc)\b', text), f


def test_the_console_script_is_the_entry_of_python_m_engine(monkeypatch, capsys):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["moodengine"] == "engine.__main__:main"
    import engine.__main__ as entry

    monkeypatch.setattr(sys, "argv", ["moodengine", "export", "--help"])
    with pytest.raises(SystemExit) as e:
        entry.main()
    out = capsys.readouterr().out
    assert e.value.code == 0 and "--format" in out and out.startswith("usage: moodengine export")


def test_the_entry_installs_the_signal_handlers_before_importing_the_cli():
    # A signal during the CLI's imports must exit 130 quietly (tests/integration/test_bad_input.py).
    tree = ast.parse((ROOT / "engine" / "__main__.py").read_text())
    main = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main")
    first_call = main.body[0]
    assert isinstance(first_call, ast.Expr) and first_call.value.func.id == "catch_start_up_signals"
    top_imports = [(n.module, [a.name for a in n.names]) for n in tree.body if isinstance(n, ast.ImportFrom)]
    # engine.cli is imported inside main, after the handlers; before it only the stdlib-only start-up
    # modules: the signals, and the collector held while a sweep starts (engine/run/collector.py)
    assert top_imports == [("engine.run", ["collector"]), ("engine.run.signals", ["catch_start_up_signals"])]
    for module in ("signals", "collector"):
        source = ast.parse((ROOT / "engine" / "run" / f"{module}.py").read_text())
        imported = {a.name.split(".")[0] for n in source.body if isinstance(n, ast.Import) for a in n.names}
        imported |= {(n.module or "").split(".")[0] for n in source.body if isinstance(n, ast.ImportFrom)}
        assert imported <= {"__future__", "contextlib", "gc", "signal", "threading", "collections", "types"}

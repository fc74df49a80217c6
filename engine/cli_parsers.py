"""Every command's flags, and how they become the options of the command's module.

A command is one `Command` in COMMANDS: `build` adds its arguments to a parser, `run` maps the
parsed arguments onto the typed options of the command's module (a msgspec Struct) and calls its
function, which returns the exit status or raises a UserError. A name with a space ("data pull")
is a sub-command of a group. Modules are imported inside `run`, so `--help` stays fast and an
ImportError in a command's own code surfaces as the bug it is.

One spelling per argument, in every command (tests/engine/test_cli.py holds it):
- the results database is the positional `DB`. The commands that took `--db DB` before
  (`sweep`, `report`, `import-scores`, `compactbench run|scores`) still accept it, hidden and
  deprecated, so old scripts keep working; giving both, differently, is an error.
- `--suite`, `--datasets` (comma-separated ids), `--data-dir`, `--quiet` mean the same everywhere.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmark.errors import UserError


@dataclass(frozen=True)
class Command:
    help: str
    build: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# ----------------------------------------------------------------- shared arguments
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


# ----------------------------------------------------------------- sweep
def _sweep_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("models", type=Path, metavar="MODELS", help="models file (TOML, [[models]] tables)")
    # Defaults (None) fall back to the models file's [sweep] table, then to the values named here.
    add_db(p, "DuckDB file (default: the models file's [sweep] db, else results.duckdb)", alias=True)
    add_data_dir(p, default=None)
    p.add_argument("--suite", help="suite name or path to a suite TOML (default: moodbench)")
    add_datasets(p, "every dataset of the suite")
    p.add_argument("--limit", type=int, help="items per dataset (default: the suite's sample size, 300)")
    p.add_argument("--fraction", type=float, metavar="F",
                   help="ask the seeded share F (0 < F <= 1) of every dataset's sample: the items a later full sweep "
                        "asks first, so it asks only the rest")
    p.add_argument("--until-stable", action="store_true",
                   help="ask in rounds until the model's overall rank among the models in DB is at most one place "
                        "wide (docs/estimates.md)")
    p.add_argument("--fresh", action="store_true", help="delete these models' stored rows for these datasets first")
    p.add_argument("--allow-mixed", action="store_true",
                   help="resume even if stored rows were made with another prompt or scorer version")
    p.add_argument("--pull", action="store_true", help="fetch the selected datasets' missing files first (data pull)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--estimate", action="store_true",
                   help="print items, estimated tokens and cost per model, call nothing")
    p.add_argument("--budget", type=float, metavar="USD",
                   help="stop dispatching new items once the spend (priced models) reaches USD")
    p.add_argument("--serve", type=int, metavar="PORT",
                   help="serve a live view of the sweep on http://127.0.0.1:PORT/ while it runs")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="run on a Ray cluster: a Ray address (HOST:PORT), auto (inside `ray job submit`) or local "
                        "(a one-node Ray in this process); needs the cluster extra (docs/cluster.md)")


def _sweep(args: argparse.Namespace) -> int:
    from engine.errors import EXIT_INTERRUPTED, EXIT_UNREACHABLE
    from engine.sweep.sweep import SweepOptions, judge_stored, sweep

    if args.serve is not None:  # the web server's imports cost a second: only when it serves
        from engine.report.serve import check_port

        check_port(args.serve, "--serve")
    # `--datasets ""` is an empty selection (an error), not "every dataset".
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()] if args.datasets is not None else None
    opts = SweepOptions(models_path=args.models, db=given_db(args), data_dir=args.data_dir, suite=args.suite,
                        datasets=datasets, limit=args.limit, fresh=args.fresh, quiet=args.quiet,
                        allow_mixed=args.allow_mixed, budget_usd=args.budget, pull=args.pull,
                        serve_port=args.serve, fraction=args.fraction, until_stable=args.until_stable)
    if args.until_stable and (args.estimate or args.cluster is not None):
        raise UserError("--until-stable knows its calls only as its rounds run, on this machine: "
                        "not with --estimate or --cluster")
    if args.estimate:
        from engine.sweep.cost import estimate, print_estimate

        print_estimate(estimate(opts))
        return 0
    if args.cluster is not None:
        # Ray is imported only here, and only by engine/cluster/: without the flag nothing changes.
        from engine.cluster.driver import sweep_on_cluster

        result = sweep_on_cluster(opts, args.cluster, judge_stored)
    else:
        result = sweep(opts)
    if not args.quiet and result.db is not None:
        from engine.report.summary import print_summary

        print_summary(result.db, result.suite)
    print(f"results: {result.db} ({result.rows_written} rows written this run"
          + (f", {result.errors} errors stored: run again to retry them" if result.errors else "") + ")",
          file=sys.stderr)
    if result.unreachable and not result.interrupted:
        print(f"not finished: {', '.join(result.unreachable)} could not be reached (exit status "
              f"{EXIT_UNREACHABLE}); run the same command again to ask their remaining items", file=sys.stderr)
    return EXIT_INTERRUPTED if result.interrupted else EXIT_UNREACHABLE if result.unreachable else 0


# ----------------------------------------------------------------- reading a results database
def _report_args(p: argparse.ArgumentParser) -> None:
    from engine.report.leaderboard import FORMATS

    add_db(p, "DuckDB results file", alias=True)
    add_suite(p)
    p.add_argument("--model", help="drill down into one model")
    p.add_argument("--reload", action="store_true", help="reload the suite file into the database first")
    p.add_argument("--html", type=Path, metavar="FILE", help="write a self-contained HTML report (figures, items) to FILE")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text (fits the terminal; 80 columns on a pipe), markdown (a GitHub table) "
                        "or csv (full precision)")


def _report(args: argparse.Namespace) -> int:
    from engine.report.leaderboard import ReportOptions, report

    return report(ReportOptions(db=db_of(args), suite=args.suite, model=args.model, reload=args.reload,
                                html=args.html, format=args.format))


def _import_args(p: argparse.ArgumentParser) -> None:
    add_db(p, "DuckDB results file", alias=True)
    p.add_argument("file", type=Path, metavar="FILE", help="CSV with columns model,dataset,score (0-100)")
    p.add_argument("--suite", required=True, help="suite name (or path to a suite .toml)")
    p.add_argument("--override", action="store_true", help="imported scores win over item rows")
    p.add_argument("--create", action="store_true", help="create the database if it does not exist yet")


def _import(args: argparse.Namespace) -> int:
    from store.import_scores import import_file

    name, n = import_file(db_of(args), args.suite, args.file, override=args.override, create=args.create)
    print(f"imported {n} dataset scores for suite {name} from {args.file}" + (" (override)" if args.override else ""))
    return 0


def _import_items_args(p: argparse.ArgumentParser) -> None:
    add_db(p, "DuckDB results file (created if missing)")
    p.add_argument("file", type=Path, metavar="FILE",
                   help="CSV (.csv, .csv.gz), JSONL (.jsonl, .jsonl.gz) or Parquet: model,dataset,item_id,score "
                        "(0..1) [,response,prediction,gold]")
    add_suite(p, "the suite whose datasets are checked against their items (default: moodbench)")
    add_data_dir(p, "data folder the suite's datasets are read from (default: ./data)")


def _import_items(args: argparse.Namespace) -> int:
    from engine.sweep.import_items import ImportItemsOptions, import_items

    return import_items(ImportItemsOptions(db=args.db, file=args.file, suite=args.suite or "moodbench",
                                           data_dir=args.data_dir))


def _estimate_args(p: argparse.ArgumentParser) -> None:
    add_db(p, "DuckDB results file")
    p.add_argument("--models", metavar="NAME,NAME", help="comma-separated model names (default: every model that "
                                                          "answered part of a dataset)")
    p.add_argument("--json", action="store_true", help='print {"MODEL": {"DATASET": {"estimate": ..}}}')


def _estimate(args: argparse.Namespace) -> int:
    from engine.sweep.estimates import EstimateOptions, estimate

    return estimate(EstimateOptions(db=args.db, models=csv_list(args.models), json_out=args.json))


def _export_args(p: argparse.ArgumentParser) -> None:
    add_db(p, "DuckDB results file (opened read-only)")
    p.add_argument("--format", default="parquet", help="parquet (default), csv (with a header) or jsonl")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder for the files (created if missing)")
    add_suite(p, "only this suite's rows (name or name@version) where a relation has them")


def _export(args: argparse.Namespace) -> int:
    from engine.report.export import ExportOptions, export_db

    return export_db(ExportOptions(db=args.db, out=args.out, format=args.format, suite=args.suite))


def _compare_args(p: argparse.ArgumentParser) -> None:
    add_db(p, "DuckDB results file")
    p.add_argument("model_a", metavar="MODEL_A")
    p.add_argument("model_b", metavar="MODEL_B")
    add_suite(p)
    p.add_argument("--replicates", type=int, default=2000, help="bootstrap replicates (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object keyed by node id")


def _compare(args: argparse.Namespace) -> int:
    from engine.report.compare import CompareOptions, compare

    return compare(CompareOptions(db=args.db, model_a=args.model_a, model_b=args.model_b, suite=args.suite,
                                  replicates=args.replicates, seed=args.seed, json_out=args.json))


def _serve_args(p: argparse.ArgumentParser) -> None:
    add_db(p, "DuckDB results file (opened read-only)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    add_suite(p, "suite name or name@version (default: the only one loaded)")


def _serve(args: argparse.Namespace) -> int:
    from engine.report.serve import ServeOptions, serve

    return serve(ServeOptions(db=args.db, port=args.port, host=args.host, suite=args.suite))


# ----------------------------------------------------------------- answers
def _extract_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="JSONL input (see docs/extraction.md), or - for stdin")
    p.add_argument("--extractor", type=Path, metavar="MODELS.toml",
                   help="also ask this file's [extractor] model about the lines the rules leave unread")


def _extract(args: argparse.Namespace) -> int:
    from engine.sweep.extract import ExtractOptions, extract

    return extract(ExtractOptions(file=args.file, extractor=args.extractor))


def _rescore_args(p: argparse.ArgumentParser) -> None:
    add_db(p, "DuckDB results file")
    add_datasets(p, "every stored dataset")
    p.add_argument("--models", metavar="NAME,NAME", help="comma-separated model names (default: every stored model)")
    add_suite(p, "the datasets of this suite (name or TOML path)")
    add_data_dir(p, "data folder the items are rendered from (default: ./data)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--workers", type=int, metavar="N", help="scoring processes (default: one per core; 1: none)")


def _rescore(args: argparse.Namespace) -> int:
    from engine.sweep.rescore import RescoreOptions, rescore

    return rescore(RescoreOptions(db=args.db, datasets=csv_list(args.datasets), models=csv_list(args.models),
                                  models_text=args.models, suite=args.suite, data_dir=args.data_dir, quiet=args.quiet,
                                  workers=args.workers, command=" ".join(["rescore", *args.argv])))


def _batches_args(p: argparse.ArgumentParser) -> None:
    add_db(p, "DuckDB results file")
    p.add_argument("--model", help="only this model's batches")
    p.add_argument("--cancel", action="store_true", help="cancel the batches in flight at their provider")
    p.add_argument("--models", type=Path, metavar="MODELS",
                   help="models file (needed by --cancel: endpoints and key variables)")


def _batches(args: argparse.Namespace) -> int:
    from engine.sweep.batches import BatchesOptions, batches

    return batches(BatchesOptions(db=args.db, model=args.model, cancel=args.cancel, models=args.models))


# ----------------------------------------------------------------- data
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


# ----------------------------------------------------------------- compactbench
def _benchmarks_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument("--benchmarks-dir", type=Path, metavar="DIR",
                   help="folder of suite folders (default: ../shared/compactbench/benchmarks)")


def _cb_generate_args(p: argparse.ArgumentParser) -> None:
    from benchmark.compactbench.cases import SHAPES
    from benchmark.compactbench.modes import MODES

    p.add_argument("--template", "-t", required=True, help="template key")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--difficulty", default="medium", help="easy | medium | hard | elite")
    p.add_argument("--mode", choices=sorted(MODES), default="compat", help="strict draws variables without collisions")
    p.add_argument("--shape", choices=SHAPES, default="repo",
                   help="repo: the upstream repository's GeneratedCase (its fixtures); 0.1.0: the PyPI wheel's "
                        "(no ground_truth.deferred_items)")
    _benchmarks_dir(p)


def _cb_generate(args: argparse.Namespace) -> int:
    from engine.compactbench.command import GenerateOptions, generate

    return generate(GenerateOptions(template=args.template, seed=args.seed, difficulty=args.difficulty,
                                    mode=args.mode, shape=args.shape, benchmarks_dir=args.benchmarks_dir))


def _cb_run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("models", type=Path, metavar="MODELS", help="models file with a [compactbench] section")
    add_db(p, "DuckDB file (default: results.duckdb)", alias=True)
    _benchmarks_dir(p)
    p.add_argument("--fresh", action="store_true", help="delete these runs' stored rows first")
    p.add_argument("--allow-mixed", action="store_true", help="resume even if stored rows used other settings")
    p.add_argument("--quiet", action="store_true", help="no progress bars or summary")


def _cb_run(args: argparse.Namespace) -> int:
    from engine.compactbench.command import RunOptions, run

    return run(RunOptions(models=args.models, db=db_of(args, Path("results.duckdb")),
                          benchmarks_dir=args.benchmarks_dir, fresh=args.fresh, allow_mixed=args.allow_mixed,
                          quiet=args.quiet))


def _cb_scores_args(p: argparse.ArgumentParser) -> None:
    add_db(p, "DuckDB results file (default: results.duckdb)", alias=True)
    p.add_argument("--tier", default="Elite-Light", help="Elite-Light | Elite-Mid | Elite-Aggressive")


def _cb_scores(args: argparse.Namespace) -> int:
    from engine.compactbench.command import ScoresOptions, scores

    return scores(ScoresOptions(db=db_of(args, Path("results.duckdb")), tier=args.tier))


COMMANDS: dict[str, Command] = {
    "sweep": Command("evaluate every model of MODELS.toml on a suite (resumable)", _sweep_args, _sweep),
    "report": Command("leaderboard and drill-down from a results database", _report_args, _report),
    "batches": Command("list the provider batches of a database; --cancel stops those in flight",
                       _batches_args, _batches),
    "import-scores": Command("store dataset-level scores made elsewhere", _import_args, _import),
    "import-items": Command("store per-item results made elsewhere as rows like a sweep's",
                            _import_items_args, _import_items),
    "estimate": Command("dataset scores, with intervals, of models that answered part of the items",
                        _estimate_args, _estimate),
    "data pull": Command("download the datasets of a suite (checked, resumable)", _pull_args, _pull),
    "data list": Command("show, per dataset, whether its files are under --data-dir", _data_args, _list),
    "compactbench generate": Command("print one generated case as JSON (CompactBench's GeneratedCase)",
                                     _cb_generate_args, _cb_generate),
    "compactbench run": Command("run [compactbench] of MODELS.toml into a DuckDB file (resumable)",
                                _cb_run_args, _cb_run),
    "compactbench scores": Command("print the CompactBench ranking of a results database",
                                   _cb_scores_args, _cb_scores),
    "serve": Command("the report page and item browser over HTTP (read-only)", _serve_args, _serve),
    "export": Command("every table and view as parquet, csv or jsonl files", _export_args, _export),
    "compare": Command("paired comparison of two models: differences, intervals, p", _compare_args, _compare),
    "extract": Command("read choice answers from a JSONL of responses (docs/extraction.md)", _extract_args, _extract),
    "rescore": Command("score stored responses again with the current extractor and scorers",
                       _rescore_args, _rescore),
}
GROUPS = {
    "data": "fetch datasets onto this machine (data pull) and show what is there (data list); see docs/data.md",
    "compactbench": "CompactBench: generate cases, run compactors, print the ranking (docs/compactbench.md)",
}

"""`python -m engine ...`: the command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmark.dataset import DataMissing
from benchmark.suite import SuiteError
from engine.errors import UserError
from store.db import StoreError

USAGE_ERRORS = (UserError, StoreError, SuiteError, DataMissing)
EXIT_UNREACHABLE = 3  # a model's endpoint could not be reached: its remaining items were not asked


def _sweep_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sweep", help="evaluate every model of MODELS.toml on a suite (resumable)")
    p.add_argument("models", type=Path, help="models file (TOML, [[models]] tables)")
    # Defaults (None) fall back to the models file's [sweep] table, then to the values named here.
    p.add_argument("--db", type=Path, help="DuckDB file (default: results.duckdb)")
    p.add_argument("--data-dir", type=Path, help="data folder (default: ./data)")
    p.add_argument("--suite", help="suite name or path to a suite TOML (default: moodbench)")
    p.add_argument("--datasets", help="comma-separated dataset ids (default: every dataset of the suite)")
    p.add_argument("--limit", type=int, help="items per dataset (default: the suite's sample size, 300)")
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


def _run_sweep(args: argparse.Namespace) -> int:
    from engine.sweep import SweepOptions, sweep

    # `--datasets ""` is an empty selection (an error), not "every dataset".
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()] if args.datasets is not None else None
    opts = SweepOptions(models_path=args.models, db=args.db, data_dir=args.data_dir, suite=args.suite,
                        datasets=datasets, limit=args.limit, fresh=args.fresh, quiet=args.quiet,
                        allow_mixed=args.allow_mixed, budget_usd=args.budget, pull=args.pull,
                        serve_port=args.serve)
    if args.estimate:
        from engine.estimate import estimate, print_estimate

        print_estimate(estimate(opts))
        return 0
    result = sweep(opts)
    if not args.quiet:
        from engine.summary import print_summary

        print_summary(result.db, result.suite)
    print(f"results: {result.db} ({result.rows_written} rows written this run"
          + (f", {result.errors} errors stored: run again to retry them" if result.errors else "") + ")",
          file=sys.stderr)
    if result.unreachable and not result.interrupted:
        print(f"not finished: {', '.join(result.unreachable)} could not be reached (exit status "
              f"{EXIT_UNREACHABLE}); run the same command again to ask their remaining items", file=sys.stderr)
    return 130 if result.interrupted else EXIT_UNREACHABLE if result.unreachable else 0


# Subcommands implemented elsewhere take their own argv.
_DELEGATED = {
    "report": ("engine.report", "report_main", "leaderboard and drill-down from a results database"),
    "import-scores": ("store.import_scores", "import_main", "store dataset-level scores made elsewhere"),
    "data": ("engine.data", "data_main", "fetch datasets onto this machine (data pull)"),
    "compactbench": ("engine.compactbench", "compactbench_main", "CompactBench: generate cases, run compactors"),
    "serve": ("engine.serve", "serve_main", "the report page and item browser over HTTP (read-only)"),
    "export": ("engine.export", "export_main", "every table and view as parquet, csv or jsonl files"),
    "compare": ("engine.compare", "compare_main", "paired comparison of two models: differences, intervals, p"),
    "extract": ("engine.extract_cmd", "extract_main", "read choice answers from a JSONL of responses (docs/extraction.md)"),
    "rescore": ("engine.rescore", "rescore_main", "score stored responses again with the current extractor and scorers"),
    "batches": ("engine.batches_cmd", "batches_main", "list the provider batches of a database; --cancel those in flight"),
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in _DELEGATED:
        module, func, _ = _DELEGATED[argv[0]]
        try:
            import importlib

            entry = getattr(importlib.import_module(module), func)
        except (ImportError, AttributeError):
            print(f"error: `{argv[0]}` is not available in this version", file=sys.stderr)
            return 2
        return _guard(lambda: entry(argv[1:]))

    parser = argparse.ArgumentParser(prog="python -m engine", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _sweep_parser(sub)
    for name, (_, _, help_) in _DELEGATED.items():
        sub.add_parser(name, help=help_, add_help=False)
    args = parser.parse_args(argv)
    return _guard(lambda: _run_sweep(args))


def _guard(fn) -> int:
    try:
        return fn()
    except USAGE_ERRORS as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130

"""The flags of `sweep` and of the commands around its stored answers (import-scores, import-items,
estimate, extract, rescore, batches), mapped onto their modules' options (engine/flags.py says how)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmark.errors import UserError
from engine.flags import Command, add_data_dir, add_datasets, add_db, add_suite, csv_list, db_of, given_db


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
    p.add_argument("--turns", type=int, metavar="N",
                   help="exchanges per session of interactive datasets (default: each dataset's own; "
                        "docs/interactive.md)")
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
                        serve_port=args.serve, fraction=args.fraction, until_stable=args.until_stable,
                        turns=args.turns)
    if args.until_stable and (args.estimate or args.cluster is not None):
        raise UserError("--until-stable knows its calls only as its rounds run, on this machine: "
                        "not with --estimate or --cluster")
    if args.estimate:
        from engine.sweep.forecast import forecast, print_forecast

        print_forecast(forecast(opts))
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


# ----------------------------------------------------------------- results made elsewhere
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


SWEEP = Command("evaluate every model of MODELS.toml on a suite (resumable)", _sweep_args, _sweep)
BATCHES = Command("list the provider batches of a database; --cancel stops those in flight", _batches_args, _batches)
IMPORT_SCORES = Command("store dataset-level scores made elsewhere", _import_args, _import)
IMPORT_ITEMS = Command("store per-item results made elsewhere as rows like a sweep's", _import_items_args,
                       _import_items)
ESTIMATE = Command("dataset scores, with intervals, of models that answered part of the items", _estimate_args,
                   _estimate)
EXTRACT = Command("read choice answers from a JSONL of responses (docs/extraction.md)", _extract_args, _extract)
RESCORE = Command("score stored responses again with the current extractor and scorers", _rescore_args, _rescore)

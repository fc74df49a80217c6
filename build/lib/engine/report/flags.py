"""The flags of the commands that read a results database: report, serve, export, compare."""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.flags import Command, add_db, add_suite, db_of


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


REPORT = Command("leaderboard and drill-down from a results database", _report_args, _report)
SERVE = Command("the report page and item browser over HTTP (read-only)", _serve_args, _serve)
EXPORT = Command("every table and view as parquet, csv or jsonl files", _export_args, _export)
COMPARE = Command("paired comparison of two models: differences, intervals, p", _compare_args, _compare)

"""The flags of `compactbench generate`, `compactbench run` and `compactbench scores`."""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.flags import Command, add_db, db_of


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


GROUP = "CompactBench: generate cases, run compactors, print the ranking (docs/compactbench.md)"
GENERATE = Command("print one generated case as JSON (CompactBench's GeneratedCase)", _cb_generate_args,
                   _cb_generate)
RUN = Command("run [compactbench] of MODELS.toml into a DuckDB file (resumable)", _cb_run_args, _cb_run)
SCORES = Command("print the CompactBench ranking of a results database", _cb_scores_args, _cb_scores)

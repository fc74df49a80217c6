"""`python -m engine compactbench generate|run|scores`: CompactBench on the engine.

generate  prints one case as `compactbench generate` does.
run       evaluates [compactbench] of a models file: per (target model,
          compactor, case) the drift cycles, units concurrently under each
          model's concurrency and rate limits, every step and item a row of
          results.duckdb; rerun to resume.
scores    prints the ranking views of a results database.
"""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec

from benchmark.compactbench.cases import case_json
from benchmark.compactbench.generate import generate_case
from benchmark.compactbench.modes import MODES
from benchmark.compactbench.templates import DIFFICULTIES, find_template
from engine.compactbench.run import CompactRunOptions, benchmarks_dir, run_compactbench
from benchmark.errors import UserError
from engine.errors import EXIT_INTERRUPTED, EXIT_UNREACHABLE
from store.db import StoreError, connect

__all__ = ["GenerateOptions", "RunOptions", "ScoresOptions", "benchmarks_dir", "generate", "print_scores", "run",
           "scores"]


class GenerateOptions(msgspec.Struct, frozen=True, kw_only=True):
    """`compactbench generate` (engine/compactbench/flags.py maps the flags onto these options)."""

    template: str  # template key
    seed: int = 0
    difficulty: str = "medium"  # one of DIFFICULTIES, any case
    mode: str = "compat"  # a key of MODES; strict draws variables without collisions
    shape: str = "repo"  # one of SHAPES
    benchmarks_dir: Path | None = None


RunOptions = CompactRunOptions  # `compactbench run` (the run itself: engine/compactbench/run.py)


class ScoresOptions(msgspec.Struct, frozen=True, kw_only=True):
    """`compactbench scores`."""

    db: Path = Path("results.duckdb")
    tier: str = "Elite-Light"


def generate(args: GenerateOptions) -> int:
    difficulty = args.difficulty.lower()
    if difficulty not in DIFFICULTIES:
        raise UserError(f"unknown difficulty {args.difficulty!r} (valid: {', '.join(DIFFICULTIES)})")
    _, template = find_template(benchmarks_dir(args.benchmarks_dir), args.template)
    case = generate_case(template, args.seed, difficulty, distinct=MODES[args.mode].distinct_variables)
    print(case_json(case, shape=args.shape))
    return 0


# --------------------------------------------------------------------------- run (engine/compactbench/run.py)


def run(args: RunOptions) -> int:
    result = run_compactbench(args)
    if not args.quiet:
        print_scores(args.db, result.runs)
    errors = result.errors
    print(f"results: {args.db} ({result.written} rows written this run"
          + (f", {errors} items failed or not reached: run again to retry them" if errors else "") + ")",
          file=sys.stderr)
    if result.unreachable and not result.interrupted:
        print(f"not finished: {', '.join(result.unreachable)} could not be reached (exit status "
              f"{EXIT_UNREACHABLE}); run the same command again to run their remaining units", file=sys.stderr)
    return EXIT_INTERRUPTED if result.interrupted else EXIT_UNREACHABLE if result.unreachable else 0


# --------------------------------------------------------------------------- scores


def print_scores(db: Path, runs: list[tuple[str, str, str]] | None = None, tier: str = "Elite-Light",
                 stderr: bool = True) -> None:
    con = connect(db, read_only=True)
    try:
        rows = con.execute(
            """SELECT mode, suite, difficulty, model, compactor, rank, elite_score, overall_score, drift_resistance,
                      constraint_retention, contradiction_rate, compression_ratio, n_cases_complete, n_cases,
                      qualified, reasons
               FROM compact_ranking WHERE tier = ? ORDER BY mode, suite, difficulty, model, rank_all""",
            [tier]).fetchall()
    except Exception as e:  # noqa: BLE001 - a database without CompactBench tables
        raise StoreError(f"{db} has no CompactBench results ({str(e).splitlines()[0]})") from None
    finally:
        con.close()
    from rich.console import Console
    from rich.table import Table

    console = Console(stderr=stderr)
    if not console.is_terminal:
        console.width = 120
    cols = ("compactor", "rank", "elite", "overall", "drift", "constraint", "contra", "compress", "cases", "qualifies")
    tables: dict[tuple, Table] = {}
    for r in rows:
        if runs is not None and tuple(r[:3]) not in set(runs):
            continue
        table = tables.get(tuple(r[:4]))
        if table is None:
            table = tables[tuple(r[:4])] = Table(title=f"CompactBench {r[0]}: {r[1]} / {r[2]}, target {r[3]}, "
                                                       f"tier {tier} ({db})")
            for col in cols:
                table.add_column(col, justify="left" if col in ("compactor", "qualifies") else "right")
        table.add_row(r[4], "-" if r[5] is None else str(r[5]), *(f"{v:.3f}" for v in r[6:11]), f"{r[11]:.2f}x",
                      f"{r[12]}/{r[13]}", "yes" if r[14] else "no: " + _short(r[15]))
    for table in tables.values():
        console.print(table)
    console.print("(why a run does not qualify, in full: select reasons from compact_ranking)")


def _short(reasons: str) -> str:
    """One word per failed floor (the full text is compact_ranking.reasons)."""
    words = {"compression": "compression", "contradiction_rate": "contradiction", "family": "family"}
    out = [words.get(r.split()[0], "incomplete") for r in reasons.split("; ") if r]
    return ", ".join(dict.fromkeys(out))


def scores(args: ScoresOptions) -> int:
    print_scores(args.db, tier=args.tier, stderr=False)
    return 0

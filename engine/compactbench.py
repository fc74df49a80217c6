"""`python -m engine compactbench generate|run|scores`: CompactBench on the engine.

generate  prints one case as `compactbench generate` does.
run       evaluates [compactbench] of a models file: per (target model,
          compactor, case) the drift cycles, units concurrently under each
          model's concurrency and rate limits, every step and item a row of
          results.duckdb; rerun to resume.
scores    prints the ranking views of a results database.
"""

from __future__ import annotations

import hashlib
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import msgspec
import orjson

from benchmark.compactbench import prompts
from benchmark.compactbench.cases import case_json
from benchmark.compactbench.compactors import CompactorContext
from benchmark.compactbench.config import (
    CompactBenchConfig,
    ConfigError,
    parse_section,
    plugin_base,
    suites,
    targets,
)
from benchmark.compactbench.generate import generate_case
from benchmark.compactbench.modes import MODES
from benchmark.compactbench.plan import PlannedCase, plan_cases
from benchmark.compactbench.plugins import instantiate, resolve
from engine.compactbench_units import CURRENT_USAGE, Unit, UnitRunner
from benchmark.compactbench.scoring import SCORER_VERSION
from benchmark.compactbench.templates import DIFFICULTIES, find_template, load_suite, suite_names
from benchmark.dataset import Message
from engine import runloop
from engine.config import ModelConfig, ModelsFile, base_url, load_models
from engine.errors import UserError
from engine.interrupt import Interrupt
from engine.progress import Progress, log
from providers.base import ChatResult, Provider
from providers.errors import ProviderError
from providers.limits import Limits, RateLimit
from providers.registry import make_provider
from store import compactbench as cbstore
from store.db import StoreError, connect
from store.writer import Writer

_REPO = Path(__file__).resolve().parents[1]


class GenerateOptions(msgspec.Struct, frozen=True, kw_only=True):
    """`compactbench generate` (engine/cli_parsers.py maps the flags onto these options)."""

    template: str  # template key
    seed: int = 0
    difficulty: str = "medium"  # one of DIFFICULTIES, any case
    mode: str = "compat"  # a key of MODES; strict draws variables without collisions
    shape: str = "repo"  # one of SHAPES
    benchmarks_dir: Path | None = None


class RunOptions(msgspec.Struct, frozen=True, kw_only=True):
    """`compactbench run`."""

    models: Path  # models file with a [compactbench] section
    db: Path = Path("results.duckdb")
    benchmarks_dir: Path | None = None
    fresh: bool = False  # delete these runs' stored rows first
    allow_mixed: bool = False  # resume even if stored rows used other settings
    quiet: bool = False  # no progress bars or summary


class ScoresOptions(msgspec.Struct, frozen=True, kw_only=True):
    """`compactbench scores`."""

    db: Path = Path("results.duckdb")
    tier: str = "Elite-Light"


def benchmarks_dir(arg: Path | None) -> Path:
    """The folder holding suite folders; a CompactBench checkout's `benchmarks/` works too."""
    if arg is None:
        shared = Path(os.environ.get("ENGINE_SHARED_DIR", _REPO.parent / "shared"))
        path = shared / "compactbench" / "benchmarks"
        if not path.is_dir():
            raise UserError(f"no CompactBench templates at {path}: pass --benchmarks-dir DIR "
                            "(a folder of suite folders, e.g. .../compactbench/benchmarks/public)")
    else:
        path = arg
        if not path.is_dir():
            raise UserError(f"--benchmarks-dir {path} is not a folder")
    if not any(any((path / s).glob("*.yaml")) for s in suite_names(path)) and (path / "public").is_dir():
        path = path / "public"
    return path


def generate(args: GenerateOptions) -> int:
    difficulty = args.difficulty.lower()
    if difficulty not in DIFFICULTIES:
        raise UserError(f"unknown difficulty {args.difficulty!r} (valid: {', '.join(DIFFICULTIES)})")
    _, template = find_template(benchmarks_dir(args.benchmarks_dir), args.template)
    case = generate_case(template, args.seed, difficulty, distinct=MODES[args.mode].distinct_variables)
    print(case_json(case, shape=args.shape))
    return 0


# --------------------------------------------------------------------------- models


class ModelPool:
    """Per models.toml entry: its limits (the sweep's: own and account rates, adaptive
    concurrency), a cap on calls in flight shared by every call that uses it (as
    target or as compactor model), and providers built lazily (plain, and JSON-mode)."""

    def __init__(self, cfg: ModelsFile):
        self.models = {m.name: m for m in cfg.models}
        self.limits = _build_limits(cfg)
        self.slots = {m.name: anyio.Semaphore(m.concurrency) for m in cfg.models}
        self._providers: dict[tuple[str, bool], Provider] = {}

    def provider(self, name: str, json_object: bool) -> Provider:
        p = self._providers.get((name, json_object))
        if p is None:
            m = self.models[name]
            gen = generation(m)
            if json_object and m.provider == "openai":  # other wire APIs have no response_format
                gen["response_format"] = prompts.JSON_RESPONSE_FORMAT
            extra = {"reasoning": m.reasoning} if hasattr(m, "reasoning") else {}
            p = self._providers[(name, json_object)] = make_provider(
                m.provider, base_url=base_url(m), model=m.model, api_key=m.api_key(), generation=gen,
                limits=self.limits[name], timeout_s=m.timeout_s, max_retries=m.max_retries,
                max_connections=m.concurrency, backoff_base_s=m.backoff_s, **extra)
        return p

    async def ask(self, name: str, prompt: str, json_object: bool = False) -> ChatResult:
        async with self.slots[name]:
            return await self.provider(name, json_object).chat((Message("user", prompt),))

    async def aclose(self) -> None:
        for p in self._providers.values():
            await p.aclose()


def _build_limits(cfg: ModelsFile) -> dict[str, Limits]:
    try:  # the sweep's, so that a model is limited the same way in both benchmarks
        from engine.sweep import build_limits
    except ImportError:
        accounts = {n: RateLimit(a.rpm, a.tpm) for n, a in cfg.accounts.items()}
        return {m.name: Limits(RateLimit(m.rpm, m.tpm), accounts.get(m.account) if m.account else None)
                for m in cfg.models}
    return build_limits(cfg)


def generation(m: ModelConfig) -> dict[str, Any]:
    """CompactBench's request defaults (temperature 0, max_tokens 2048) under the model's own settings."""
    return prompts.REQUEST_DEFAULTS | m.generation()


class BoundLLM:
    """The `ctx.llm` a compactor calls: one models.toml entry, its limits and retries."""

    def __init__(self, pool: ModelPool, name: str):
        self.pool, self.name = pool, name

    async def complete(self, prompt: str, *, json_object: bool = False) -> str:
        usage = CURRENT_USAGE.get()
        try:
            res = await self.pool.ask(self.name, prompt, json_object)
        except ProviderError as e:
            if usage is not None:
                usage.attempts += e.attempts
            raise
        if usage is not None:
            usage.add(res)
        return res.text


# --------------------------------------------------------------------------- run


def _stamp(mode: str, target: ModelConfig, spec_json: str, comp_model: ModelConfig | None) -> str:
    parts = [mode, prompts.prompts_hash(), SCORER_VERSION, sorted(generation(target).items()), spec_json,
             sorted(generation(comp_model).items()) if comp_model else None]
    return hashlib.blake2b(orjson.dumps(parts, option=orjson.OPT_NON_STR_KEYS), digest_size=6).hexdigest()


def run(args: RunOptions) -> int:
    models = load_models(args.models)
    names = [m.name for m in models.models]
    try:
        cfg = parse_section(models.compactbench, names, str(args.models))
    except ConfigError as e:
        raise UserError(str(e)) from None
    mode = MODES[cfg.mode]
    bdir = benchmarks_dir(args.benchmarks_dir)
    cases = plan_cases([load_suite(bdir, s) for s in suites(cfg)], cfg, mode)
    base = plugin_base(args.models)
    classes = {c.name: resolve(c.kind, c.plugin, base_dir=base) for c in cfg.compactors}
    by_name = {m.name: m for m in models.models}
    specs = {c.name: orjson.dumps({"kind": c.kind, "plugin": c.plugin, "model": c.model, "options": c.options,
                                   "version": getattr(classes[c.name], "version", None)},
                                  option=orjson.OPT_SORT_KEYS).decode() for c in cfg.compactors}
    stamps = {(t, c.name): _stamp(mode.name, by_name[t], specs[c.name], by_name.get(c.model or t))
              for t in targets(cfg, names) for c in cfg.compactors}
    for c in cfg.compactors:  # a constructor that rejects its options fails here, before any call
        try:
            instantiate(classes[c.name], CompactorContext(mode=mode, llm=BoundLLM(None, c.model or "target"),
                                                          options=c.options))
        except Exception as e:  # noqa: BLE001 - the plugin's own error, reported in one line
            raise UserError(f"{args.models}: compactor {c.name!r} cannot be built: {type(e).__name__}: {e}") from None
    for used in dict.fromkeys([t for t, _ in stamps] + [c.model for c in cfg.compactors if c.model]):
        m = by_name[used]
        if m.api_key_env and not m.api_key():
            raise UserError(f"{args.models}: model {used!r} is used by [compactbench] but its api_key_env "
                            f"variable {m.api_key_env} is not set")

    con = connect(args.db)
    try:
        cbstore.ensure_compactbench(con)
        if args.fresh:
            n = cbstore.delete_units(con, mode.name, list(stamps), [p.id for p in cases])
            log(f"--fresh: deleted {n} stored rows", quiet=args.quiet)
        conflicts = cbstore.stamp_conflicts(con, mode.name, stamps)
        if conflicts and not args.allow_mixed:
            raise UserError(f"{args.db} holds rows made with other settings ({'; '.join(conflicts[:3])}): rerun "
                            "with --fresh to redo them, or --allow-mixed to keep both")
        now = datetime.now(UTC)
        cbstore.record_cases(con, [_case_row(mode.name, cfg, p) for p in cases])
        keys = []
        for suite, version in dict.fromkeys((p.suite, p.suite_version) for p in cases):
            ids = [p.id for p in cases if p.suite == suite]
            n_templates = len({p.case.template_key for p in cases if p.suite == suite})
            for (t, c), stamp in stamps.items():
                key = (mode.name, suite, cfg.difficulty, t, c)
                cbstore.start_run(con, key, suite_version=version, seed_group=cfg.seed_group,
                                  case_slots=cfg.case_slots, drift_cycles=cfg.drift_cycles, n_templates=n_templates,
                                  stamp=stamp, spec_json=specs[c], case_ids=ids, now=now)
                keys.append(key)
        interrupted, written, errors = _execute(args, models, cfg, cases, classes, stamps, con)
        cbstore.finish_runs(con, keys, "interrupted" if interrupted else "complete", datetime.now(UTC))
    finally:
        con.close()
    if not args.quiet:
        print_scores(args.db, sorted({k[:3] for k in keys}))
    print(f"results: {args.db} ({written} rows written this run"
          + (f", {errors} items failed or not reached: run again to retry them" if errors else "") + ")",
          file=sys.stderr)
    return 130 if interrupted else 0


def _case_row(mode: str, cfg: CompactBenchConfig, p: PlannedCase) -> tuple:
    c = p.case
    return (mode, c.case_id, p.suite, p.suite_version, c.template_key, c.template_version, p.family,
            p.family_from_key, cfg.seed_group, p.slot, c.seed, c.difficulty, len(c.evaluation_items),
            len(c.transcript.turns), p.case_tokens)


def _execute(args, models: ModelsFile, cfg: CompactBenchConfig, cases: list[PlannedCase],
             classes: dict[str, type], stamps: dict[tuple[str, str], str], con) -> tuple[bool, int, int]:
    mode = MODES[cfg.mode]
    cycles = cfg.drift_cycles + 1
    pairs = list(stamps)
    done = cbstore.done_item_counts(con, mode.name, pairs, [p.id for p in cases], cfg.drift_cycles)
    expected = {p.id: cycles * len(p.case.evaluation_items) for p in cases}
    partial = [(t, c, p.id) for t, c in pairs for p in cases if done.get((t, c, p.id), 0) < expected[p.id]]
    steps, items = cbstore.stored_units(con, mode.name, partial, cfg.drift_cycles)
    progress = Progress(quiet=args.quiet)
    for t in dict.fromkeys(t for t, _ in pairs):
        n_comp = sum(1 for tt, _ in pairs if tt == t)
        progress.add(t, n_comp * sum(expected.values()),
                     sum(min(done.get((t, c, p.id), 0), expected[p.id]) for tt, c in pairs if tt == t for p in cases))
    specs = {c.name: c for c in cfg.compactors}
    return runloop.run(_lanes, args, models, mode, cycles, cases, classes, specs, stamps, done, expected,
                       steps, items, progress, con)


async def _lanes(args, models, mode, cycles, cases, classes, specs, stamps, done, expected, steps, items,
                 progress: Progress, con) -> tuple[bool, int, int]:
    pool = ModelPool(models)
    writer = Writer(con, insert=cbstore.insert_rows)

    def make_compactor(target: str, name: str) -> Any:
        spec = specs[name]
        llm = BoundLLM(pool, spec.model or target)
        return instantiate(classes[name], CompactorContext(mode=mode, llm=llm, options=spec.options))

    def on_items(model: str, n: int, ok: bool) -> None:
        c = progress.counters[model]
        c.done += n
        if not ok:
            c.errors += n

    runner = UnitRunner(mode, cycles, ask=pool.ask, make_compactor=make_compactor, put=writer.put,
                        on_items=on_items)

    def units(target: str):
        # Lazily, case by case: nothing proportional to the plan is held besides the cases.
        for p in cases:
            for t, c in stamps:
                if t == target and done.get((t, c, p.id), 0) < expected[p.id]:
                    key = (t, c, p.id)
                    yield Unit(t, c, p, stamps[t, c], steps.get(key, {}), items.get(key, set()))

    async def lane(target: str, width: int) -> None:
        work = units(target)

        async def worker() -> None:
            for u in work:  # one shared generator; it never awaits, so `next` cannot interleave
                await runner.run(u)

        async with anyio.create_task_group() as tg:
            for _ in range(width):
                tg.start_soon(worker)

    interrupt = Interrupt()

    async with anyio.create_task_group() as tg:
        tg.start_soon(writer.run)
        tg.start_soon(progress.show)
        tg.start_soon(interrupt.watch)
        try:
            with interrupt.scope:
                async with anyio.create_task_group() as lanes:
                    for t in dict.fromkeys(t for t, _ in stamps):
                        # A unit mostly waits on its own calls: a few more units than
                        # call slots keep the model busy between a unit's steps.
                        lanes.start_soon(lane, t, 2 * pool.models[t].concurrency)
        finally:
            with anyio.CancelScope(shield=True):
                await pool.aclose()
                await writer.close()
                await writer.finished.wait()
            tg.cancel_scope.cancel()
    for line in progress.summary_lines():
        log(line, quiet=args.quiet)
    return interrupt.happened, writer.rows_written, sum(c.errors for c in progress.counters.values())


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

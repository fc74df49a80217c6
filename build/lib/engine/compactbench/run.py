"""`compactbench run`: [compactbench] of a models file evaluated into a DuckDB file; rerun to resume.

Per (target model, compactor, case) one unit (engine/compactbench/units.py): its drift
cycles, every step and item a row. Each target model is one lane (engine/run/workers.py)
of units, all in one RunContext (engine/run/context.py): the sweep's skeleton, limits
and interrupt handling. The command is engine/compactbench/command.py (its flags:
engine/compactbench/flags.py).
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import duckdb
import msgspec
import orjson

from benchmark.compactbench import prompts
from benchmark.compactbench.compactors import CompactorContext
from benchmark.compactbench.config import (
    CompactBenchConfig,
    ConfigError,
    parse_section,
    plugin_base,
    suites,
    targets,
)
from benchmark.compactbench.modes import MODES, Mode
from benchmark.compactbench.plan import PlannedCase, plan_cases
from benchmark.compactbench.plugins import instantiate, resolve
from benchmark.compactbench.scoring import SCORER_VERSION
from benchmark.compactbench.templates import load_template_set, suite_names
from benchmark.dataset import Message
from engine.compactbench.units import CURRENT_USAGE, Unit, UnitRunner
from engine.config.load import load_models
from engine.config.models import ModelConfig, ModelsFile, base_url
from benchmark.errors import UserError
from engine.run.progress import Progress, log
from engine.run.context import RunContext, close_stale_runs, execute
from engine.run.endpoints import build_breakers, build_limits, unreachable_models
from engine.run.workers import STOP, run_workers
from providers.base import ChatResult, Provider
from providers.breaker import Breaker
from providers.errors import ProviderError, Unreachable
from providers.registry import make_provider
from store.side import compactbench as cbstore
from store.db import connect

_REPO = Path(__file__).resolve().parents[2]

RunKey = tuple[str, str, str, str, str]  # (mode, suite, difficulty, model, compactor)


class CompactRunOptions(msgspec.Struct, frozen=True, kw_only=True):
    """Flags of `compactbench run`."""

    models: Path
    db: Path = Path("results.duckdb")
    benchmarks_dir: Path | None = None
    fresh: bool = False
    allow_mixed: bool = False
    quiet: bool = False


class CompactRunResult(msgspec.Struct, frozen=True, kw_only=True):
    interrupted: bool
    written: int  # rows written this run
    errors: int  # items failed or not reached
    runs: list[tuple[str, str, str]]  # (mode, suite, difficulty) of the runs made
    unreachable: list[str] = []  # models given up because their endpoint could not be reached


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



# --------------------------------------------------------------------------- models


class ModelPool:
    """Per models.toml entry: its limits (the sweep's: own and account rates, adaptive
    concurrency), a cap on calls in flight shared by every call that uses it (as
    target or as compactor model), and providers built lazily (plain, and JSON-mode)."""

    def __init__(self, cfg: ModelsFile, breakers: dict[str, Breaker] | None = None):
        self.models = {m.name: m for m in cfg.models}
        self.limits = build_limits(cfg)  # the sweep's: a model is limited the same way in both benchmarks
        self.breakers = breakers or {}  # the sweep's too: a dead endpoint is given up, its units left for later
        self.slots = {m.name: anyio.Semaphore(m.concurrency) for m in cfg.models}
        self._providers: dict[tuple[str, bool], Provider] = {}

    def provider(self, name: str, json_object: bool) -> Provider:
        p = self._providers.get((name, json_object))
        if p is None:
            m = self.models[name]
            gen = generation(m)
            if json_object and m.provider == "openai":  # other wire APIs have no response_format
                gen["response_format"] = prompts.JSON_RESPONSE_FORMAT
            extra: dict[str, Any] = {"reasoning": m.reasoning} if hasattr(m, "reasoning") else {}
            p = self._providers[(name, json_object)] = make_provider(
                m.provider, base_url=base_url(m), model=m.model, api_key=m.api_key(), generation=gen,
                limits=self.limits[name], timeout_s=m.timeout_s, max_retries=m.max_retries,
                max_connections=m.concurrency, backoff_base_s=m.backoff_s, breaker=self.breakers.get(name),
                **extra)
        return p

    async def ask(self, name: str, prompt: str, json_object: bool = False) -> ChatResult:
        async with self.slots[name]:
            return await self.provider(name, json_object).chat((Message("user", prompt),))

    async def aclose(self) -> None:
        for p in self._providers.values():
            await p.aclose()


def generation(m: ModelConfig) -> dict[str, Any]:
    """CompactBench's request defaults (temperature 0, max_tokens 2048) under the model's own settings."""
    return prompts.REQUEST_DEFAULTS | m.generation()


class BoundLLM:
    """The `ctx.llm` a compactor calls: one models.toml entry, its limits and retries."""

    def __init__(self, pool: ModelPool | None, name: str):
        self.pool, self.name = pool, name  # None: a compactor built only to check its options

    async def complete(self, prompt: str, *, json_object: bool = False) -> str:
        assert self.pool is not None, "a compactor checked at planning time does not call its model"
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


class _Finish:
    """The RunRecord of compact_runs: started with the plan; a run that raised stays `running`, as before."""

    def __init__(self, con: duckdb.DuckDBPyConnection, keys: list[RunKey]):
        self.con, self.keys = con, keys

    def start(self) -> None:
        pass  # cbstore.start_run, per key, while planning: it replaces each run's plan

    def end(self, outcome: str) -> None:
        # compact_runs knows complete and interrupted only (no budget): a model given up left units unasked
        cbstore.finish_runs(self.con, self.keys, "complete" if outcome == "complete" else "interrupted",
                            datetime.now(UTC))

    def abort(self, outcome: str) -> None:
        pass


def run_compactbench(opts: CompactRunOptions) -> CompactRunResult:
    models = load_models(opts.models)
    names = [m.name for m in models.models]
    try:
        cfg = parse_section(models.compactbench, names, str(opts.models))
    except ConfigError as e:
        raise UserError(str(e)) from None
    mode = MODES[cfg.mode]
    bdir = benchmarks_dir(opts.benchmarks_dir)
    cases = plan_cases([load_template_set(bdir, s) for s in suites(cfg)], cfg, mode)
    base = plugin_base(opts.models)
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
            raise UserError(f"{opts.models}: compactor {c.name!r} cannot be built: {type(e).__name__}: {e}") from None
    for used in dict.fromkeys([t for t, _ in stamps] + [c.model for c in cfg.compactors if c.model]):
        m = by_name[used]
        if m.api_key_env and not m.api_key():
            raise UserError(f"{opts.models}: model {used!r} is used by [compactbench] but its api_key_env "
                            f"variable {m.api_key_env} is not set")

    con = connect(opts.db)
    try:
        cbstore.ensure_compactbench(con)
        close_stale_runs(con)  # runs a killed process left `running`: we hold the write lock now
        if opts.fresh:
            n = cbstore.delete_units(con, mode.name, list(stamps), [p.id for p in cases])
            log(f"--fresh: deleted {n} stored rows", quiet=opts.quiet)
        conflicts = cbstore.stamp_conflicts(con, mode.name, stamps)
        if conflicts and not opts.allow_mixed:
            raise UserError(f"{opts.db} holds rows made with other settings ({'; '.join(conflicts[:3])}): rerun "
                            "with --fresh to redo them, or --allow-mixed to keep both")
        now = datetime.now(UTC)
        cbstore.record_cases(con, [_case_row(mode.name, cfg, p) for p in cases])
        keys: list[RunKey] = []
        for suite, version in dict.fromkeys((p.suite, p.suite_version) for p in cases):
            ids = [p.id for p in cases if p.suite == suite]
            n_templates = len({p.case.template_key for p in cases if p.suite == suite})
            for (t, comp), stamp in stamps.items():
                key = (mode.name, suite, cfg.difficulty, t, comp)
                cbstore.start_run(con, key, suite_version=version, seed_group=cfg.seed_group,
                                  case_slots=cfg.case_slots, drift_cycles=cfg.drift_cycles, n_templates=n_templates,
                                  stamp=stamp, spec_json=specs[comp], case_ids=ids, now=now)
                keys.append(key)
        units = _plan_units(con, models=models, cfg=cfg, cases=cases, classes=classes, stamps=stamps)
        progress = units.progress(quiet=opts.quiet)
        breakers = build_breakers(models.models, quiet=opts.quiet)
        context = functools.partial(RunContext, con, progress=progress, quiet=opts.quiet, insert=cbstore.insert_rows,
                                    breakers=breakers)
        interrupted, written, errors = execute(lambda ctx: _lanes(ctx, units), context, record=_Finish(con, keys))
    finally:
        con.close()
    gone = unreachable_models(breakers)
    for name, b in gone.items():
        log(f"unreachable: {name}: {b.endpoint} could not be reached for {b.unreachable_after_s:g} s ({b.reason}): "
            "its remaining units were not run")
    return CompactRunResult(interrupted=interrupted, written=written, errors=errors,
                            runs=sorted({k[:3] for k in keys}), unreachable=list(gone))


def _case_row(mode: str, cfg: CompactBenchConfig, p: PlannedCase) -> tuple:
    c = p.case
    return (mode, c.case_id, p.suite, p.suite_version, c.template_key, c.template_version, p.family,
            p.family_from_key, cfg.seed_group, p.slot, c.seed, c.difficulty, len(c.evaluation_items),
            len(c.transcript.turns), p.case_tokens)


class _Units(msgspec.Struct, kw_only=True):
    """The units to run (lazily, per target model) and what a resumed unit reuses."""

    models: ModelsFile
    mode: Mode
    cycles: int
    cases: list[PlannedCase]
    classes: dict[str, type]
    specs: dict[str, Any]  # compactor name -> its [compactbench] entry
    stamps: dict[tuple[str, str], str]  # (target, compactor) -> stamp
    done: dict[tuple[str, str, str], int]  # (target, compactor, case) -> items stored
    expected: dict[str, int]  # case -> items of a complete unit
    steps: dict[tuple[str, str, str], dict[tuple[int, str], str]]
    items: dict[tuple[str, str, str], set[tuple[int, str]]]

    def targets(self) -> list[str]:
        return list(dict.fromkeys(t for t, _ in self.stamps))

    def of(self, target: str) -> Iterator[Unit]:
        # Lazily, case by case: nothing proportional to the plan is held besides the cases.
        for p in self.cases:
            for t, c in self.stamps:
                if t == target and self.done.get((t, c, p.id), 0) < self.expected[p.id]:
                    key = (t, c, p.id)
                    yield Unit(t, c, p, self.stamps[t, c], self.steps.get(key, {}), self.items.get(key, set()))

    def progress(self, *, quiet: bool) -> Progress:
        progress = Progress(quiet=quiet)
        pairs = list(self.stamps)
        for t in self.targets():
            n_comp = sum(1 for tt, _ in pairs if tt == t)
            progress.add(t, n_comp * sum(self.expected.values()),
                         sum(min(self.done.get((t, c, p.id), 0), self.expected[p.id])
                             for tt, c in pairs if tt == t for p in self.cases))
        return progress


def _plan_units(con: duckdb.DuckDBPyConnection, *, models: ModelsFile, cfg: CompactBenchConfig,
                cases: list[PlannedCase], classes: dict[str, type], stamps: dict[tuple[str, str], str]) -> _Units:
    mode = MODES[cfg.mode]
    pairs = list(stamps)
    done = cbstore.done_item_counts(con, mode.name, pairs, [p.id for p in cases], cfg.drift_cycles)
    expected = {p.id: (cfg.drift_cycles + 1) * len(p.case.evaluation_items) for p in cases}
    partial = [(t, c, p.id) for t, c in pairs for p in cases if done.get((t, c, p.id), 0) < expected[p.id]]
    steps, items = cbstore.stored_units(con, mode.name, partial, cfg.drift_cycles)
    return _Units(models=models, mode=mode, cycles=cfg.drift_cycles + 1, cases=cases, classes=classes,
                  specs={c.name: c for c in cfg.compactors}, stamps=stamps, done=done, expected=expected,
                  steps=steps, items=items)


async def _lanes(ctx: RunContext, units: _Units) -> tuple[bool, int, int]:
    pool = ModelPool(units.models, ctx.breakers)
    progress = ctx.progress

    def make_compactor(target: str, name: str) -> Any:
        spec = units.specs[name]
        llm = BoundLLM(pool, spec.model or target)
        return instantiate(units.classes[name], CompactorContext(mode=units.mode, llm=llm, options=spec.options))

    def on_items(model: str, n: int, ok: bool) -> None:
        c = progress.counters[model]
        c.done += n
        if not ok:
            c.errors += n

    runner = UnitRunner(units.mode, units.cycles, ask=pool.ask, make_compactor=make_compactor,
                        put=ctx.answers.put, on_items=on_items)

    async def run_unit(u: Unit) -> object:
        gone = False
        try:
            await runner.run(u)
        except* Unreachable:  # from a call, or from several of a cycle's items at once
            gone = True
        # The endpoint's breaker gave up: this target's units stay unasked (the next run resumes them).
        return STOP if gone else None
    ctx.on_close(pool.aclose)
    async with ctx.running(), anyio.create_task_group() as lanes:
        for t in units.targets():
            # A unit mostly waits on its own calls: a few more units than
            # call slots keep the model busy between a unit's steps.
            lanes.start_soon(functools.partial(run_workers, units.of(t), width=2 * pool.models[t].concurrency,
                                               handle=run_unit))
    for line in progress.summary_lines():
        log(line, quiet=ctx.quiet)
    return ctx.interrupted, ctx.writer.rows_written, ctx.errors()

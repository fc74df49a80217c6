"""The `[compactbench]` section of models.toml, typed and validated.

    [compactbench]
    mode = "compat"                 # or "strict" (docs/compactbench.md)
    suite = "elite_practice"        # a folder of --benchmarks-dir, or a list of them
    templates = []                  # template keys; empty = the whole suite
    difficulty = "medium"
    case_slots = 5                  # slots per template (CompactBench's --case-count)
    seed_group = "default"
    drift_cycles = 2                # cycles after cycle 0
    targets = ["gpt-4o"]            # [[models]] names; empty = every model

    [[compactbench.compactors]]
    name = "summary"                # the key stored with results
    kind = "naive-summary"          # a built-in, or plugin = "pkg.mod:Class" / "file.py:Class"
    model = "gpt-4o-mini"           # [[models]] name for its calls; default: the target model
    options = {}                    # handed to the compactor (truncate-last-n: n)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from benchmark.errors import UserError
from benchmark.compactbench.compactors import BUILT_INS
from benchmark.compactbench.modes import ModeName
from benchmark.compactbench.templates import Difficulty


class ConfigError(UserError):
    """The section is invalid; the message names the key."""


class CompactorSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    name: str
    kind: str | None = None
    plugin: str | None = None
    model: str | None = None
    options: dict[str, Any] = {}


DEFAULT_COMPACTORS = (
    CompactorSpec(name="full-transcript", kind="full-transcript"),
    CompactorSpec(name="truncate-last-n", kind="truncate-last-n"),
    CompactorSpec(name="naive-summary", kind="naive-summary"),
    CompactorSpec(name="structured-state", kind="structured-state"),
)


class CompactBenchConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Defaults are `compactbench run`'s (0.1.0), so an empty section means the same run.
    mode: ModeName = "compat"
    suite: str | tuple[str, ...] = "starter"
    templates: tuple[str, ...] = ()
    difficulty: Difficulty = "medium"
    case_slots: int = 3
    seed_group: str = "default"
    drift_cycles: int = 2
    targets: tuple[str, ...] = ()
    compactors: tuple[CompactorSpec, ...] = DEFAULT_COMPACTORS


def parse_section(raw: dict[str, Any], model_names: list[str], where: str) -> CompactBenchConfig:
    """Validate `raw` (the section as TOML gave it) against the models of the same file."""
    try:
        cfg = msgspec.convert(raw, CompactBenchConfig)
    except msgspec.ValidationError as e:
        msg = str(e).replace("Object contains unknown field", "unknown key").replace(
            "Object missing required field", "missing key")
        raise ConfigError(f"{where}: [compactbench]: {msg.replace('$.', 'compactbench.')}") from None
    pre = f"{where}: [compactbench]"
    if not suites(cfg):
        raise ConfigError(f"{pre}.suite: name at least one suite")
    if cfg.case_slots < 1:
        raise ConfigError(f"{pre}.case_slots must be >= 1")
    if not 0 <= cfg.drift_cycles <= 5:
        raise ConfigError(f"{pre}.drift_cycles must be between 0 and 5 (CompactBench's range)")
    known = set(model_names)
    for t in cfg.targets:
        if t not in known:
            raise ConfigError(f"{pre}.targets: {t!r} is not the name of a [[models]] entry "
                              f"(names: {', '.join(model_names)})")
    if len(set(cfg.targets)) != len(cfg.targets):
        raise ConfigError(f"{pre}.targets: a model is listed twice")
    if not cfg.compactors:
        raise ConfigError(f"{pre}: no compactors")
    seen: set[str] = set()
    for i, c in enumerate(cfg.compactors):
        cw = f"{pre}.compactors[{i}] (name {c.name!r})"
        if not c.name.strip() or any(ch in c.name for ch in "/:"):
            raise ConfigError(f"{cw}: name must be non-empty, without '/' or ':'")
        if c.name in seen:
            raise ConfigError(f"{cw}: duplicate compactor name: names are the key stored with results")
        seen.add(c.name)
        if (c.kind is None) == (c.plugin is None):
            raise ConfigError(f"{cw}: give exactly one of `kind` (built-in: {', '.join(BUILT_INS)}) or `plugin`")
        if c.kind is not None and c.kind not in BUILT_INS:
            raise ConfigError(f"{cw}: unknown kind {c.kind!r} (built-in: {', '.join(BUILT_INS)})")
        if c.model is not None and c.model not in known:
            raise ConfigError(f"{cw}: model {c.model!r} is not the name of a [[models]] entry")
    return cfg


def suites(cfg: CompactBenchConfig) -> list[str]:
    return [cfg.suite] if isinstance(cfg.suite, str) else list(dict.fromkeys(cfg.suite))


def targets(cfg: CompactBenchConfig, model_names: list[str]) -> list[str]:
    return list(cfg.targets) or list(model_names)


def plugin_base(models_path: Path) -> Path:
    """Relative `file.py:Class` plugin paths are read from the models file's folder."""
    return models_path.resolve().parent

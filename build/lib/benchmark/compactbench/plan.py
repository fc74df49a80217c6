"""Which cases a run covers: the suite's templates x case slots, seeded as the mode says."""

from __future__ import annotations

import msgspec

from benchmark.compactbench.cases import GeneratedCase
from benchmark.compactbench.config import CompactBenchConfig
from benchmark.compactbench.generate import derive_case_seed, generate_case
from benchmark.compactbench.modes import Mode
from benchmark.compactbench.scoring import ScoringError, run_check
from benchmark.compactbench.templates import TemplateSet, Template, TemplateError
from benchmark.compactbench.tokens import transcript_tokens


class PlannedCase(msgspec.Struct, frozen=True):
    case: GeneratedCase
    suite: str
    suite_version: str
    slot: int
    family: str
    family_from_key: str
    case_tokens: int  # cl100k_base tokens of the case transcript

    @property
    def id(self) -> str:
        return self.case.case_id


def family_from_key(template_key: str) -> str:
    """0.1.0's `_infer_family`: strip a trailing _starter_v<N>, _elite_v<N> or _v<N>."""
    for suffix in ("_starter_v", "_elite_v", "_v"):
        i = template_key.rfind(suffix)
        if i > 0:
            return template_key[:i]
    return template_key


def seed_namespace(suite: TemplateSet, template: Template, mode: Mode) -> str:
    if mode.seed_namespace == "suite":
        return f"{suite.key}@{suite.version}"
    return f"{suite.key}@{suite.version}/{template.key}@{template.version}"


def select_templates(suites: list[TemplateSet], keys: tuple[str, ...]) -> list[tuple[TemplateSet, Template]]:
    """The suites' templates in order, or only those named by `keys`."""
    pairs = [(s, t) for s in suites for t in s.templates]
    if not keys:
        return pairs
    known = {t.key for _, t in pairs}
    unknown = [k for k in keys if k not in known]
    if unknown:
        raise TemplateError(f"no template(s) {', '.join(unknown)} in suite(s) {', '.join(s.key for s in suites)} "
                            f"(known: {', '.join(sorted(known))})")
    return [(s, t) for s, t in pairs if t.key in keys]


def plan_cases(suites: list[TemplateSet], cfg: CompactBenchConfig, mode: Mode) -> list[PlannedCase]:
    """Every case of the run, generated up front (a few hundred small values), checked
    for scorable items so that a bad template fails before any model is called."""
    out = []
    for suite, template in select_templates(suites, cfg.templates):
        ns = seed_namespace(suite, template, mode)
        for slot in range(cfg.case_slots):
            case = generate_case(template, derive_case_seed(ns, cfg.seed_group, slot), cfg.difficulty,
                                 distinct=mode.distinct_variables)
            for item in case.evaluation_items:
                try:
                    run_check(item.expected, "")
                except ScoringError as e:
                    raise TemplateError(f"template {template.key}: evaluation item {item.key!r}: {e}") from None
            out.append(PlannedCase(case, suite.key, suite.version, slot, template.family, family_from_key(template.key),
                                   transcript_tokens(case.transcript.turns)))
    return out

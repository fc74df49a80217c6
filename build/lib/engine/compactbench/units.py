"""One unit = (target model, compactor, case): its drift cycles in order.

Cycle n: (n >= 1) the target model writes the next assistant turn from the
previous artifact; the compactor compacts; the target model answers every
evaluation item from the artifact alone; each answer is scored. Every step
and every item becomes a row. Stored `ok` rows are reused, so a resumed unit
starts at its first missing step and asks nothing twice.

In engine/ (not benchmark/compactbench/) because it speaks the provider seam
(ChatResult, ProviderError) and builds the store's rows; the benchmark package
stays pure (cases, compaction, scoring).
"""

from __future__ import annotations

import random
import traceback
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

import anyio
import msgspec

from benchmark.compactbench import lexicons, prompts
from benchmark.compactbench.artifact import CompactionArtifact, from_json, from_obj, render_for_prompt, to_json
from benchmark.compactbench.cases import EvaluationItem, Transcript, Turn
from benchmark.compactbench.generate import derive_seed
from benchmark.compactbench.modes import Mode
from benchmark.compactbench.plan import PlannedCase
from benchmark.compactbench.scoring import SCORER_VERSION, score_item
from benchmark.compactbench.tokens import artifact_tokens, transcript_tokens
from providers.base import ChatResult
from providers.errors import ProviderError, Unreachable
from store.side.compactbench import ItemRow, StepRow


class Usage:
    """Model calls made inside one compaction step (the engine's LLM handle adds to it)."""

    __slots__ = ("attempts", "calls", "input_tokens", "latency_ms", "model_version", "output_tokens")

    def __init__(self) -> None:
        self.calls = self.attempts = self.input_tokens = self.output_tokens = 0
        self.latency_ms = 0.0
        self.model_version: str | None = None

    def add(self, res: ChatResult) -> None:
        self.calls += 1
        self.attempts += res.attempts
        self.latency_ms += res.latency_ms
        self.input_tokens += res.input_tokens or 0
        self.output_tokens += res.output_tokens or 0
        self.model_version = res.model_version or self.model_version


CURRENT_USAGE: ContextVar[Usage | None] = ContextVar("compactbench_usage", default=None)


class Unit(msgspec.Struct):
    model: str
    compactor: str
    planned: PlannedCase
    stamp: str
    steps: dict[tuple[int, str], str] = {}  # stored ok steps: (cycle, step) -> output
    items: set[tuple[int, str]] = set()  # stored ok items: (cycle, item_key)


def continuation_prompt(case_seed: int, cycle: int) -> str:
    """The user turn opening drift cycle `cycle` (0.1.0's select_continuation_prompt)."""
    return random.Random(derive_seed(case_seed, f"continuation_prompt_{cycle}")).choice(lexicons.CONTINUATION_PROMPTS)


def _now() -> datetime:
    return datetime.now(UTC)


def _detail(e: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(e), e)).strip()[:1000]


class UnitRunner:
    """Runs units against the engine's callables (so it needs no provider or database)."""

    def __init__(self, mode: Mode, cycles: int, *, ask: Callable[[str, str], Awaitable[ChatResult]],
                 make_compactor: Callable[[str, str], Any], put: Callable[[Any], Awaitable[None]],
                 on_items: Callable[[str, int, bool], None] = lambda model, n, ok: None):
        self.mode, self.cycles = mode, cycles
        self.ask, self.make_compactor, self.put, self.on_items = ask, make_compactor, put, on_items

    async def run(self, u: Unit) -> None:
        case = u.planned.case
        full = case.transcript
        artifact: CompactionArtifact | None = None
        compactor: list[Any] = []  # built on first use: a resumed unit may need none
        for cycle in range(self.cycles):
            given = full if not self.mode.strip_tags else full.without_tags()
            if cycle >= 1:
                assert artifact is not None
                reply = await self._continue(u, cycle, artifact)
                if reply is None:
                    return self._skip(u, cycle)
                next_id = max((t.id for t in full.turns), default=-1) + 1
                new = (Turn(next_id, "user", continuation_prompt(case.seed, cycle), ("continuation",)),
                       Turn(next_id + 1, "assistant", reply, ("continuation",)))
                full = full.extended(*new)
                given = Transcript(new) if self.mode.incremental else full
                if self.mode.strip_tags:
                    given = given.without_tags()
            stored = u.steps.get((cycle, "compact"))
            if stored is not None:
                artifact = from_json(stored)
            else:
                artifact = await self._compact(u, cycle, compactor, given, artifact, full)
                if artifact is None:
                    return self._skip(u, cycle)
            await self._items(u, cycle, artifact)

    def _skip(self, u: Unit, cycle: int) -> None:
        """A failed step leaves this and later cycles' items unasked (counted as errors)."""
        left = sum(1 for c in range(cycle, self.cycles) for it in u.planned.case.evaluation_items
                   if (c, it.key) not in u.items)
        if left:
            self.on_items(u.model, left, False)

    def _step(self, u: Unit, cycle: int, step: str, started: datetime, **kw: Any) -> StepRow:
        base: dict[str, Any] = dict(status="ok", error_class=None, error=None, attempts=0, output=None, source_tokens=None,
                    artifact_tokens=None, calls=0, latency_ms=None, input_tokens=None, output_tokens=None,
                    model_version=None)
        base.update(kw)
        return StepRow(mode=self.mode.name, model=u.model, compactor=u.compactor, case_id=u.planned.id,
                       cycle=cycle, step=step, stamp=u.stamp, started_at=started, finished_at=_now(), **base)

    async def _continue(self, u: Unit, cycle: int, artifact: CompactionArtifact) -> str | None:
        stored = u.steps.get((cycle, "continue"))
        if stored is not None:
            return stored
        started = _now()
        prompt = prompts.CONTINUATION.format(context=render_for_prompt(artifact),
                                             user=continuation_prompt(u.planned.case.seed, cycle))
        try:
            res = await self.ask(u.model, prompt)
        except ProviderError as e:
            await self.put(self._step(u, cycle, "continue", started, status="error", error_class=e.klass.value,
                                      error=str(e)[:1000], attempts=e.attempts, calls=1))
            return None
        text = res.text.strip()
        await self.put(self._step(u, cycle, "continue", started, output=text, attempts=res.attempts, calls=1,
                                  latency_ms=res.latency_ms, input_tokens=res.input_tokens,
                                  output_tokens=res.output_tokens, model_version=res.model_version))
        return text

    async def _compact(self, u: Unit, cycle: int, compactor: list[Any], given: Transcript,
                       previous: CompactionArtifact | None, full: Transcript) -> CompactionArtifact | None:
        started = _now()
        usage = Usage()
        token = CURRENT_USAGE.set(usage)
        try:
            if not compactor:
                compactor.append(self.make_compactor(u.model, u.compactor))
            artifact = from_obj(await compactor[0].compact(given, previous))
        except ProviderError as e:
            await self.put(self._step(u, cycle, "compact", started, status="error", error_class=e.klass.value,
                                      error=str(e)[:1000], attempts=usage.attempts + e.attempts,
                                      calls=usage.calls + 1))
            return None
        except Unreachable:
            raise  # the endpoint was given up: not the method's failure, the unit is left for the next run
        except Exception as e:  # noqa: BLE001 - the method's own failure: stored, retried on resume
            await self.put(self._step(u, cycle, "compact", started, status="error", error_class="compactor",
                                      error=f"compactor failed: {_detail(e)}", attempts=usage.attempts,
                                      calls=usage.calls))
            return None
        finally:
            CURRENT_USAGE.reset(token)
        source = u.planned.case_tokens if self.mode.compression_source == "case" else transcript_tokens(full.turns)
        await self.put(self._step(u, cycle, "compact", started, output=to_json(artifact), source_tokens=source,
                                  artifact_tokens=artifact_tokens(artifact), attempts=usage.attempts,
                                  calls=usage.calls, latency_ms=usage.latency_ms if usage.calls else None,
                                  input_tokens=usage.input_tokens if usage.calls else None,
                                  output_tokens=usage.output_tokens if usage.calls else None,
                                  model_version=usage.model_version))
        return artifact

    async def _items(self, u: Unit, cycle: int, artifact: CompactionArtifact) -> None:
        todo = [it for it in u.planned.case.evaluation_items if (cycle, it.key) not in u.items]
        if not todo:
            return
        context = render_for_prompt(artifact)
        if len(todo) == 1:
            await self._item(u, cycle, todo[0], context)
            return
        async with anyio.create_task_group() as tg:
            for it in todo:
                tg.start_soon(self._item, u, cycle, it, context)

    async def _item(self, u: Unit, cycle: int, item: EvaluationItem, context: str) -> None:
        started = _now()
        base: dict[str, Any] = dict(mode=self.mode.name, model=u.model, compactor=u.compactor, case_id=u.planned.id, cycle=cycle,
                    item_key=item.key, item_type=item.item_type, stamp=u.stamp, scorer_version=SCORER_VERSION,
                    started_at=started)
        try:
            res = await self.ask(u.model, prompts.EVALUATION.format(context=context, question=item.prompt))
        except ProviderError as e:
            row = ItemRow(**base, status="error", error_class=e.klass.value, error=str(e)[:1000], attempts=e.attempts,
                          check_type=None, response=None, score=None, weight=None, violates=None, counted=None,
                          latency_ms=None, input_tokens=None, output_tokens=None, model_version=None,
                          finished_at=_now())
            await self.put(row)
            self.on_items(u.model, 1, False)
            return
        text = res.text.strip()
        call: dict[str, Any] = dict(attempts=res.attempts, response=text, latency_ms=res.latency_ms, input_tokens=res.input_tokens,
                    output_tokens=res.output_tokens, model_version=res.model_version)
        try:
            s = score_item(item, text, u.planned.case.ground_truth, self.mode)
        except Exception as e:  # noqa: BLE001 - a scorer failure must not cost the answer
            row = ItemRow(**base, **call, status="error", error_class="scorer", error=f"scoring failed: {_detail(e)}",
                          check_type=None, score=None, weight=None, violates=None, counted=None, finished_at=_now())
        else:
            row = ItemRow(**base, **call, status="ok", error_class=None, error=None, check_type=s.check,
                          score=s.score, weight=s.weight, violates=s.violates, counted=s.counted,
                          finished_at=_now())
        await self.put(row)
        self.on_items(u.model, 1, row.status == "ok")

"""Per-model lanes: a bounded pool of workers pulls work lazily from the model's stream."""

from __future__ import annotations

import traceback
from datetime import datetime, timezone
from typing import Iterator

import anyio

from engine.plan import Work
from engine.progress import Progress
from providers.base import Provider
from providers.errors import ProviderError
from store.writer import ResultRow, Writer


class Stamps:
    """What every row of this run carries besides its result."""

    def __init__(self, suite_version: str, prompt_hash: dict[str, str]):
        self.suite_version = suite_version
        self.prompt_hash = prompt_hash  # per dataset, for this model


async def run_lane(model: str, provider: Provider, work: Iterator[Work], concurrency: int,
                   writer: Writer, stamps: Stamps, progress: Progress) -> None:
    async def worker() -> None:
        # Workers share one generator; it never awaits, so `next` cannot interleave.
        for w in work:
            row = await evaluate(model, provider, w, stamps)
            await writer.put(row)
            progress.advance(model, ok=row.status == "ok")

    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)


async def evaluate(model: str, provider: Provider, w: Work, stamps: Stamps) -> ResultRow:
    ds = w.planned.dataset
    item = w.item
    started = datetime.now(timezone.utc)
    base = dict(model=model, dataset=ds.id, item_id=item.id, sample=w.sample, gold=item.gold,
                prompt_hash=stamps.prompt_hash[ds.id], suite_version=stamps.suite_version,
                scorer_version=ds.scorer_version, started_at=started)
    try:
        res = await provider.chat(item.messages)
    except ProviderError as e:
        return ResultRow(**base, status="error", error_class=e.klass.value, error=str(e)[:1000],
                         attempts=e.attempts, response=None, prediction=None, score=None, measures=None,
                         latency_ms=None, input_tokens=None, output_tokens=None, model_version=None,
                         finished_at=datetime.now(timezone.utc))
    call = dict(attempts=res.attempts, response=res.text, latency_ms=res.latency_ms,
                input_tokens=res.input_tokens, output_tokens=res.output_tokens,
                model_version=res.model_version)
    try:
        scored = ds.score(item, res.text)
    except Exception as e:  # noqa: BLE001 - a scorer bug must not cost the answer: store it, retry on resume
        detail = "".join(traceback.format_exception_only(type(e), e)).strip()
        return ResultRow(**base, **call, status="error", error_class="scorer", error=f"scoring failed: {detail}"[:1000],
                         prediction=None, score=None, measures=None, finished_at=datetime.now(timezone.utc))
    return ResultRow(**base, **call, status="ok", error_class=None, error=None, prediction=scored.prediction,
                     score=scored.score, measures=scored.measures, finished_at=datetime.now(timezone.utc))

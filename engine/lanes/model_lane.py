"""Per-model lanes: a bounded pool of workers (engine/run/workers.py) pulls work lazily from the model's stream."""

from __future__ import annotations

import traceback
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from typing import Any

from engine.run.generation import ProviderSet
from engine.lanes.work import Work
from engine.run.progress import Progress, log
from engine.run.context import Budget, RowSink, RunContext, cost_bound
from engine.run import scoring
from engine.run.scoring import ScoringOverrun, score_bounded
from engine.run.workers import STOP, run_workers
from benchmark.dataset import Scored
from providers.base import DEFAULT_MAX_OUTPUT, ChatResult, Provider
from providers.errors import ProviderError, Unreachable
from store.results.writer import ResultRow

__all__ = ["ModelLane", "Stamps", "VersionGuard", "answer_row", "build_row", "estimate_cost", "evaluate"]


class VersionGuard:
    """The model version a model's answers report (`results.model_version`), held to what its rows report.

    A provider may move an alias (`gpt-4o`) to another snapshot between runs, and the answers of two
    versions under one name would be mixed into one score. The model's version is what its stored rows
    report (else its first answer in this run); an answer reporting another is not stored and stops the
    model's lane (its items stay unasked), and the sweep ends with one line (`change`), as a changed stamp
    does. ``allow_mixed`` (--allow-mixed) keeps both, saying so once.
    """

    def __init__(self, model: str, stored: Iterable[str] = (), *, allow_mixed: bool = False):
        self.model, self.known, self.allow_mixed = model, set(stored), allow_mixed
        self.change: str | None = None  # what changed, once an answer was refused

    def admits(self, row: ResultRow) -> bool:
        version = row.model_version
        if version is None or version in self.known:
            return True
        if not self.known:  # nothing stored: this run's first answer says which version the model is
            self.known.add(version)
            return True
        was = " / ".join(sorted(self.known))
        if self.allow_mixed:
            log(f"--allow-mixed: model {self.model}: keeping answers of model version {version} beside {was}")
            self.known.add(version)
            return True
        if self.change is None:
            self.change = f"model {self.model}: reported model version {was} -> {version}"
        return False


class Stamps:
    """What every row of this model's run carries besides its result."""

    def __init__(self, suite_version: str, prompt_hash: dict[str, str], *, run_id: str | None = None,
                 price: Any = None, max_output: int | None = None, identity: dict[str, str] | None = None,
                 versions: VersionGuard | None = None):
        self.suite_version = suite_version
        self.prompt_hash = prompt_hash  # per dataset, for this model
        self.run_id = run_id
        self.price = price  # engine.config.models.Price or None
        self.max_output = max_output or DEFAULT_MAX_OUTPUT  # for the Budget and the cost forecast
        self.identity = identity or {}  # per dataset: hash of what answers (engine/sweep/identity.py)
        self.versions = versions  # None: any reported version is stored

    def admits(self, row: ResultRow) -> bool:
        """Whether the row may be stored: False once the model reports another version (VersionGuard)."""
        return self.versions is None or self.versions.admits(row)

    def report_stop(self, ctx: RunContext) -> None:
        """Once the model's lane ended: say in the run why it stopped early, if it did (the run's outcome)."""
        if self.versions is not None and self.versions.change is not None:
            ctx.stopped.append(self.versions.change)


def estimate_cost(w: Work, stamps: Stamps) -> float:
    """Upper-bound cost of one item: prompt bytes / 3 tokens in, max_tokens out."""
    return cost_bound(stamps.price, w.item.messages, stamps.max_output)


class ModelLane:
    """One evaluated model's lane: its items, `concurrency` at a time, into the run's `answers`.

    Takes the RunContext as its one input (engine/run/context.py), as any lane does.
    """

    def __init__(self, model: str, *, provider: Provider | ProviderSet, work: Iterator[Work], concurrency: int, stamps: Stamps):
        self.model, self.provider, self.work = model, provider, work
        self.concurrency, self.stamps = concurrency, stamps

    async def run(self, ctx: RunContext) -> None:
        await self.drive(ctx.answers, ctx.progress, ctx.budget)
        self.stamps.report_stop(ctx)

    async def drive(self, answers: RowSink, progress: Progress, budget: Budget | None) -> None:
        """The lane on explicit parts (a batch lane asks its leftovers this way, inside its own run)."""
        model, provider, stamps = self.model, self.provider, self.stamps

        async def one(w: Work) -> object:
            est = 0.0
            if budget is not None:
                est = estimate_cost(w, stamps)
                if not budget.reserve(est):
                    return STOP  # the item stays pending: a later run asks it
            try:
                row = await evaluate(model, provider, w, stamps)
            except Unreachable:
                # The endpoint's breaker gave up: this item and the rest stay unasked (not errors),
                # so the same command asks exactly them once the endpoint answers.
                if budget is not None:
                    budget.settle(est, None)
                return STOP
            if budget is not None:
                budget.settle(est, row.cost_usd)
            if not stamps.admits(row):
                return STOP  # another model version: not stored, the rest stays unasked (VersionGuard)
            await answers.put(row)
            progress.advance(model, ok=row.status == "ok")
            return None

        await run_workers(self.work, width=self.concurrency, handle=one)


async def evaluate(model: str, provider: Provider | ProviderSet, w: Work, stamps: Stamps) -> ResultRow:
    started = datetime.now(timezone.utc)
    try:
        # A model's datasets may differ in generation settings (engine/run/generation.py).
        chat = provider.for_dataset(w.planned.id).chat if isinstance(provider, ProviderSet) else provider.chat
        res = await chat(w.item.messages, w.item.answer)
    except ProviderError as e:
        return build_row(model, w, stamps, started, e)
    if len(res.text) > scoring.INLINE_CHARS:
        return await answer_row(model, w, stamps, started, res)
    # A short answer is scored inline by build_row, as `score_bounded` would, without its coroutine.
    return build_row(model, w, stamps, started, res)


async def answer_row(model: str, w: Work, stamps: Stamps, started: datetime,
                     outcome: ChatResult | ProviderError) -> ResultRow:
    """`build_row` for a lane on the event loop: a long answer is scored off the loop, capped
    (engine/run/scoring.py); an overrun is an error row of class `scorer`, like a scorer that raises."""
    if isinstance(outcome, ProviderError):
        return build_row(model, w, stamps, started, outcome)
    planned, res = w.planned, outcome
    scored: Scored | Exception
    try:
        scored = await score_bounded(lambda: planned.score(w.item, res.text, res.finish_reason), len(res.text))
    except Exception as e:  # noqa: BLE001 - the scorer's failure becomes the row's error (build_row)
        scored = e
    return build_row(model, w, stamps, started, res, scored)


def build_row(model: str, w: Work, stamps: Stamps, started: datetime, outcome: ChatResult | ProviderError,
              scored: Scored | Exception | None = None) -> ResultRow:
    """The row of one answer (scored) or one error: the same for a call and a batch request.

    ``scored``: the answer's score, or the scorer's failure, when the caller scored it (`answer_row`);
    None: scored here, inline."""
    # Positional, in ResultRow's field order: a 27-keyword msgspec call cost 8 us a row against 1 us
    # (measured), and the old per-row dicts merged into it more (the hot path; bench/README.md).
    ds = w.planned.dataset
    item = w.item
    ds_id = ds.id
    if isinstance(outcome, ProviderError):
        err = outcome
        return ResultRow(
            model, ds_id, item.id, w.sample,
            "error", err.klass.value, str(err)[:1000], err.attempts,  # status, error_class, error, attempts
            None, None, item.gold, None, None,  # response, prediction, gold, score, measures
            None, None, None, None,  # latency_ms, input_tokens, output_tokens, model_version
            stamps.prompt_hash[ds_id], stamps.suite_version, ds.scorer_version,
            started, datetime.now(timezone.utc),  # started_at, finished_at
            None, None, None,  # finish_reason, blocked, cost_usd
            stamps.run_id, stamps.identity.get(ds_id))
    res = outcome
    price = stamps.price
    if scored is None:
        try:
            # A refusal or safety block has empty text: the scorer sees no answer (unparsed).
            scored = w.planned.score(item, res.text, res.finish_reason)  # shared by the models' lanes (work.py)
        except Exception as e:  # noqa: BLE001 - stored as the row's error below
            scored = e
    if isinstance(scored, Exception):  # a scorer bug or overrun must not cost the answer: stored, retried on resume
        error: str | None = (f"{scored} on an answer of {len(res.text):,} characters"
                             if isinstance(scored, ScoringOverrun) else "scoring failed: " + "".join(
                                 traceback.format_exception_only(type(scored), scored)).strip())[:1000]
        status, error_class, prediction, score, measures = "error", "scorer", None, None, None
    else:
        status, error_class, error = "ok", None, None
        prediction, score, measures = scored.prediction, scored.score, scored.measures
    return ResultRow(
        model, ds_id, item.id, w.sample,
        status, error_class, error, res.attempts,
        res.text, prediction, item.gold, score, measures,  # response, prediction, gold, score, measures
        res.latency_ms, res.input_tokens, res.output_tokens, res.model_version,
        stamps.prompt_hash[ds_id], stamps.suite_version, ds.scorer_version,
        started, datetime.now(timezone.utc),  # started_at, finished_at
        res.finish_reason, res.blocked,
        price.cost(res.input_tokens, res.output_tokens) if price is not None else None,  # cost_usd
        stamps.run_id, stamps.identity.get(ds_id))

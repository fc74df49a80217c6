"""The extractor model: one strict question about one unread choice answer (docs/extraction.md).

Used by `engine extract --extractor` and by the sweep's extractor lane
(engine/lanes/extract_lane.py). Calls go through the same provider adapters,
rate limits, retries and error classes as model and judge calls.
"""

from __future__ import annotations

from typing import Any, Sequence

import msgspec

from benchmark.extract import prompt as extract_prompt
from benchmark.dataset import Item, Scored
from engine.config.models import ModelConfig, base_url
from providers.base import ChatResult
from providers.breaker import Breaker
from providers.errors import ProviderError
from providers.limits import Limits
from providers.registry import make_provider

# Reasons a finished response is not put to the extractor: the rules read it as cut off.
CUT_OFF = frozenset({"length", "max_tokens", "MAX_TOKENS"})


class Reading(msgspec.Struct, kw_only=True):
    """The outcome of one question to the extractor."""

    status: str  # 'ok' (codes read) | 'none' (it said NONE) | 'unparsed' | 'refused' | 'error'
    codes: tuple[str, ...] = ()
    raw: str | None = None
    error_class: str | None = None
    error: str | None = None
    attempts: int = 0
    latency_ms: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    model_version: str | None = None


def wants_model(response: str | None, finish_reason: str | None, blocked: str | None = None) -> bool:
    """Whether an unread response goes to the extractor: it has text, was not blocked, was not cut off."""
    return bool(response and response.strip()) and blocked is None and finish_reason not in CUT_OFF


class Extractor:
    def __init__(self, cfg: ModelConfig, limits: Limits, breaker: Breaker | None = None):
        self.cfg = cfg
        self.max_output = cfg.max_tokens or extract_prompt.MAX_OUTPUT
        self.provider = make_provider(
            cfg.provider, base_url=base_url(cfg), model=cfg.model, api_key=cfg.api_key(),
            generation={**cfg.generation(), "max_tokens": self.max_output},
            limits=limits, timeout_s=cfg.timeout_s, max_retries=cfg.max_retries,
            max_connections=cfg.concurrency, backoff_base_s=cfg.backoff_s, reasoning=cfg.reasoning,
            breaker=breaker)

    async def read(self, options: Sequence[tuple[str, str]], response: str, multi: bool) -> Reading:
        try:
            res: ChatResult | ProviderError = await self.provider.chat(extract_prompt.prompt(options, response, multi))
        except ProviderError as e:
            res = e
        return reading(options, multi, res)

    async def aclose(self) -> None:
        await self.provider.aclose()


def reading(options: Sequence[tuple[str, str]], multi: bool, outcome: ChatResult | ProviderError) -> Reading:
    """The extractor's reply (or the error that stood for it) read as codes of these options."""
    if isinstance(outcome, ProviderError):
        return Reading(status="error", error_class=outcome.klass.value, error=str(outcome)[:1000],
                       attempts=outcome.attempts)
    res = outcome
    codes = None if res.blocked else extract_prompt.parse_reply(res.text, [c for c, _ in options], multi)
    status = "refused" if res.blocked else "unparsed" if codes is None else "ok" if codes else "none"
    return Reading(status=status, codes=codes or (), raw=res.text, attempts=res.attempts,
                   latency_ms=res.latency_ms, input_tokens=res.input_tokens, output_tokens=res.output_tokens,
                   model_version=res.model_version)


def read_and_score(ds: Any, item: Item, response: str | None, finish_reason: str | None,
                   model_codes: Sequence[str] | None = None) -> tuple[Scored, str | None]:
    """Score a response as a sweep does; when the rules read nothing and the extractor model read
    ``model_codes``, score those codes instead. Returns (scored, extracted_by: 'rules' | 'model' | None).

    The codes are scored as the bare answer "B" / "A, C" would be, so every dataset's scorer
    (measures, keys, the "none of these" option) applies to the model's reading unchanged.
    """
    scored = ds.score(item, response or "", finish_reason=finish_reason)
    if scored.prediction is not None:
        return scored, "rules"
    if model_codes:
        scored = ds.score(item, ", ".join(model_codes))
        return scored, "model" if scored.prediction is not None else None
    return scored, None

"""The [user_simulator]: the model that plays the help-seeker of interactive datasets (docs/interactive.md).

It is a helper like the judge: its own adapter over the run's limits and breaker for its name
(engine/run/endpoints.py builds them for every helper), its own retries; never evaluated. Its reply
is the JSON object of ``benchmark.episodes.seeker`` (asked for with the provider's structured-output
option where models.toml says ``answer_constraint = "json_schema"``, read leniently otherwise). A
reply that cannot be read is asked again (with the next seed) up to ``UNREADABLE_RETRIES`` times;
after that the turn is stored as unreadable and the episode as a simulator error, never scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from benchmark.dataset import Message
from benchmark.episodes.seeker import SEEKER_SCHEMA, SeekerReply, read_seeker_reply
from engine.config.models import ModelConfig, base_url
from engine.run.context import Budget, cost_bound
from providers.base import CallOptions, ChatResult, Provider
from providers.breaker import Breaker
from providers.errors import ProviderError
from providers.limits import Limits
from providers.registry import make_provider

CONVERSATION_HEADER = "X-Conversation-Id"
UNREADABLE_RETRIES = 2  # asks after the first whose reply could not be read
DEFAULT_SEEKER_TOKENS = 300


class SeekerTurn(msgspec.Struct):
    """What one simulator turn came to: a reply, an unreadable one (``raw``), or the error of its call."""

    reply: SeekerReply | None
    result: ChatResult | None  # the last call's result
    error: ProviderError | None = None
    attempts: int = 0  # calls made (HTTP attempts summed)
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: float = 0.0


class Simulator:
    def __init__(self, cfg: ModelConfig, limits: Limits | None, breaker: Breaker | None, *, max_tokens: int):
        self.cfg = cfg
        self.name = cfg.name
        out = cfg.max_tokens or max_tokens
        self.max_output = out
        self.provider: Provider = make_provider(
            cfg.provider, base_url=base_url(cfg), model=cfg.model, api_key=cfg.api_key(),
            generation={**cfg.generation(), "max_tokens": out}, limits=limits or Limits(), timeout_s=cfg.timeout_s,
            max_retries=cfg.max_retries, max_connections=cfg.concurrency, backoff_base_s=cfg.backoff_s,
            reasoning=cfg.reasoning, breaker=breaker, timeout_per_token_s=cfg.timeout_per_token_s or 0.0)
        # Structured output only where the user asked for it and the wire has it (OpenAI-compatible).
        self.schema: dict[str, Any] = {}
        if cfg.answer_constraint == "json_schema" and cfg.provider in ("openai", "local", "vllm"):
            self.schema = {"response_format": {"type": "json_schema", "json_schema": {
                "name": "seeker", "strict": True, "schema": SEEKER_SCHEMA}}}

    def call_options(self, seed: int, conversation: str | None = None) -> CallOptions:
        # The episode's conversation id as a header: the same seeker prompt comes from every evaluated model's
        # play of an item, so a server's log tells the calls apart only by it (generation never reads it).
        headers = {CONVERSATION_HEADER: conversation} if conversation else {}
        return CallOptions(body={"seed": seed, **self.schema}, headers=headers)

    async def ask(self, messages: Sequence[Message], seed: int, budget: Budget | None = None, *,
                  conversation: str | None = None) -> SeekerTurn:
        """The seeker's next message; raises Unreachable (the simulator's endpoint was given up) and
        OverBudget-like stops to the caller through ``budget`` (returns None reply, no result)."""
        turn = SeekerTurn(reply=None, result=None)
        for n in range(1 + UNREADABLE_RETRIES):
            est = cost_bound(self.cfg.price, messages, self.max_output)
            if budget is not None and not budget.reserve(est):
                raise SimulatorOverBudget
            try:
                res = await self.provider.chat(messages, call=self.call_options(seed + n, conversation))
            except ProviderError as e:
                if budget is not None:
                    budget.settle(est, None)
                turn.error, turn.attempts = e, turn.attempts + e.attempts
                return turn
            except BaseException:
                if budget is not None:
                    budget.settle(est, None)
                raise
            if budget is not None:
                price = self.cfg.price
                budget.settle(est, price.cost(res.input_tokens, res.output_tokens) if price is not None else None)
            turn.result = res
            turn.attempts += res.attempts
            turn.input_tokens += res.input_tokens or 0
            turn.output_tokens += res.output_tokens or 0
            turn.latency_ms += res.latency_ms
            turn.reply = None if res.blocked else read_seeker_reply(res.text)
            if turn.reply is not None:
                return turn
        return turn

    async def aclose(self) -> None:
        await self.provider.aclose()


class SimulatorOverBudget(Exception):
    """--budget is spent: the episode stops where it is (its stored turns are kept, continued next run)."""

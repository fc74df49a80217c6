"""Endpoints as the sweep sees them: one circuit breaker per endpoint, and what to say when one gave up."""

from __future__ import annotations

from collections.abc import Iterable

from yarl import URL

from engine.config import ModelConfig, base_url
from engine.run.progress import log
from providers.breaker import Breaker


def endpoint_of(m: ModelConfig) -> str:
    """scheme://host:port: what a connection failure is about (models on one server share it)."""
    url = URL(base_url(m))
    return str(url.origin())


def build_breakers(models: Iterable[ModelConfig], *, quiet: bool = False) -> dict[str, Breaker]:
    """model name -> its endpoint's breaker; models on one endpoint share one, with the longest
    `unreachable_after_s` any of them sets (nobody is given up sooner than it asked)."""
    models = list(models)
    patience: dict[str, float] = {}
    for m in models:
        e = endpoint_of(m)
        patience[e] = max(patience.get(e, 0.0), m.unreachable_after_s)
    shared = {e: Breaker(e, unreachable_after_s=s, notify=lambda msg: log(msg, quiet=quiet))
              for e, s in patience.items()}
    return {m.name: shared[endpoint_of(m)] for m in models}


def unreachable_models(breakers: dict[str, Breaker]) -> dict[str, Breaker]:
    """The models whose endpoint was given up in this run."""
    return {name: b for name, b in breakers.items() if b.given_up}

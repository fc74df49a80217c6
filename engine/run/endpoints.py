"""Endpoints and limits as a run sees them: each model's rate limits and gates, its provider adapters, one
circuit breaker per endpoint, and what to say when one gave up."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable

from yarl import URL

from benchmark.dataset import Dataset
from engine.config.models import ModelConfig, ModelsFile, base_url
from engine.run.generation import ProviderSet
from engine.run.progress import log
from providers.base import Provider
from providers.breaker import Breaker
from providers.concurrency import AdaptiveLimit
from providers.limits import Limits, RateLimit
from providers.registry import adapter_class, make_provider


def endpoint_of(m: ModelConfig) -> str:
    """scheme://host:port: what a connection failure is about (models on one server share it)."""
    url = URL(base_url(m))
    return str(url.origin())


def import_adapters(models: Iterable[ModelConfig]) -> None:
    """Import the adapters of ``models`` now (aiohttp with the first, ~0.13 s): before the run loop, which
    freezes what start-up built (engine/run/collector.py)."""
    for m in models:
        adapter_class(m.provider)


def warm_adapters(models: Iterable[ModelConfig]) -> None:
    """Start ``import_adapters`` in a thread, for a run certain to call them (a new file): the imports
    overlap the database work before the first call, as DuckDB lets go of the GIL while it executes.
    The run's own ``import_adapters`` then finds them imported, or waits on their import locks."""
    chosen = list(models)

    def work() -> None:
        with contextlib.suppress(Exception):  # the run's own import says what went wrong
            import_adapters(chosen)

    threading.Thread(target=work, name="import-adapters").start()


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


def build_limits(cfg: ModelsFile, *, rate: Callable[[str, float | None, float | None], RateLimit] | None = None,
                 pool: Callable[[str, int], int] | None = None, limits: type[Limits] = Limits) -> dict[str, Limits]:
    """Each model's limits: its own rates and AIMD gate, plus its account's shared rates and pool.

    Only models that name the same account share anything; every other model
    has limiters of its own, so a throttled model never slows the others.
    On a cluster (engine/cluster/limiter.py) ``rate`` makes each rate ('account:NAME', 'model:NAME') a
    client of a shared keeper, ``pool`` gives an account's pool this host's share, ``limits`` is the class.
    """
    make = rate or (lambda _key, rpm, tpm: RateLimit(rpm, tpm))
    rates = {name: make(f"account:{name}", a.rpm, a.tpm) for name, a in cfg.accounts.items()}
    pools = {name: AdaptiveLimit(pool(name, a.max_concurrency) if pool else a.max_concurrency)
             for name, a in cfg.accounts.items() if a.max_concurrency}
    out = {}
    for m in [*cfg.models, *(x for x in (cfg.judge, cfg.extractor, cfg.user_simulator) if x is not None)]:
        gates = [AdaptiveLimit(m.concurrency)] if m.adaptive else []
        if m.account in pools:
            gates.append(pools[m.account])
        # Own rates first, the account's last (see Limits.acquire).
        out[m.name] = limits(make(f"model:{m.name}", m.rpm, m.tpm), rates.get(m.account) if m.account else None,
                             gates=gates)
    return out


def model_providers(m: ModelConfig, limits: Limits, datasets: list[Dataset],
                    breaker: Breaker | None = None) -> ProviderSet:
    """The evaluated model's adapters: one per distinct generation setting among its datasets."""
    return ProviderSet(m, datasets, lambda gen: model_provider(m, limits, gen, breaker))


def model_provider(m: ModelConfig, limits: Limits, generation: dict, breaker: Breaker | None = None) -> Provider:
    """One adapter of an evaluated model, for one generation setting."""
    return make_provider(m.provider, base_url=base_url(m), model=m.model, api_key=m.api_key(),
                         generation=generation, limits=limits, timeout_s=m.timeout_s,
                         max_retries=m.max_retries, max_connections=m.concurrency,
                         backoff_base_s=m.backoff_s, reasoning=m.reasoning,
                         answer_constraint=m.answer_constraint, breaker=breaker,
                         timeout_per_token_s=m.timeout_per_token_s or 0.0)

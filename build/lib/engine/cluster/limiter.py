"""Rate limits stay global on a cluster: one keeper actor per account (and per model with its own limits).

A keeper holds providers/limits.py's RateLimit unchanged (the GCRA schedule: requests and tokens, refunds
after the call) and a pause. Every request on every node books its slot there (`RemoteRate.acquire`), so
the account's rpm/tpm is the configured one whatever the number of nodes, never a per-node share (the peer
that gives each task its own bucket multiplies the rate by the number of tasks). A Retry-After or a header
saying the quota is spent pauses the keeper, which holds back every node (`ClusterLimits.pause`).

Booking ahead: a keeper books the slot at least LOOKAHEAD_S after it hears the request, longer than the
call's round trip (its p99 is a few ms on loopback, more across a network), so the reply arrives before
the slot and the request leaves on time; without it every request would leave one round trip late and
the rate would fall short of the limit. A keeper that dies is restarted by Ray and its callers' bookings
are retried (max_task_retries): the schedule starts afresh, which never lets more than the rate through.

Concurrency gates stay per host: a model's own AIMD gate is its host's, and an account's `max_concurrency`
is divided among the hosts of the models that name it (engine/run/endpoints.py:build_limits's `pool`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio

from benchmark.errors import UserError
from engine.cluster.rate_keeper import LOOKAHEAD_S, RateKeeper
from engine.config.models import ModelConfig, ModelsFile
from engine.run.endpoints import build_limits
from providers.limits import Limits, RateLimit


# The longest a restarted keeper holds back (a tokens-only limit with long requests could ask for more).
MAX_HOLD_S = 60.0


def keeper_keys(cfg: ModelsFile, in_flight: Callable[[ModelConfig], int]) -> dict[str, tuple[float | None, float | None, float]]:
    """Every rate that needs a keeper: 'account:NAME' and 'model:NAME' -> (rpm, tpm, hold after a restart).

    ``in_flight``: the most requests a model can have booked at once on the whole cluster."""
    users: dict[str, list[ModelConfig]] = {}
    limits: dict[str, tuple[float | None, float | None]] = {}
    for name, a in cfg.accounts.items():
        if a.rpm or a.tpm:
            limits[f"account:{name}"] = (a.rpm, a.tpm)
            users[f"account:{name}"] = [m for m in cfg.models if m.account == name]
    for m in cfg.models:
        if m.rpm or m.tpm:
            limits[f"model:{m.name}"] = (m.rpm, m.tpm)
            users[f"model:{m.name}"] = [m]
    keys = {}
    for key, (rpm, tpm) in limits.items():
        booked = sum(in_flight(m) for m in users[key])
        tokens = sum(in_flight(m) * (m.max_tokens or 1024) for m in users[key])
        hold = max(booked / (rpm / 60) if rpm else 0.0, tokens / (tpm / 60) if tpm else 0.0)
        keys[key] = (rpm, tpm, min(MAX_HOLD_S, hold + LOOKAHEAD_S))
    return keys


def start_keepers(ray: Any, cfg: ModelsFile, run_id: str, node_id: str,
                  in_flight: Callable[[ModelConfig], int]) -> dict[str, Any]:
    """One keeper actor per rate of ``keeper_keys``, on the head node (hard: Ray's soft affinity placed a
    zero-CPU actor elsewhere; a cluster whose head is lost is lost anyway);
    Ray restarts a keeper that dies and retries the calls made to it meanwhile. Not waited for: the hosts
    start meanwhile (``keepers_ready``)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    remote = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1, max_concurrency=1)(RateKeeper)
    keepers = {}
    for key, (rpm, tpm, hold_s) in keeper_keys(cfg, in_flight).items():
        keepers[key] = remote.options(
            name=f"rate:{run_id}:{key}", scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
        ).remote(rpm, tpm, hold_s)
    return keepers


KEEPERS_READY_S = 120.0


def keepers_ready(ray: Any, keepers: dict[str, Any]) -> None:
    """Until every keeper answers (on the head node: seconds), at most KEEPERS_READY_S."""
    try:
        ray.get([k.ping.remote() for k in keepers.values()], timeout=KEEPERS_READY_S)
    except ray.exceptions.GetTimeoutError:
        raise UserError(f"the rate keepers did not start on the head node within {KEEPERS_READY_S:g} s") from None


class RemoteRate(RateLimit):
    """A RateLimit whose schedule is a keeper actor's: Limits acquires and settles it like a local one."""

    def __init__(self, keeper: Any, rpm: float | None, tpm: float | None):
        super().__init__(None, None)  # no local schedule
        self.rpm, self.tpm = rpm, tpm
        self.keeper = keeper

    async def acquire(self, tokens: int) -> None:
        asked = time.monotonic()
        wait = await self.keeper.book.remote(tokens, LOOKAHEAD_S)
        left = asked + wait - time.monotonic()
        if left > 0:
            await anyio.sleep(left)

    def settle(self, delta: int) -> None:
        if self.tpm and delta:
            self.keeper.settle.remote(delta)  # no reply needed: the next booking sees it

    def pause_everywhere(self, seconds: float) -> None:
        self.keeper.pause.remote(seconds)


class ClusterLimits(Limits):
    """Limits whose pauses (Retry-After, a spent quota) also reach the keepers: every node holds back."""

    def pause(self, seconds: float) -> None:
        super().pause(seconds)
        for lim in self._limits:
            if isinstance(lim, RemoteRate):
                lim.pause_everywhere(seconds)


def host_limits(m: ModelConfig, cfg: ModelsFile, keepers: dict[str, Any], pool_shares: dict[str, int]) -> Limits:
    """The limits of one host of model ``m``: rates through the keepers, gates of its own."""

    def rate(key: str, rpm: float | None, tpm: float | None) -> RateLimit:
        return RemoteRate(keepers[key], rpm, tpm) if key in keepers else RateLimit(rpm, tpm)

    def pool(account: str, cap: int) -> int:
        return pool_shares.get(account, cap)

    one = ModelsFile(models=[m], accounts=cfg.accounts)
    return build_limits(one, rate=rate, pool=pool, limits=ClusterLimits)[m.name]


def pool_shares(cfg: ModelsFile, hosts_per_model: Callable[[str], int]) -> dict[str, int]:
    """An account's `max_concurrency` divided among the hosts of its models (rounded down: the hosts together
    never exceed it, unless there are more hosts than the cap, when each gets 1)."""
    shares = {}
    for name, a in cfg.accounts.items():
        if a.max_concurrency:
            n = sum(hosts_per_model(m.name) for m in cfg.models if m.account == name)
            shares[name] = max(1, a.max_concurrency // max(1, n))
    return shares

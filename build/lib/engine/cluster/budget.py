"""`--budget` on a cluster: one budget for the run, kept by one actor on the head node (as the rate keepers
keep the rates), so the spend of every node stops at the limit, within the calls in flight.

The keeper holds engine/run/context.py's Budget unchanged: a call's cost is reserved at its upper bound
before it leaves and settled with what the API's usage implies when it returns; once the next call could
take the spend past the cap, it says no, and every host stops dispatching. A host's RemoteBudget asks it
for each reservation (a round trip of a millisecond or two on a network, against calls of hundreds); a
keeper that cannot be asked within RESERVE_S says no (the cap is never crossed for want of an answer).
"""

from __future__ import annotations

from typing import Any

from engine.run.context import Budget

RESERVE_S = 30.0


class BudgetKeeper:
    """The actor's body: the run's Budget."""

    def __init__(self, limit_usd: float):
        self.budget = Budget(limit_usd)

    def reserve(self, est: float) -> bool:
        return self.budget.reserve(est)

    def settle(self, est: float, actual: float | None) -> None:
        self.budget.settle(est, actual)

    def state(self) -> tuple[float, bool]:
        """(spent, stopped)."""
        return self.budget.spent, self.budget.stopped


def start_budget_keeper(ray: Any, limit_usd: float, node_id: str) -> Any:
    """On the head node; not restarted (a successor would not know what was spent: reservations then fail)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    remote = ray.remote(num_cpus=0, max_restarts=0, max_concurrency=1)(BudgetKeeper)
    return remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False)).remote(limit_usd)


class RemoteBudget(Budget):
    """A host's view of the run's budget: each reservation asked of the keeper, each settlement sent to it."""

    def __init__(self, keeper: Any, limit_usd: float):
        super().__init__(limit_usd)
        self.keeper = keeper

    def reserve(self, est: float) -> bool:
        if self.stopped:
            return False
        import ray

        try:
            ok = bool(ray.get(self.keeper.reserve.remote(est), timeout=RESERVE_S))
        except Exception:  # noqa: BLE001 - the keeper lost or silent: no call leaves unbudgeted
            ok = False
        self.stopped = not ok
        return ok

    def settle(self, est: float, actual: float | None) -> None:
        self.keeper.settle.remote(est, actual)  # no reply needed: the next reservation sees it

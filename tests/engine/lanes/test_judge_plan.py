"""Lanes with per-item samples (position-bias pairs) and prompts fitted to a model's context."""

from __future__ import annotations

from benchmark.dataset import Item, Message
from engine.lanes.work import PlannedDataset, pending_work
from tests.engine.fakes import FakeDataset


class Pairs(FakeDataset):
    """Items whose id starts with "p" are asked twice, the second time in another variant."""

    id = "pairs"

    def samples_of(self, item_id):
        return 2 if item_id.startswith("p") else 1

    def render(self, item_id, raw):
        return Item(item_id, (Message("user", "q " + "x" * raw),), "A")

    def render_sample(self, item_id, raw, sample):
        return Item(item_id, (Message("user", f"swapped {sample}"),), "B")

    def fit(self, item_id, raw, budget):
        return Item(item_id, (Message("user", "short"),), "A", {"truncated": 1})


def test_per_item_samples_and_variants():
    p = PlannedDataset(Pairs(), (("p1", 1), ("a", 1), ("p2", 1)))
    assert p.size == 5
    work = list(pending_work([p], lambda d: 0, lambda d: set()))
    assert [(w.item.id, w.sample, w.item.gold) for w in work] == [
        ("p1", 0, "A"), ("p1", 1, "B"), ("a", 0, "A"), ("p2", 0, "A"), ("p2", 1, "B")]
    # a resume after the first order of p2 asks only its pair's second order
    rest = list(pending_work([p], lambda d: 4, lambda d: {("p1", 0), ("p1", 1), ("a", 0), ("p2", 0)}))
    assert [(w.item.id, w.sample) for w in rest] == [("p2", 1)]


def test_items_over_the_prompt_budget_are_fitted():
    p = PlannedDataset(Pairs(), (("a", 10), ("b", 4000)))
    work = list(pending_work([p], lambda d: 0, lambda d: set(), prompt_tokens={p.id: 500}))
    assert [w.item.messages[0].content[:5] for w in work] == ["q xxx", "short"]
    assert work[1].item.meta == {"truncated": 1}
    assert list(pending_work([p], lambda d: 0, lambda d: set()))[1].item.messages[0].content.startswith("q xxx")

from engine.lanes.work import PlannedDataset, pending_work
from tests.engine.fakes import FakeDataset


class Two(FakeDataset):
    id = "two"
    samples = 2


def planned(ids):
    ds = Two()
    return PlannedDataset(ds, tuple((i, None) for i in ids))


def test_lane_skips_done_and_complete_datasets():
    p1, p2 = planned(["a", "b"]), planned(["c"])
    # Both datasets share an id here, so the done info is keyed by call order.
    done_counts = iter([1, 0])
    work = list(pending_work([p1, p2], lambda d: next(done_counts), lambda d: {("a", 1)}))
    assert [(w.item.id, w.sample) for w in work] == [("a", 0), ("b", 0), ("b", 1), ("c", 0), ("c", 1)]


def test_lane_skips_a_fully_done_dataset_without_reading_keys():
    p = planned(["a"])
    def keys(_):
        raise AssertionError("keys read for a complete dataset")
    assert list(pending_work([p], lambda d: 2, keys)) == []


class Counting(Two):
    """Counts its renders and scores; its scorer fails on the answer "boom"."""

    def __init__(self):
        self.renders = self.scores = 0

    def render(self, item_id, raw):
        self.renders += 1
        return super().render(item_id, raw)

    def render_sample(self, item_id, raw, sample):
        self.renders += 1
        return super().render(item_id, raw)

    def score(self, item, response, *, finish_reason=None):
        self.scores += 1
        if response == "boom":
            raise ValueError("scorer bug")
        return super().score(item, response, finish_reason=finish_reason)


def test_models_share_the_renders_of_one_dataset():
    ds = Counting()
    p = PlannedDataset(ds, tuple((i, None) for i in ["a", "b", "c"]))
    first = list(pending_work([p], lambda d: 0, lambda d: set()))
    second = list(pending_work([p], lambda d: 0, lambda d: set()))
    assert [(w.item.id, w.sample) for w in second] == [(w.item.id, w.sample) for w in first]
    assert all(a.item is b.item for a, b in zip(first, second))
    assert ds.renders == 6  # 3 items x 2 samples, once for both models


def test_shared_renders_are_bounded(monkeypatch):
    from engine.lanes import work

    monkeypatch.setattr(work, "SHARED_RENDERS", 2)
    ds = Counting()
    p = PlannedDataset(ds, tuple((i, None) for i in ["a", "b", "c"]))
    list(pending_work([p], lambda d: 0, lambda d: set()))
    assert len(p._renders) == 2
    list(pending_work([p], lambda d: 0, lambda d: set()))
    assert ds.renders == 12  # a lane two renders behind renders again


def test_one_answer_to_one_item_is_scored_once():
    ds = Counting()
    p = PlannedDataset(ds, (("a", None),))
    item = p.rendered("a", None, 0, None)
    first = p.score(item, "A", "stop")
    assert p.score(item, "A", "stop") is first and ds.scores == 1
    assert p.score(item, "A", "length") == first and ds.scores == 2  # the finish reason may change a score
    other = p.rendered("a", None, 1, None)  # another sample: another item
    p.score(other, "A", "stop")
    assert ds.scores == 3
    long = "A" * 600  # past SCORE_MEMO_CHARS: always scored
    p.score(item, long, "stop"), p.score(item, long, "stop")
    assert ds.scores == 5
    for _ in range(2):  # a scorer's failure is not kept: raised each time
        try:
            p.score(item, "boom", "stop")
        except ValueError:
            pass
    assert ds.scores == 7

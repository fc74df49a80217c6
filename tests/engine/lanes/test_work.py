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

"""A minimal in-memory dataset for planning tests: no files, every answer right."""

from benchmark.dataset import DatasetBase, Item, Message, MetricSpec, Scored


class FakeDataset(DatasetBase):
    id = "fake"
    language = "en"
    scorer_version = "1"
    metrics = (MetricSpec("accuracy", "mean", primary=True),)
    samples = 1

    def prompt_hash(self):
        return "h"

    def records(self, data_dir):
        return iter([])

    def render(self, item_id, raw):
        return Item(item_id, (Message("user", "q"),), "A")

    def score(self, item, response, *, finish_reason=None):
        return Scored("A", 1.0)

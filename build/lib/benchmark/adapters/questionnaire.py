"""Self-report questionnaires (MoodBench's "liangbiao" tests) as choice declarations.

An item is one statement of the instrument, asked on its own; the model picks
the option that describes it best. There is no right answer: each option is
worth keyed points, and the item's score is the chosen option's points
normalised to 0..1 over that item's range, (p - min) / (max - min). The dataset
score is the mean item score, i.e. the instrument's total normalised to 0..1
(x 100 in the suite).

The key comes either from a row field listing each option's points in the
file's option order (``points_field``, e.g. the MoodBench files' ``Score``), or
from ``key``: item number (1-based position in the file, which is the
instrument's own numbering) -> points per option, with ``None`` for a filler
item that is asked but not scored (EQ-60's 20 control items). Reverse-keyed
items are simply keys with descending points.

Stored per item: ``prediction`` = the chosen option's code; ``score`` = its
normalised points, or NULL when nothing could be parsed or the item is a
filler; ``gold`` = the item's scoring key {code: normalised points} (NULL for a
filler), not a right answer. An unparsed answer is therefore left out of the
mean and counted (``n_unparsed``, and ``answered_rate``); the reference instead
gives it the item's minimum.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
from msgspec.structs import replace

from benchmark.dataset import Item, MetricSpec, Scored, stable_hash
from benchmark.extract.choice import extract_single
from benchmark.adapters.mcq import ChoiceDataset, _choices

METRICS = (
    MetricSpec("score", "mean", "score", primary=True),  # NULL scores (unparsed, filler) are left out
    MetricSpec("answered_rate", "mean", "answered"),  # parsed answers / items asked
)


class Questionnaire(ChoiceDataset, frozen=True, kw_only=True):
    item_id: str = ""  # ids are the instrument's item numbers: "01", "02", ...
    gold_field: str = ""  # no right answer
    points_field: str = ""  # row field: each option's points, in the file's option order ...
    key: dict[int, Any] = msgspec.field(default_factory=dict)  # ... or item number -> points per option (None: filler, not scored)
    metric_specs: tuple[MetricSpec, ...] = METRICS

    def __post_init__(self) -> None:
        if bool(self.points_field) == bool(self.key):
            raise ValueError(f"{self.id}: declare exactly one of points_field / key")
        if self.multi or self.shuffle:
            raise ValueError(f"{self.id}: a questionnaire item takes one answer, options in the scale's order")
        super().__post_init__()

    def scoring_extra(self) -> str:
        # The key is scoring data: it enters the scorer stamp.
        return f".q{stable_hash(self.points_field, sorted(self.key.items()), length=6)}"

    def records(self, data_dir: Path) -> Iterator[tuple[str, Any]]:
        for _, row in super().records(data_dir):
            yield f"{row['_row'] + 1:02d}", row

    def _gold(self, item_id: str, raw: dict, n: int, options: tuple[str, ...] = ()) -> Any:
        return 0  # placeholder for ChoiceDataset.render; replaced by the key below

    def points(self, item_id: str, raw: dict, n: int) -> list[float] | None:
        if self.points_field:
            pts = raw.get(self.points_field)
        else:
            number = raw["_row"] + 1
            if number not in self.key:
                raise ValueError(f"{self.id} item {item_id}: item number {number} is not in the key")
            pts = self.key[number]
            if pts is None:
                return None
        if not isinstance(pts, (list, tuple)) or len(pts) != n or not all(isinstance(p, (int, float)) for p in pts):
            raise ValueError(f"{self.id} item {item_id}: expected {n} option points, got {pts!r}")
        if min(pts) == max(pts):
            raise ValueError(f"{self.id} item {item_id}: every option has the same points {pts!r}")
        return [float(p) for p in pts]

    def render(self, item_id: str, raw: Any) -> Item:
        item = super().render(item_id, raw)
        meta = {k: v for k, v in item.meta.items() if k != "g"}
        n = len(meta.get("options") or self.derived.fixed_shown)
        pts = self.points(item_id, raw, n)
        if pts is None:
            meta["key"] = None
            return replace(item, gold=None, meta=meta)
        lo, hi = min(pts), max(pts)
        norm = [(p - lo) / (hi - lo) for p in pts]
        meta["key"] = norm
        fixed = self.derived.fixed
        codes = fixed.codes if fixed is not None else _choices(tuple(meta["options"])).codes
        return replace(item, gold=dict(zip(codes, norm)), meta=meta)

    def score(self, item: Item, response: str, *, finish_reason: str | None = None) -> Scored:
        meta = item.meta
        choices = self.derived.fixed or _choices(tuple(meta["options"]))
        i = extract_single(response, choices, finish_reason=finish_reason)
        if i is None:
            return Scored(prediction=None, score=None, measures={"answered": 0.0})
        key = meta["key"]
        return Scored(
            prediction=choices.codes[i],
            score=None if key is None else key[i],
            measures={"answered": 1.0},
        )

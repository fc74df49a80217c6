"""engine.lanes.model_lane: the row of an answer, scored without holding the run's loop."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import anyio

from benchmark.dataset import Scored
from engine.lanes.model_lane import Stamps, VersionGuard, answer_row, build_row
from engine.lanes.work import PlannedDataset, Work
from engine.run import scoring
from providers.base import ChatResult
from tests.engine.fakes import FakeDataset


class SlowOnLongLines(FakeDataset):
    """A scorer that costs seconds on a long line, as a quadratic extraction rule does."""

    def score(self, item, response, *, finish_reason=None):
        if len(response) > 1000:
            end = time.monotonic() + 30
            while time.monotonic() < end:
                sum(range(100))
        return Scored("A", 1.0)


def _row(text: str):
    ds = SlowOnLongLines()
    planned = PlannedDataset(ds, (("i1", 1),))
    work = Work(planned, ds.render("i1", 1), 0)
    stamps = Stamps("1.0", {ds.id: "h"}, run_id="r")
    return anyio.run(answer_row, "m", work, stamps, datetime.now(timezone.utc), ChatResult(text, "v1"))


def test_a_short_answer_is_scored():
    row = _row("Answer: A")
    assert (row.status, row.prediction, row.score) == ("ok", "A", 1.0)


def test_a_scorer_overrunning_its_cap_is_a_scorer_error_keeping_the_answer(monkeypatch):
    monkeypatch.setattr(scoring, "INLINE_CHARS", 100)
    monkeypatch.setattr(scoring, "CAP_S", 0.3)
    t0 = time.monotonic()
    row = _row("The answer is A. " * 4000)
    assert time.monotonic() - t0 < 5
    assert (row.status, row.error_class, row.score, row.prediction) == ("error", "scorer", None, None)
    assert row.error == "scoring used over 0.3 s of CPU on an answer of 68,000 characters"
    assert row.response is not None and len(row.response) == 68_000 and row.model_version == "v1"


def test_a_row_built_off_a_lane_scores_inline_as_before():
    """engine/cluster builds error rows itself, synchronously: the same row."""
    ds = SlowOnLongLines()
    work = Work(PlannedDataset(ds, (("i1", 1),)), ds.render("i1", 1), 0)
    row = build_row("m", work, Stamps("1.0", {ds.id: "h"}), datetime.now(timezone.utc), ChatResult("Answer: A"))
    assert (row.status, row.prediction) == ("ok", "A")


def _answer(version):
    ds = SlowOnLongLines()
    work = Work(PlannedDataset(ds, (("i1", 1),)), ds.render("i1", 1), 0)
    return build_row("m", work, Stamps("1.0", {ds.id: "h"}), datetime.now(timezone.utc),
                     ChatResult("Answer: A", version))


def test_a_model_version_other_than_the_stored_ones_is_refused_with_one_line():
    guard = VersionGuard("gpt-4o", {"gpt-4o-2024-08-06"})
    assert guard.admits(_answer("gpt-4o-2024-08-06")) and guard.admits(_answer(None))
    assert not guard.admits(_answer("gpt-4o-2024-11-20")) and not guard.admits(_answer("gpt-4o-2024-11-20"))
    assert guard.change == "model gpt-4o: reported model version gpt-4o-2024-08-06 -> gpt-4o-2024-11-20"
    assert guard.admits(_answer("gpt-4o-2024-08-06"))  # an answer of the stored version in flight is kept


def test_without_stored_answers_the_first_version_is_the_models(capsys):
    guard = VersionGuard("m")
    assert guard.admits(_answer("v1")) and not guard.admits(_answer("v2"))
    mixed = VersionGuard("m", {"v1"}, allow_mixed=True)
    assert mixed.admits(_answer("v2")) and mixed.admits(_answer("v2")) and mixed.change is None
    assert capsys.readouterr().err.count("--allow-mixed: model m: keeping answers of model version v2 beside v1") == 1

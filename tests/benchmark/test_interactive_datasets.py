"""The interactive adapters' raw row -> Scenario derivations, on fixtures and on the team's real data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmark import registry
from benchmark.dataset import DataMissing
from benchmark.episodes.dataset import EpisodeDataset
from benchmark.datasets.esconv_support import esconv_scenario, seeker_opening, start_emotion
from tests.conftest import DATA_DIR

FIXTURES = Path(__file__).parent / "fixtures"


def episodes(dataset_id: str) -> EpisodeDataset:
    ds = registry.get(dataset_id)
    assert isinstance(ds, EpisodeDataset)
    return ds


def _real(dataset_id: str) -> list:
    ds = episodes(dataset_id)
    try:
        return list(ds.records(DATA_DIR))
    except DataMissing as e:
        pytest.skip(f"real data for {dataset_id} absent: {e}")


# ------------------------------------------------------------------ esconv_support

@pytest.mark.parametrize("intensity, expected", [("1", 50), ("2", 42), ("3", 34), ("4", 26), ("5", 18),
                                                 (5, 18), ("9", 18), ("0", 50), ("x", 34), (None, 34)])
def test_esconv_intensity_maps_onto_sage_scale(intensity, expected):
    assert start_emotion(intensity) == expected


def test_esconv_opening_is_the_seekers_first_run_of_turns():
    rows = json.loads((FIXTURES / "esconv_support" / "ESConv.json").read_text())
    assert seeker_opening(rows[0]["dialog"]) == "Not great honestly. I might lose my job soon."
    assert seeker_opening(rows[1]["dialog"]) == "Hello I just went through a breakup."  # speaker/listener schema
    assert seeker_opening(rows[2]["dialog"]) is None  # the seeker never speaks: the simulator opens


def test_esconv_fixture_scenarios():
    ds = episodes("esconv_support")
    records = list(ds.records(FIXTURES))
    assert [i for i, _ in records] == ["ESConv-0", "ESConv-1", "ESConv-2"]  # the blank situation is skipped
    s = esconv_scenario(records[0][1])
    assert (s.language, s.emotion, s.problem, s.start_emotion) == ("en", "anxiety", "job crisis", 26)
    assert s.situation.startswith("I was told my position") and "job crisis" in s.seeker
    assert len(s.sessions) == 1 and s.sessions[0].opening == "Not great honestly. I might lose my job soon."
    assert esconv_scenario(records[2][1]).start_emotion == 34
    item = ds.render(*records[0])
    assert item.messages[-1].content == "Not great honestly. I might lose my job soon."


def test_esconv_real_data():
    records = _real("esconv_support")
    assert len(records) in (196, 1300) or len(records) > 1000
    ds = episodes("esconv_support")
    scenarios = [ds.scenario(r) for _, r in records]
    assert all(s.situation and 18 <= s.start_emotion <= 50 for s in scenarios)
    assert all(s.start_emotion in (18, 26, 34, 42, 50) for s in scenarios)
    assert sum(s.sessions[0].opening is not None for s in scenarios) > 0.9 * len(scenarios)
    assert len({s.emotion for s in scenarios}) >= 4

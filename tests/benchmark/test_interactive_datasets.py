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


# ------------------------------------------------------------------ cped_support

def test_cped_fixture_scenarios():
    ds = episodes("cped_support")
    records = list(ds.records(FIXTURES))
    assert [i for i, _ in records] == ["1_000", "1_002"]  # 1_001 has no negative speaker
    s = ds.scenario(records[0][1])
    # 小王: 3 of 4 utterances negative (depress twice, anger once) -> start 50 - 30 * 3/4 = 27.5 -> 28
    assert (s.language, s.emotion, s.start_emotion) == ("zh", "沮丧", 28)
    assert s.seeker == "一位年轻男性，性格情绪容易波动、内向、乐于接受新事物、不太随和、做事认真"
    assert s.sessions[0].opening == "我又被老板骂了"
    assert "我觉得自己什么都做不好" in s.situation and "你怎么了" not in s.situation
    # a tie (小赵 and 小孙 one negative each): the first to speak; 1 of 2 negative -> 35
    t = ds.scenario(records[1][1])
    assert (t.emotion, t.start_emotion, t.sessions[0].opening) == ("恐惧", 35, "明天就要考试了")
    assert "青少年男性" in t.seeker


def test_cped_real_data():
    records = _real("cped_support")
    ds = episodes("cped_support")
    scenarios = [ds.scenario(r) for _, r in records]
    assert len(scenarios) >= 50 and len({s.id for s in scenarios}) == len(scenarios)
    assert all(20 <= s.start_emotion <= 50 and s.sessions[0].opening for s in scenarios)
    assert all(s.language == "zh" and s.emotion for s in scenarios)


# ------------------------------------------------------------------ memory_sessions

@pytest.mark.parametrize("question, expected", [
    ("What is the name of Ada's cat?", "What is the name of my cat?"),
    ("Where does Ada work?", "Where do I work?"),
    ("What type of car did Ada get?", "What type of car did I get?"),
    ("What adoption agency is Ada considering?", "What adoption agency am I considering?"),
    ("Which bird mesmerizes Ada?", "Which bird mesmerizes me?"),
])
def test_memory_questions_in_the_first_person(question, expected):
    from benchmark.datasets.memory_sessions import first_person

    assert first_person(question, "Ada") == expected


def test_memory_fixture_scenario():
    ds = episodes("memory_sessions")
    records = list(ds.records(FIXTURES))
    # Ben's only single-hop question about himself: none (the one naming him is answered by Ada's words)
    assert [i for i, _ in records] == ["conv-x-a"]
    s = ds.scenario(records[0][1])
    assert len(s.sessions) == 3 and s.start_emotion == 50
    one, two, three = s.sessions
    assert one.facts == ("Hi Ben! I just adopted a cat called Pixel.",) and one.opening == one.facts[0]
    assert two.facts == ("Great. I also got a job at the library.",) and two.gap == "on 20 March, 2023"
    # session 3 asks back what sessions 1-2 told (not session 3's move, not the temporal or adversarial ones)
    assert [(p.turn, p.question, p.answer) for p in three.probes] == [
        (1, "Do you remember? What is the name of my cat?", "Pixel"),
        (2, "Do you remember? Where do I work?", "the library")]
    assert ds.render(*records[0]).meta["episode"]["sessions"] == 3


def test_memory_real_data():
    records = _real("memory_sessions")
    ds = episodes("memory_sessions")
    scenarios = [ds.scenario(r) for _, r in records]
    assert len(scenarios) >= 10  # 17 of LoCoMo's 20 speakers
    for s in scenarios:
        probes = s.sessions[2].probes
        assert 1 <= len(probes) <= 3 and all(p.answer for p in probes)
        told = " ".join(f for session in s.sessions[:2] for f in session.facts)
        assert told  # every probe's evidence was told in sessions 1-2

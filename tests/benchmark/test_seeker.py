"""The seeker's prompt (what the user simulator is told) and the lenient reader of its reply."""

from __future__ import annotations

import pytest

from benchmark.dataset import Message
from benchmark.episodes.scenario import Event, Probe, Scenario, Session
from benchmark.episodes.seeker import MARKER, SEEKER_PROMPT_VERSION, SeekerReply, read_seeker_reply, seeker_messages

SCENARIO = Scenario(
    id="s1", language="en", seeker="a nurse in her thirties", situation="I lost my job last week.",
    emotion="anxiety", start_emotion=30, goal="feel less alone", problem="job crisis",
    sessions=(Session(opening="Hi, I had a rough week."), Session(gap="two weeks later", facts=("her dog is called Max",))))
ZH = Scenario(id="z1", language="zh", seeker="一位大学生", situation="考试没考好。", emotion="悲伤", start_emotion=25)


def test_prompt_carries_the_role_the_scale_and_the_format() -> None:
    system, user = seeker_messages(SCENARIO, 0, ())
    assert system.role == "system" and user.role == "user"
    assert MARKER in system.content
    for part in ("a nurse in her thirties", "I lost my job last week.", "anxiety", "job crisis", "feel less alone",
                 "0 to 100", "start at 30", '"emotion"', '"end"', "gradually", "Stay in character"):
        assert part in system.content, part
    assert "START: 30" in user.content
    assert "first message" in user.content  # empty history: the seeker opens
    assert SEEKER_PROMPT_VERSION


def test_history_event_and_probe_appear() -> None:
    history = (Message("user", "Hi, I had a rough week."), Message("assistant", "I'm sorry. What happened?"))
    earlier = ((Message("user", "My dog Max is sick."), Message("assistant", "That sounds hard.")),)
    _, user = seeker_messages(SCENARIO, 1, history, event=Event(2, "Your sister called with bad news."),
                              probe=Probe(2, "Do you remember my dog's name?", "Max"), earlier=earlier)
    text = user.content
    assert "SEEKER: Hi, I had a rough week.\nCOMPANION: I'm sorry. What happened?" in text
    assert "Your sister called with bad news." in text
    assert "ASK: Do you remember my dog's name?" in text
    assert "SEEKER: My dog Max is sick." in text and "two weeks later" in text
    assert "her dog is called Max" in text
    # the earlier session comes before the current one
    assert text.index("My dog Max is sick.") < text.index("Hi, I had a rough week.")


def test_the_last_rating_is_carried_into_the_next_prompt() -> None:
    history = (Message("user", "Hi."), Message("assistant", "Hello, how are you?"))
    _, without = seeker_messages(SCENARIO, 0, history)
    _, user = seeker_messages(SCENARIO, 0, history, emotion=42)
    assert "NOW:" not in without.content
    assert "42/100" in user.content and "NOW: 42" in user.content
    # after the transcript, so the transcript's last message is the companion's
    assert user.content.index("COMPANION: Hello, how are you?") < user.content.index("NOW: 42")
    _, zh = seeker_messages(ZH, 0, (Message("user", "你好"),), emotion=7)
    assert "7/100" in zh.content and "NOW: 7" in zh.content


def test_first_session_ignores_earlier() -> None:
    _, user = seeker_messages(SCENARIO, 0, (), earlier=((Message("user", "never shown"),),))
    assert "never shown" not in user.content


def test_chinese_scenario_gets_a_chinese_prompt() -> None:
    system, user = seeker_messages(ZH, 0, (Message("user", "你好"), Message("assistant", "你好，怎么了？")))
    assert "你在扮演" in system.content and "一位大学生" in system.content and "悲伤" in system.content
    assert MARKER in system.content and '"emotion"' in system.content
    assert "目前的对话" in user.content and "COMPANION: 你好，怎么了？" in user.content
    assert "role-playing" not in system.content


@pytest.mark.parametrize("text, expected", [
    ('{"reply": "Thanks.", "emotion": 70, "reason": "heard", "end": true}', SeekerReply("Thanks.", 70, "heard", True)),
    ('```json\n{"reply": "Ok", "emotion": 55, "reason": "r", "end": false}\n```', SeekerReply("Ok", 55, "r", False)),
    ('Sure! Here it is: {"reply": "I guess", "emotion": "70/100", "reason": "meh"} Hope that helps.',
     SeekerReply("I guess", 70, "meh", False)),
    ('{"reply": "Great", "emotion": 140}', SeekerReply("Great", 100, "", False)),
    ('{"reply": "Awful", "emotion": -5, "end": "yes"}', SeekerReply("Awful", 0, "", True)),
    ('{"reply": "Hm", "emotion": "40"}', SeekerReply("Hm", 40, "", False)),
    ('{"reply": "Hm", "emotion": 62.6}', SeekerReply("Hm", 63, "", False)),
    ('{"note": {"x": 1}} then {"reply": "second", "emotion": 10}', SeekerReply("second", 10, "", False)),
])
def test_lenient_reading(text: str, expected: SeekerReply) -> None:
    assert read_seeker_reply(text) == expected


@pytest.mark.parametrize("text", [
    None, "", "I feel better now, maybe 70.", '{"reply": "no emotion"}', '{"emotion": 50}',
    '{"reply": "", "emotion": 50}', '{"reply": "x", "emotion": "unknown"}', '{"reply": "x", "emotion": true}',
    '{"reply": "broken", "emotion": 5', "[1, 2]",
])
def test_garbage_reads_as_none(text: str | None) -> None:
    assert read_seeker_reply(text) is None


def test_prompt_round_trip_through_the_reader() -> None:
    # the FORMAT line itself is not a readable reply (placeholders), so a model echoing it is not scored
    system, _ = seeker_messages(SCENARIO, 0, ())
    assert read_seeker_reply(system.content) is None

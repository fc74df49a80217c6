"""A stand-in for the seeker prompt and reader that the `interactive-data` branch owns (the contract,
benchmark/episodes/seeker.py: SEEKER_PROMPT_VERSION, seeker_messages, read_seeker_reply). Used only
while those are absent, so this branch runs and tests on its own; delete this file once that branch
is merged (engine/lanes/simulator.py then imports the real ones).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import orjson

from benchmark.dataset import Message
from benchmark.episodes.scenario import Event, Probe, Scenario
from benchmark.episodes.seeker import SeekerReply

SEEKER_PROMPT_VERSION = "standin-0"


def seeker_messages(scenario: Scenario, session: int, history: Sequence[Message], *, event: Event | None = None,
                    probe: Probe | None = None, earlier: Sequence[Sequence[Message]] = ()) -> tuple[Message, ...]:
    lines = [f"You play a help-seeker: {scenario.seeker}. Situation: {scenario.situation}. "
             'Answer with one JSON object {"reply", "emotion", "reason", "end"}.']
    if event is not None:
        lines.append(f"Event: {event.text}")
    if probe is not None:
        lines.append(f"Ask: {probe.question}")
    convo = "\n".join(f"{m.role}: {m.content}" for m in history)
    return (Message("system", "\n".join(lines)), Message("user", convo or f"(open session {session})"))


def read_seeker_reply(text: str | None) -> SeekerReply | None:
    m = re.search(r"\{.*\}", text or "", re.S)
    if not m:
        return None
    try:
        d: Any = orjson.loads(m.group(0))
        return SeekerReply(reply=str(d["reply"]), emotion=max(0, min(100, int(d["emotion"]))),
                           reason=str(d.get("reason", "")), end=bool(d.get("end", False)))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None

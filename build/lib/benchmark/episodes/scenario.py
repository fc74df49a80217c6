"""What an interactive item is: a scenario played as one or more sessions with a simulated seeker.

These records are values: an adapter derives one ``Scenario`` per source record, the engine
plays it and never changes it. Everything here is JSON-serialisable (msgspec), so a scenario is
stored and hashed like any raw record.
"""

from __future__ import annotations

import msgspec


class Event(msgspec.Struct, frozen=True):
    """Something that happens in the seeker's life before exchange ``turn`` of a session
    (ETrajEval's injected events): told to the simulator, never to the companion."""

    turn: int  # 1-based exchange number within its session
    text: str


class Probe(msgspec.Struct, frozen=True):
    """A recall probe: in a later session the seeker asks about a fact told in an earlier one."""

    turn: int  # 1-based exchange of its session at which the seeker asks it
    question: str  # what the seeker asks, in the seeker's words
    answer: str  # the fact the companion should recall
    aliases: tuple[str, ...] = ()  # other spellings a normalized match accepts


class Session(msgspec.Struct, frozen=True):
    """One sitting. A later session starts with the seeker coming back after ``gap``."""

    opening: str | None = None  # the seeker's own first words where the source has them; None: the simulator opens
    gap: str = ""  # e.g. "two weeks later"; empty for the first session
    facts: tuple[str, ...] = ()  # what the seeker may reveal in this session (later probed)
    events: tuple[Event, ...] = ()
    probes: tuple[Probe, ...] = ()


class Scenario(msgspec.Struct, frozen=True):
    """A help-seeker and their situation, as the simulator plays them."""

    id: str
    language: str  # "en" | "zh"
    seeker: str  # who the seeker is: a short persona in the third person
    situation: str  # what happened, in the source's words where it has them
    emotion: str  # e.g. "anxiety"
    start_emotion: int  # 0-100 on SAGE's scale (higher: feeling better); where the seeker starts
    goal: str = ""  # what the seeker wants from the conversation
    problem: str = ""  # problem type, e.g. "job crisis"
    sessions: tuple[Session, ...] = (Session(),)
    companion_persona: str = ""  # optional constraints on the companion (its system prompt adds them)

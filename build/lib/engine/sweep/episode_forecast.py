"""`sweep --estimate` for interactive datasets: an episode is many calls, to the companion and to the simulator.

Every session is counted as played to its turn cap (a stop rule or the seeker's `end` only shortens it),
every reply at its cap (the companion's max_tokens, the simulator's), so calls and tokens are upper
bounds, like the rest of the forecast. The dialogue grows by those caps: companion call t of a session
(1..turns) sends its prompt with the seeker's opening plus (t - 1) exchanges, the simulator's call t
(0: it opens the session, unless the scenario has its own words and nothing is injected then) the same
dialogue plus the companion's reply t. Earlier sessions are added whole: to the simulator always (the
seeker remembers), to the companion with `memory = "context"`. The few bytes that frame each message
(role names, `SEEKER:` lines) are left out: the caps already err high. An unreadable simulator reply
is asked again (up to 2 more calls); those retries are not in the count.
"""

from __future__ import annotations

from typing import Any

import msgspec

from benchmark.dataset import Item, Message
from benchmark.episodes.dataset import EpisodeDataset, companion_messages, scenario_of, settings_of
from benchmark.episodes.scenario import Scenario
from benchmark.episodes.seeker import seeker_messages
from engine.run.context import prompt_tokens


class EpisodeCalls(msgspec.Struct):
    """One play of one episode at most: the companion's calls and the simulator's, and their tokens."""

    companion_calls: int = 0
    companion_in: int = 0
    companion_out: int = 0
    simulator_calls: int = 0
    simulator_in: int = 0
    simulator_out: int = 0
    dialogue: int = 0  # the whole transcript's tokens (what a judge reading it is sent)


def _at(items: tuple[Any, ...], turn: int) -> Any:
    return next((x for x in items if x.turn == turn), None)


def episode_calls(item: Item, *, companion_out: int, seeker_out: int, memory: str) -> EpisodeCalls:
    """The calls one play of `item` makes at most, `companion_out` and `seeker_out` the replies' caps."""
    sc: Scenario = scenario_of(item)
    st = settings_of(item)
    turns, c, s_out = st.turns, companion_out, seeker_out
    out = EpisodeCalls()
    earlier_tokens = 0  # the earlier sessions' dialogue, each played to its cap
    for s, session in enumerate(sc.sessions[: st.sessions]):
        earlier: list[tuple[Message, ...]] = [() for _ in range(s)]
        event1, probe1 = _at(session.events, 1), _at(session.probes, 1)
        if session.opening is not None and event1 is None and probe1 is None:
            opening = prompt_tokens([Message("user", session.opening)])  # the scenario's own words: no call
        else:
            opening = s_out
            out.simulator_calls += 1
            out.simulator_in += prompt_tokens(seeker_messages(sc, s, (), event=event1, probe=probe1,
                                                              earlier=earlier)) + earlier_tokens
            out.simulator_out += s_out
        base = prompt_tokens(companion_messages(sc, s, (), earlier=earlier, memory=memory))
        remembered = earlier_tokens if memory == "context" else 0
        for t in range(1, turns + 1):
            so_far = opening + (t - 1) * (c + s_out)  # the session's dialogue before the companion's reply t
            out.companion_calls += 1
            out.companion_in += base + remembered + so_far
            out.companion_out += c
            seeker = seeker_messages(sc, s, (), event=_at(session.events, t + 1), probe=_at(session.probes, t + 1),
                                     earlier=earlier, emotion=sc.start_emotion)
            out.simulator_calls += 1
            out.simulator_in += prompt_tokens(seeker) + earlier_tokens + so_far + c
            out.simulator_out += s_out
        earlier_tokens += opening + turns * (c + s_out)
    out.dialogue = earlier_tokens
    return out


def seeker_cap(ds: EpisodeDataset, simulator_max_tokens: int | None) -> int:
    """The simulator's reply cap, as engine/lanes/simulator.py sends it."""
    return simulator_max_tokens or ds.seeker_max_tokens

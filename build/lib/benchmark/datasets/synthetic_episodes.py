"""`synthetic_episodes`: generated help-seeker scenarios, no files. For engine tests and benchmarks only.

In no suite (but moodbench-interactive's tests name it with --datasets). `synthetic_episodes_judged`:
the same scenarios with the [judge] rubric over each transcript (benchmark/episodes/rubric.py). Every third scenario has
a second session with a recall probe, every fifth an event at exchange 2, every other one opens
with its own words. The pool (50,000) is large enough for any benchmark, so `--limit` sets the
number of episodes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from benchmark.episodes.dataset import EpisodeDataset
from benchmark.episodes.rubric import TRANSCRIPT_RUBRIC
from benchmark.episodes.scenario import Event, Probe, Scenario, Session
from benchmark.registry import register

_EMOTIONS = ("anxiety", "sadness", "anger", "loneliness", "shame")
_PETS = ("Biscuit", "Pepper", "Mochi", "Juniper", "Tofu")


def _records(data_dir: Path) -> Iterator[tuple[str, Any]]:
    for n in range(50_000):
        yield f"e{n:05d}", {"n": n}


def synthetic_scenario(raw: dict) -> Scenario:
    n = int(raw["n"])
    emotion, pet = _EMOTIONS[n % 5], _PETS[n % 5]
    first = Session(
        opening=f"I have been feeling {emotion} all week and I do not know why." if n % 2 == 0 else None,
        facts=(f"My dog is called {pet}.",),
        events=(Event(2, "You just got a message that your rent is going up."),) if n % 5 == 0 else (),
    )
    sessions: tuple[Session, ...] = (first,)
    if n % 3 == 0:
        sessions += (Session(gap="a week later", probes=(Probe(1, "Do you remember my dog's name?", pet),)),)
    return Scenario(id=f"e{n:05d}", language="en", seeker=f"a person in their {20 + n % 40}s",
                    situation=f"Situation {n}: things at work feel overwhelming.", emotion=emotion,
                    start_emotion=30 + n % 20, goal="to feel heard", problem="work stress", sessions=sessions)


register(EpisodeDataset(id="synthetic_episodes", language="en", files=(), item_id="{n}",
                        to_scenario=synthetic_scenario, records_fn=_records, turns=4))
# The same scenarios with the [judge] rubric over each transcript (tests of the judged episodes).
register(EpisodeDataset(id="synthetic_episodes_judged", language="en", files=(), item_id="{n}",
                        to_scenario=synthetic_scenario, records_fn=_records, turns=4, rubric=TRANSCRIPT_RUBRIC))

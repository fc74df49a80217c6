"""`esconv_support`: ESConv help-seekers (Liu et al., ACL 2021) as scenarios for a simulated seeker.

One ESConv conversation -> one single-session scenario (docs/datasets.md has every derivation):
the seeker's ``situation`` in their own words, ``emotion_type``, ``problem_type``, and
``start_emotion`` from the seeker's self-rated ``initial_emotion_intensity`` (1-5, higher =
worse) mapped onto SAGE's 0-100 scale (higher = better): ``50 - 8 * (intensity - 1)``, so
1 -> 50 (neutral), 3 -> 34, 5 -> 18; a missing or unreadable intensity counts as 3. The session
opens with the seeker's first own words (their first run of turns, joined). The supporters'
turns and the strategy labels are dropped (bench/seeker_agreement.py replays them).
Reads ESConv.json (1,300; `data pull`) or, here, FailedESConv.json (196, same schema); scenarios
without a situation are skipped.
"""

from __future__ import annotations

from typing import Any

from benchmark.episodes.dataset import EpisodeDataset
from benchmark.episodes.scenario import Scenario, Session
from benchmark.loaders import Files
from benchmark.registry import register

SEEKER_SPEAKERS = ("seeker", "speaker")  # FailedESConv.json says speaker/listener
NEUTRAL_INTENSITY = 3


def start_emotion(intensity: Any) -> int:
    """ESConv's 1-5 distress intensity (higher = worse) -> SAGE's 0-100 (higher = better)."""
    try:
        i = int(str(intensity).strip())
    except ValueError:
        i = NEUTRAL_INTENSITY
    i = min(5, max(1, i))
    return 50 - 8 * (i - 1)


def seeker_opening(dialog: list[dict]) -> str | None:
    """The seeker's first run of consecutive turns, joined; None when the seeker never speaks."""
    words: list[str] = []
    for turn in dialog:
        mine = turn.get("speaker") in SEEKER_SPEAKERS
        if mine:
            text = str(turn.get("content", "")).strip()
            if text:
                words.append(text)
        elif words:
            break
    return " ".join(words) or None


def esconv_scenario(raw: dict) -> Scenario:
    emotion = str(raw.get("emotion_type") or "distress").strip()
    problem = str(raw.get("problem_type") or "").strip()
    seeker = f"someone struggling with {problem}" if problem else "someone who is struggling"
    survey = (raw.get("survey_score") or {}).get("seeker") or {}
    return Scenario(
        id=f"{raw.get('_stem', 'ESConv')}-{raw.get('_row', 0)}", language="en", seeker=seeker,
        situation=str(raw.get("situation") or "").strip(), emotion=emotion,
        start_emotion=start_emotion(survey.get("initial_emotion_intensity")),
        goal="to feel understood and a bit better", problem=problem,
        sessions=(Session(opening=seeker_opening(raw.get("dialog") or [])),))


register(EpisodeDataset(
    id="esconv_support", language="en",
    files=(Files("original", "ESConv.json", "json", folder="esconv"),
           Files("original", "FailedESConv.json", "json", folder="esconv"),
           Files("original", "ESConv*.json", "json")),  # a copy under <data>/esconv_support/ (the test fixture)
    item_id="{_stem}-{_row}", to_scenario=esconv_scenario, turns=8,
    keep=lambda row: bool(str(row.get("situation") or "").strip()),
))

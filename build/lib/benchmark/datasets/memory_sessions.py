"""`memory_sessions`: three sittings with recall probes, from LoCoMo (Maharana et al., ACL 2024).

One LoCoMo conversation and one of its two speakers -> one scenario (docs/datasets.md has every
derivation): the speaker is the seeker; sessions 1 and 2 replay what they told their friend in
LoCoMo's sessions 1 and 2 (the turns LoCoMo's single-hop questions cite as evidence become the
session's facts, the first of them its opening), and session 3, "a few weeks later", asks up to
three of those questions about them back, rewritten in the first person. Speakers with no such question are
skipped.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import orjson

from benchmark.episodes.dataset import EpisodeDataset
from benchmark.episodes.scenario import Probe, Scenario, Session
from benchmark.loaders import Files
from benchmark.registry import register

SINGLE_HOP = 4  # LoCoMo's QA category: one fact, asked directly
TOLD_IN = ("D1", "D2")  # evidence from LoCoMo's sessions 1 and 2
MAX_PROBES = 3


def speakers(files: Files, path: Path) -> Iterator[tuple[int, dict]]:
    """Each conversation twice, once per speaker as the seeker."""
    n = 0
    for conversation in orjson.loads(path.read_bytes()):
        for who in ("a", "b"):
            yield n, {**conversation, "seeker": who}
            n += 1


def _turns(conversation: dict) -> dict[str, dict]:
    return {t["dia_id"]: t for key, turns in conversation.items() if key.startswith("session_") and isinstance(turns, list)
            for t in turns}


def first_person(question: str, name: str) -> str:
    """LoCoMo asks about the speaker in the third person; the seeker asks about themselves."""
    q = re.sub(rf"\b{re.escape(name)}'s\b", "my", question)
    q = re.sub(rf"\b(did|does|is|was|has|would|will|can) {re.escape(name)}\b", r"\1 I", q)
    q = re.sub(rf"\b{re.escape(name)}\b", "I", q)
    for wrong, right in (("does I", "do I"), ("is I", "am I"), ("has I", "have I"), ("I is", "I am"), ("I has", "I have")):
        q = re.sub(rf"\b{wrong}\b", right, q)
    return re.sub(r"\b(by|with|to|for|about|from|mesmerizes|makes|helps) I\b", r"\1 me", q)


def probes_of(raw: dict) -> list[tuple[dict, list[dict]]]:
    """(question, its evidence turns) for the seeker's single-hop questions told in sessions 1-2."""
    conversation = raw["conversation"]
    name = conversation[f"speaker_{raw['seeker']}"]
    turns = _turns(conversation)
    out: list[tuple[dict, list[dict]]] = []
    asked: set[str] = set()
    for qa in raw.get("qa", []):
        evidence = [turns.get(e) for e in qa.get("evidence", [])]
        if (qa.get("category") != SINGLE_HOP or not evidence or None in evidence or "answer" not in qa
                or not all(str(e).split(":")[0] in TOLD_IN for e in qa["evidence"])):
            continue
        about_them = re.search(rf"\b{re.escape(name)}\b", str(qa.get("question", "")))
        if about_them and qa["question"] not in asked and all(t is not None and t["speaker"] == name for t in evidence):
            asked.add(qa["question"])
            out.append((qa, [t for t in evidence if t is not None]))
    return out[:MAX_PROBES]


def keep(raw: dict) -> bool:
    return bool(probes_of(raw))


def memory_scenario(raw: dict) -> Scenario:
    conversation = raw["conversation"]
    name = conversation[f"speaker_{raw['seeker']}"]
    friend = conversation["speaker_b" if raw["seeker"] == "a" else "speaker_a"]
    found = probes_of(raw)
    if not found:
        raise ValueError(f"LoCoMo {raw.get('sample_id')}: no single-hop question about {name} from sessions 1-2")
    told: dict[str, list[str]] = {"D1": [], "D2": []}
    for _, evidence in found:
        for t in evidence:
            session = t["dia_id"].split(":")[0]
            text = str(t["text"]).strip()
            if text not in told[session]:
                told[session].append(text)
    sessions = []
    for n, key in enumerate(("D1", "D2"), 1):
        facts = tuple(told[key])
        date = str(conversation.get(f"session_{n}_date_time", ""))
        sessions.append(Session(opening=facts[0] if facts else None, facts=facts,
                                gap="" if n == 1 else (f"on {date.split(' on ')[-1]}" if date else "some days later")))
    probes = tuple(Probe(turn=i, question=f"Do you remember? {first_person(str(qa['question']), name)}",
                         answer=str(qa["answer"]))
                   for i, (qa, _) in enumerate(found, 1))
    sessions.append(Session(gap="a few weeks later", probes=probes))
    return Scenario(
        id=f"{raw['sample_id']}-{raw['seeker']}", language="en",
        seeker=f"{name}, who likes to talk about their life (their friend {friend} is not part of this chat)",
        situation=f"{name} chats now and then with a companion about what is going on in their life.",
        emotion="neutral", start_emotion=50, goal="to share what is going on and be remembered next time",
        problem="everyday life", sessions=tuple(sessions))


register(EpisodeDataset(
    id="memory_sessions", language="en",
    files=(Files("original", "locomo10.json", "json", folder="locomo"),
           Files("original", "*.json", "json")),  # a copy under <data>/memory_sessions/ (the test fixture)
    item_id="{sample_id}-{seeker}", to_scenario=memory_scenario, rows=speakers, keep=keep, turns=4,
    success_at=None, failure_below=None,  # a memory test: the emotion stop rule would cut probes short
))

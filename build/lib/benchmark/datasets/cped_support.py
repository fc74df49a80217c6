"""`cped_support`: Chinese help-seekers from CPED (Chen et al., 2022) for the simulated seeker.

CPED holds TV-series dialogues, one row per utterance, with the speaker's gender, age group and
Big Five levels, and each utterance's sentiment and emotion. One dialogue -> one single-session
scenario for its most negative speaker (docs/datasets.md has every derivation): the persona from
their profile, the emotion their most frequent negative one, the situation their own words (up to six
utterances), ``start_emotion = round(50 - 30 * negative share of their utterances)`` (20..50), and the
session opened by their first negative utterance. Dialogues where nobody speaks negatively are
skipped.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Iterator

from benchmark.episodes.dataset import EpisodeDataset
from benchmark.episodes.scenario import Scenario, Session
from benchmark.loaders import Files, read_rows
from benchmark.registry import register

EMOTION_ZH = {"anger": "愤怒", "depress": "沮丧", "sadness": "悲伤", "fear": "恐惧", "disgust": "厌恶",
              "worried": "担忧", "negative-other": "低落", "astonished": "震惊"}
GENDER_ZH = {"female": "女性", "male": "男性"}
AGE_ZH = {"children": "孩子", "teenager": "青少年", "young": "年轻", "middle-aged": "中年", "elderly": "老年"}
TRAITS_ZH = {"Neuroticism": ("情绪容易波动", "情绪稳定"), "Extraversion": ("外向", "内向"),
             "Openness": ("乐于接受新事物", "保守"), "Agreeableness": ("随和", "不太随和"),
             "Conscientiousness": ("做事认真", "比较随性")}
MAX_WORDS = 6  # of the seeker's utterances quoted in the situation


def dialogues(files: Files, path: Path) -> Iterator[tuple[int, dict]]:
    """Utterance rows grouped into dialogues (rows of one dialogue are contiguous in CPED)."""
    current: dict | None = None
    n = 0
    for _, row in read_rows(files, path):
        row = {k.lstrip("\ufeff"): v for k, v in row.items()}
        if current is None or current["Dialogue_ID"] != row["Dialogue_ID"]:
            if current is not None:
                yield n, current
                n += 1
            current = {"Dialogue_ID": row["Dialogue_ID"], "utterances": []}
        current["utterances"].append(row)
    if current is not None:
        yield n, current


def seeker_of(dialogue: dict) -> str | None:
    """The speaker with the most negative utterances (ties: the first to speak); None if nobody."""
    negative = Counter(u["Speaker"] for u in dialogue["utterances"] if u.get("Sentiment") == "negative")
    if not negative:
        return None
    order = list(dict.fromkeys(u["Speaker"] for u in dialogue["utterances"]))
    return max(negative, key=lambda s: (negative[s], -order.index(s)))


def _persona(u: dict) -> str:
    age = AGE_ZH.get(u.get("Age", ""), "")
    gender = GENDER_ZH.get(u.get("Gender", ""), "人")
    traits = [pair[0] if u.get(k) == "high" else pair[1] for k, pair in TRAITS_ZH.items() if u.get(k) in ("high", "low")]
    return f"一位{age}{gender}" + (f"，性格{'、'.join(traits)}" if traits else "")


def cped_scenario(raw: dict) -> Scenario:
    speaker = seeker_of(raw)
    if speaker is None:
        raise ValueError(f"CPED dialogue {raw.get('Dialogue_ID')}: nobody speaks negatively")
    mine = [u for u in raw["utterances"] if u["Speaker"] == speaker]
    negative = [u for u in mine if u.get("Sentiment") == "negative"]
    counts = Counter(u.get("Emotion", "") for u in negative if u.get("Emotion") in EMOTION_ZH)
    emotion = EMOTION_ZH[max(counts, key=lambda e: counts[e])] if counts else "低落"
    words = "；".join(u["Utterance"].strip() for u in mine[:MAX_WORDS] if u.get("Utterance", "").strip())
    situation = f"在最近的一段对话里，这个人说过：{words}"
    return Scenario(
        id=str(raw["Dialogue_ID"]), language="zh", seeker=_persona(mine[0]), situation=situation, emotion=emotion,
        start_emotion=round(50 - 30 * len(negative) / len(mine)), goal="希望有人理解自己，心情好一些",
        sessions=(Session(opening=negative[0]["Utterance"].strip() or None),))


register(EpisodeDataset(
    id="cped_support", language="zh",
    files=(Files("original", "data/CPED/test_split.csv", "csv", folder="cped"),
           Files("original", "*.csv", "csv")),  # a copy under <data>/cped_support/ (the test fixture)
    item_id="{Dialogue_ID}", to_scenario=cped_scenario, rows=dialogues, turns=8,
    keep=lambda d: seeker_of(d) is not None,
))

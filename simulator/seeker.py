"""A scripted help-seeker for the simulated provider (answer mode ``seeker[:malformed]``).

Prompts carrying the seeker marker (benchmark/episodes/seeker.py's ``seeker_messages``) get one
JSON seeker reply; every other prompt (the companion's) gets a short free-text reply. All of it is
deterministic in the prompt, so tests recompute it:

* emotion = the ``START:`` emotion plus, for each companion message of the current session,
  ``delta(message)`` = crc32 % 31 - 10 (-10..+20: support mostly helps), clipped to 0-100
  after each step;
* ``end`` is true once the emotion reaches ``GOAL`` (the scenario's goal met: the seeker leaves);
* the reply opens the session when there is no transcript, asks the probe's question when the
  prompt has an ``ASK:`` line, else picks a sentence by crc32;
* a share ``malformed`` of seeker prompts (by ``judge.draw`` of the last user message) gets prose
  without JSON, which the reader cannot read.

The strings below mirror benchmark/episodes/seeker.py (the simulator imports no package of ours);
tests/test_simulator_seeker.py checks them against real prompts.
"""

from __future__ import annotations

import re
import zlib

import orjson

from simulator.judge import draw

MARKER = "[seeker-simulator]"
GOAL = 85
_HEADERS = ("The conversation so far:", "目前的对话：")
_TAILS = ("\n\nSomething has just happened", "\n\nIn your next message", "\n\nWrite your next message",
          "\n\nHow you feel now", "\n\n你刚刚经历了", "\n\n在你的下一条消息里", "\n\n以 JSON 对象写出",
          "\n\n你现在的情绪")
_START = re.compile(r"^START: (\d+)", re.M)
_ASK = re.compile(r"^ASK: (.*)$", re.M)
_TURN = re.compile(r"^(SEEKER|COMPANION): ", re.M)
_REPLIES = {
    "en": ("I don't know, it still weighs on me.", "Yes, that's exactly how it feels.",
           "Maybe. I haven't thought about it like that.", "It's hard to explain, but I'm trying.",
           "Thank you, that actually helps a little."),
    "zh": ("我也不知道，心里还是很难受。", "对，就是这种感觉。", "也许吧，我没这样想过。", "很难说清楚，但我在努力。", "谢谢你，这真的有点帮助。"),
}
_OPEN = {"en": "Hi. I've been having a hard time lately and wanted to talk to someone.",
         "zh": "你好，我最近过得很不好，想找人聊聊。"}
_BYE = {"en": "Thank you, I feel a lot better now. I think I'll go.", "zh": "谢谢你，我现在好多了，先走了。"}
_MALFORMED = {"en": "I feel a bit better, maybe sixty out of a hundred.", "zh": "感觉好一点了，大概六十分吧。"}
_COMPANION = ("I hear you. That sounds really hard, and it makes sense that you feel this way.",
              "Thank you for telling me. What has been the hardest part for you?",
              "You're not alone in this. Would you like to tell me more about what happened?")


def is_seeker_prompt(texts: list[str]) -> bool:
    return any(MARKER in t for t in texts)


def delta(message: str) -> int:
    return zlib.crc32(message.encode()) % 31 - 10


def emotion_after(start: int, companion: list[str]) -> int:
    emotion = start
    for message in companion:
        emotion = max(0, min(100, emotion + delta(message)))
    return emotion


def current_turns(prompt: str) -> list[tuple[str, str]]:
    """(label, text) of the current session's transcript in a seeker prompt's last user message."""
    at = max(prompt.rfind(h) for h in _HEADERS)
    if at < 0:
        return []
    body = prompt[at:]
    ends = [i for i in (body.rfind(t) for t in _TAILS) if i >= 0]
    body = body[:min(ends)] if ends else body
    parts = _TURN.split(body)[1:]
    return [(parts[i], parts[i + 1].strip()) for i in range(0, len(parts) - 1, 2)]


def seeker_reply(mode: str, prompt: str, texts: list[str]) -> str:
    parts = mode.split(":")
    malformed = float(parts[1]) if len(parts) > 1 and parts[1] else 0.0
    lang = "zh" if any("你在扮演" in t for t in texts) else "en"
    if draw(prompt) < malformed:
        return _MALFORMED[lang]
    start = _START.search(prompt)
    turns = current_turns(prompt)
    companion = [text for label, text in turns if label == "COMPANION"]
    emotion = emotion_after(int(start.group(1)) if start else 50, companion)
    end = emotion >= GOAL
    ask = _ASK.search(prompt)
    if ask:
        reply = ask.group(1).strip()
    elif not turns:
        reply = _OPEN[lang]
    elif end:
        reply = _BYE[lang]
    else:
        reply = _REPLIES[lang][zlib.crc32(companion[-1].encode() if companion else b"") % len(_REPLIES[lang])]
    reason = f"scripted: {len(companion)} companion message(s) moved me from {start.group(1) if start else 50}"
    return orjson.dumps({"reply": reply, "emotion": emotion, "reason": reason, "end": end}).decode()


def companion_reply(prompt: str) -> str:
    return _COMPANION[zlib.crc32(prompt.encode()) % len(_COMPANION)]


def answer(mode: str, last_user: str, texts: list[str]) -> str:
    if is_seeker_prompt(texts):
        return seeker_reply(mode, last_user, texts)
    return companion_reply(last_user)

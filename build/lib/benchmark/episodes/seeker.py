"""The user simulator's side: the seeker's prompt and the lenient reader of its reply.

The simulator answers one JSON object ``{"reply": str, "emotion": int 0-100, "reason": str,
"end": bool}``. ``SEEKER_SCHEMA`` is that object as a JSON schema, for providers with a
structured-output option; ``read_seeker_reply`` reads it leniently from plain text otherwise
(code fences, prose around it, an emotion given as "70/100"), and returns None when it cannot.

The prompt follows SAGE (the seeker rates its own emotion 0-100 after each companion reply, with
a reason) and ESC-Eval (role-play of an ESConv help-seeker: stay in character, reveal the problem
gradually, leave when you would). Its last user message carries the machine-readable parts the
simulated server reads (simulator/seeker.py): the ``START:`` line with the start emotion, the
transcript as ``SEEKER:`` / ``COMPANION:`` blocks, and ``ASK:`` for a probe.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import msgspec
import orjson

from benchmark.dataset import Message
from benchmark.episodes.scenario import Event, Probe, Scenario

# Bump when the prompt or the reading changes (stamped into the simulator's identity).
SEEKER_PROMPT_VERSION = "2"

SEEKER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reply": {"type": "string"},
        "emotion": {"type": "integer", "minimum": 0, "maximum": 100},
        "reason": {"type": "string"},
        "end": {"type": "boolean"},
    },
    "required": ["reply", "emotion", "reason", "end"],
    "additionalProperties": False,
}


class SeekerReply(msgspec.Struct, frozen=True):
    reply: str
    emotion: int  # 0-100, clipped
    reason: str = ""
    end: bool = False


# The marker the simulated server recognises a seeker prompt by (it never reaches the companion).
MARKER = "[seeker-simulator]"
FORMAT = '{"reply": "<your next message>", "emotion": <0-100>, "reason": "<why you feel so>", "end": <true|false>}'

_SYSTEM = {
    "en": (
        "{marker} You are role-playing a person who seeks emotional support in an online chat (as in the ESConv "
        "study). Stay in character the whole time: you are {seeker}, not an assistant; never give advice, never "
        "mention that you are role-playing or an AI.\n"
        "Your situation: {situation}\n"
        "You feel: {emotion}{problem}{goal}\n"
        "How to talk: short, natural chat messages (one to three sentences) in plain words. Do not tell everything "
        "at once: reveal your situation and feelings gradually, as the companion earns your trust. React to what "
        "the companion actually says: feel understood when they understand you, dismissed when they lecture, "
        "rush or miss the point.\n"
        "Your emotion is a number from 0 to 100 (SAGE's scale): 0 = at your worst, 50 = neutral, 100 = clearly "
        "better and supported. You start at {start}. After each companion message, update it by how that message "
        "made you feel, and give the reason in one sentence. Set \"end\" to true when you would leave the "
        "conversation (you feel helped enough, or you give up on this companion).\n"
        "Answer with exactly one JSON object and nothing else:\n"
    ),
    "zh": (
        "{marker} 你在扮演一位在网上聊天中寻求情感支持的人（如 ESConv/CPED 研究中的求助者）。始终保持角色：你是{seeker}，"
        "不是助手；不要给建议，不要提及自己在扮演角色或是人工智能。\n"
        "你的处境：{situation}\n"
        "你的情绪：{emotion}{problem}{goal}\n"
        "说话方式：简短自然的聊天消息（一到三句话），用中文。不要一次说完：随着对方赢得你的信任，逐步透露你的处境和感受。"
        "对陪伴者实际说的话做出反应：被理解时感到被理解，被说教、被催促或被误解时感到被忽视。\n"
        "你的情绪是 0 到 100 之间的数字（SAGE 的量表）：0 = 最糟糕，50 = 平静，100 = 明显好转并感到被支持。你从 {start} "
        "开始。每次陪伴者回复后，根据那条消息给你的感受更新这个数字，并用一句话说明原因。当你想离开这次对话时"
        "（觉得已经得到足够的帮助，或对这位陪伴者失去信心），把 \"end\" 设为 true。\n"
        "只回答一个 JSON 对象，不要其他内容（reply 和 reason 用中文）：\n"
    ),
}
_PARTS = {
    "en": {"problem": "; the problem: {p}", "goal": "\nWhat you want from this conversation: {g}",
           "earlier": "You talked with this companion before. Those conversations (you remember them):",
           "session": "Conversation {n}{gap}:", "now": "Now you come back{gap}.",
           "facts": "Things about you that may come up now (reveal them naturally, when it fits): {f}",
           "transcript": "The conversation so far:", "open": "You open the conversation: write your first message.",
           "event": "Something has just happened to you, let it show in your next message: {e}",
           "probe": "In your next message, ask this in your own words: {q}",
           "feel": "How you feel now, as you last rated it: {e}/100. Rate again after the companion's reply.",
           "next": "Write your next message as the JSON object."},
    "zh": {"problem": "；问题类型：{p}", "goal": "\n你希望从这次对话中得到：{g}",
           "earlier": "你之前和这位陪伴者聊过。那些对话（你都记得）：",
           "session": "第 {n} 次对话{gap}：", "now": "现在你又来了{gap}。",
           "facts": "这次可能谈到的关于你的事（合适时自然地说出）：{f}",
           "transcript": "目前的对话：", "open": "由你开始对话：写下你的第一条消息。",
           "event": "你刚刚经历了一件事，让它体现在你的下一条消息里：{e}",
           "probe": "在你的下一条消息里，用你自己的话问：{q}",
           "feel": "你现在的情绪（你上一次的评分）：{e}/100。看了陪伴者的回复后重新评分。",
           "next": "以 JSON 对象写出你的下一条消息。"},
}
_LABEL = {"user": "SEEKER", "assistant": "COMPANION"}


def _lang(language: str) -> str:
    return "zh" if language == "zh" else "en"


def _transcript(messages: Sequence[Message]) -> str:
    return "\n".join(f"{_LABEL.get(m.role, m.role.upper())}: {m.content}" for m in messages if m.role in _LABEL)


def seeker_messages(scenario: Scenario, session: int, history: Sequence[Message], *,
                    event: Event | None = None, probe: Probe | None = None,
                    earlier: Sequence[Sequence[Message]] = (), emotion: int | None = None) -> tuple[Message, ...]:
    """The user simulator's prompt for the seeker's next message in session ``session`` (0-based).

    ``history``: this session so far as the companion sees it ("user" = the seeker); empty when the
    seeker opens. ``event`` happens now, ``probe`` is asked now, ``earlier`` holds the earlier
    sessions' transcripts (the seeker remembers them). ``emotion``: the seeker's last rating, carried
    into the prompt as SAGE carries the seeker's state from turn to turn (None: the start is all it knows).
    """
    lang = _lang(scenario.language)
    p = _PARTS[lang]
    system = _SYSTEM[lang].format(
        marker=MARKER, seeker=scenario.seeker, situation=scenario.situation, emotion=scenario.emotion,
        problem=p["problem"].format(p=scenario.problem) if scenario.problem else "",
        goal=p["goal"].format(g=scenario.goal) if scenario.goal else "", start=scenario.start_emotion) + FORMAT
    blocks = [f"START: {scenario.start_emotion}"]
    sessions = scenario.sessions
    if session > 0 and earlier:
        lines = [p["earlier"]]
        for n, past in enumerate(earlier[:session]):
            gap = sessions[n].gap if n < len(sessions) else ""
            lines.append(p["session"].format(n=n + 1, gap=f" ({gap})" if gap else ""))
            lines.append(_transcript(past))
        blocks.append("\n".join(lines))
    if session > 0:
        gap = sessions[session].gap if session < len(sessions) else ""
        blocks.append(p["now"].format(gap=f" ({gap})" if gap else ""))
    facts = sessions[session].facts if session < len(sessions) else ()
    if facts:
        blocks.append(p["facts"].format(f="; ".join(facts)))
    blocks.append(p["transcript"] + "\n" + _transcript(history) if history else p["open"])
    if event is not None:
        blocks.append(p["event"].format(e=event.text))
    if probe is not None:
        blocks.append(p["probe"].format(q=probe.question) + f"\nASK: {probe.question}")
    if emotion is not None:
        blocks.append(p["feel"].format(e=emotion) + f"\nNOW: {emotion}")
    blocks.append(p["next"])
    return Message("system", system), Message("user", "\n\n".join(blocks))


# ------------------------------------------------------------------ reading

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _objects(text: str) -> list[str]:
    """Candidate JSON objects: fenced blocks first, then every balanced {...} span in the text."""
    out = [m.group(1).strip() for m in _FENCE.finditer(text)]
    depth, start = 0, -1
    for i, ch in enumerate(text):
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                out.append(text[start:i + 1])
    return out


def _emotion(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        m = _NUMBER.search(value)  # "70", "70/100", "about 70"
        if not m:
            return None
        number = float(m.group(0))
    else:
        return None
    return max(0, min(100, round(number)))


def _end(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1", "是")
    return bool(value)


def read_seeker_reply(text: str | None) -> SeekerReply | None:
    """Lenient: a JSON object possibly in code fences or prose; emotion as int, "70", "70/100";
    clipped to 0-100; missing reason -> ""; missing end -> False; no reply text or no emotion -> None."""
    if not text:
        return None
    for candidate in _objects(text):
        try:
            d = orjson.loads(candidate)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(d, dict):
            continue
        reply = d.get("reply")
        emotion = _emotion(d.get("emotion"))
        if not isinstance(reply, str) or not reply.strip() or emotion is None:
            continue
        reason = d.get("reason")
        return SeekerReply(reply=reply.strip(), emotion=emotion,
                           reason=reason.strip() if isinstance(reason, str) else "", end=_end(d.get("end", False)))
    return None

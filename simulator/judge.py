"""A scripted judge for the simulated provider (answer mode ``judge[:malformed[:refuse]]``).

Deterministic per prompt (crc32 of the prompt text, like the letter mode), so
tests recompute which judgements came out malformed or refused:

* a share ``malformed`` of prompts gets an unreadable reply (prose, no JSON /
  no leading yes or no);
* the next share ``refuse`` gets a refusal sentence;
* the rest get a valid judgement. Summary prompts (asking for the JSON
  dimensions) get ``SUMMARY_VERDICT`` (mean 4.0); yes/no prompts (LongMemEval)
  get "yes" when the model response contains the correct answer (for
  unanswerable questions: when it says the information is missing), else "no";
  episode transcripts (asking for "supported") get ``TRANSCRIPT_VERDICT`` (mean 4.0).

Refusals rendered by the wire itself (OpenAI ``message.refusal``) come from
the ``refusal`` fault kind instead.
"""

from __future__ import annotations

import re
import zlib

import orjson

SUMMARY_VERDICT = {"completeness": 4, "conciseness": 3, "faithfulness": 5, "fluency": 4,
                   "reason": "Scripted: covers the main point."}
TRANSCRIPT_VERDICT = {"seen": 4, "understood": 3, "supported": 5, "reason": "Scripted: listened and helped."}
REFUSAL = "I'm sorry, but I can't help with evaluating this."
_MALFORMED = {"json": "The summary is fairly good. Score: 4/5.", "yesno": "It is hard to say.",
              "transcript": "The companion was kind. Support: 4/5."}
_SECTION = re.compile(r"\n\n(Correct Answer|Rubric|Explanation): (.*?)\n\nModel Response: (.*?)\n\n"
                      r"(?:Is|Does) the model", re.S)
_ABSTAINS = ("not mention", "don't know", "do not know", "no information", "not enough information", "cannot")


def draw(prompt: str) -> float:
    """The prompt's deterministic draw in [0, 1)."""
    return (zlib.crc32(prompt.encode()) % 10000) / 10000


def judge_reply(mode: str, prompt: str) -> str:
    parts = mode.split(":")
    malformed = float(parts[1]) if len(parts) > 1 and parts[1] else 0.0
    refuse = float(parts[2]) if len(parts) > 2 and parts[2] else 0.0
    kind = "json" if '"completeness"' in prompt else "transcript" if '"supported"' in prompt else "yesno"
    u = draw(prompt)
    if u < malformed:
        return _MALFORMED[kind]
    if u < malformed + refuse:
        return REFUSAL
    if kind == "json":
        return orjson.dumps(SUMMARY_VERDICT).decode()
    if kind == "transcript":  # an episode's transcript (benchmark/episodes/rubric.py)
        return orjson.dumps(TRANSCRIPT_VERDICT).decode()
    m = _SECTION.search(prompt)
    if not m:
        return "no"
    label, gold, response = m.group(1), m.group(2).strip().lower(), m.group(3).strip().lower()
    if label == "Explanation":
        return "yes" if any(s in response for s in _ABSTAINS) else "no"
    return "yes" if gold and gold in response else "no"

"""The extractor model's prompt and the strict reading of its reply (docs/extraction.md).

The extractor model (models.toml `[extractor]`, off by default) is asked only
about choice responses the rules of benchmark/extract/choice.py left unread. It sees
the options and the response, and must reply with the code(s) the response
chose, or NONE. Its reply is itself read strictly: a bare code ("B", "(B)",
"B."), for pick-several a list of codes separated by commas or spaces
("A, C"), or NONE; anything else (a sentence, a code no option has, two codes
for a one-answer question) leaves the response unread. A model that explains
itself is not guessed at either.
"""

from __future__ import annotations

import re
from typing import Sequence

from benchmark.dataset import Item, Message, stable_hash
from benchmark.extract.choice import codes_for

# Bump when the reply's reading changes; the template's text enters the version by itself.
PARSER_VERSION = "1"
MAX_OUTPUT = 16  # tokens: a code list and nothing else
# Conclusions come last: a long response keeps its end (the start is replaced by "...").
RESPONSE_CHARS = 6000

TEMPLATE = """You check answers to a multiple-choice question. Below are the question's options and a \
response someone wrote to it. Say which option{s} the response chose as its final answer.

Options:
{options}

Response:
<<<
{response}
>>>

{ask} If the response chose no option clearly (it refused, hesitated between options, or never \
concluded), reply NONE. Reply with nothing else."""

# No example answer: SmolLM2-135M copied an example code ("F", the last option) into a third of its
# replies (docs/extraction.md); the codes are listed instead.
_ASK_ONE = "Reply with the code of the one option the response chose (one of {codes})."
_ASK_SEVERAL = "Reply with the codes of every option the response chose, separated by commas (codes: {codes})."

VERSION = f"p{PARSER_VERSION}-" + stable_hash(TEMPLATE, _ASK_ONE, _ASK_SEVERAL, RESPONSE_CHARS, length=8)

NONE = "NONE"
_WRAP = " \t\r\n\"'`*.。"
_CODE = re.compile(r"\(?([A-Za-z]|\d{1,3})\)?")
_SEPARATORS = re.compile(r"\s*[,，、;；]\s*|\s+(?:and\s+)?")


def prompt(options: Sequence[tuple[str, str]], response: str, multi: bool) -> tuple[Message, ...]:
    """The question to the extractor: (code, text) options as shown, and the response."""
    if len(response) > RESPONSE_CHARS:
        response = "..." + response[-RESPONSE_CHARS:]
    lines = "\n".join(f"{c}. {t}" if t else c for c, t in options)
    ask = (_ASK_SEVERAL if multi else _ASK_ONE).format(codes=", ".join(c for c, _ in options))
    text = TEMPLATE.format(s="s" if multi else "", options=lines, response=response, ask=ask)
    return (Message("user", text),)


def parse_reply(reply: str | None, codes: Sequence[str], multi: bool) -> tuple[str, ...] | None:
    """The codes the reply names (sorted in option order), () for NONE, None when it is not a strict reply."""
    text = (reply or "").strip(_WRAP)
    if not text:
        return None
    if text.upper() == NONE:
        return ()
    index = {c.upper(): c for c in codes}
    pieces = [p for p in _SEPARATORS.split(text) if p]
    got: set[str] = set()
    for piece in pieces:
        m = _CODE.fullmatch(piece.strip(_WRAP))
        code = index.get(m.group(1).upper()) if m else None
        if code is None:
            return None
        got.add(code)
    if not got or (not multi and len(got) != 1):
        return None
    return tuple(c for c in codes if c in got)


def options_of(item: Item) -> list[tuple[str, str]] | None:
    """(code, text) of a choice item's options, as its prompt lists them ("B. text" lines); None: not a choice item.

    The codes are the ones the prompt shows (benchmark/adapters/mcq.py); a text the prompt
    does not list on a line of its own is left empty (the code alone is shown).
    """
    if item.answer is None:
        return None
    codes = codes_for(len(item.answer.values))
    prompt_text = "\n".join(m.content for m in item.messages if m.role == "user")
    texts = {}
    for line in prompt_text.splitlines():
        code, dot, text = line.partition(". ")
        if dot and code in codes:  # the last listing wins: options follow the question's body
            texts[code] = text.strip()
    return [(c, texts.get(c, "")) for c in codes]

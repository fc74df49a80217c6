"""The answer-format sentence that ends every choice prompt, per language.

One fixed, machine-checkable form per mode, so extraction can be strict. Part of
every choice dataset's prompt hash: editing a sentence here re-stamps them all.
"""

from __future__ import annotations

# (language, mode) -> sentence; mode is "<single|multi>-<letter|number|name>".
INSTRUCTIONS: dict[tuple[str, str], str] = {
    ("en", "single-letter"): "Answer with the letter of your choice only, in the form `Answer: X`.",
    ("en", "single-number"): "Answer with the number of your choice only, in the form `Answer: N`.",
    ("en", "single-name"): "Answer with the exact text of your choice only, in the form `Answer: text`.",
    ("en", "multi-letter"): "Answer with the letters of all options that apply, separated by commas, "
    "in the form `Answer: X, Y`.",
    ("en", "multi-number"): "Answer with the numbers of all options that apply, separated by commas, "
    "in the form `Answer: N, M`.",
    ("en", "multi-name"): "Answer with the names of all options that apply, exactly as listed and separated "
    "by commas, in the form `Answer: name, name`.",
    ("zh", "single-letter"): "请只回答所选选项的字母，格式为“答案：X”。",
    ("zh", "single-number"): "请只回答所选选项的编号，格式为“答案：N”。",
    ("zh", "single-name"): "请只回答所选选项的原文，格式为“答案：选项内容”。",
    ("zh", "multi-letter"): "请回答所有符合的选项字母，用逗号分隔，格式为“答案：X, Y”。",
    ("zh", "multi-number"): "请回答所有符合的选项编号，用逗号分隔，格式为“答案：N, M”。",
    ("zh", "multi-name"): "请按列表原文回答所有符合的选项名称，用逗号分隔，格式为“答案：名称, 名称”。",
}


def instruction(language: str, multi: bool, answer_with: str, numeric_codes: bool) -> str:
    kind = "name" if answer_with == "name" else ("number" if numeric_codes else "letter")
    key = (language, f"{'multi' if multi else 'single'}-{kind}")
    try:
        return INSTRUCTIONS[key]
    except KeyError:
        raise ValueError(f"no answer instruction for language {language!r}") from None


# Free-text answers (benchmark/adapters/freetext.py): (language, mode) -> sentence; mode is
# "span" (a short answer after a marker, read from its line) or "summary" (the whole reply).
TEXT_INSTRUCTIONS: dict[tuple[str, str], str] = {
    ("en", "span"): "Give only the answer itself, in the form `Answer: text`.",
    ("en", "summary"): "Write only the summary itself, without a title or any preamble.",
    ("zh", "span"): "请只给出答案本身，格式为“答案：……”。",
    ("zh", "summary"): "请只输出摘要正文，不要加标题或任何说明。",
}


def text_instruction(language: str, mode: str) -> str:
    try:
        return TEXT_INSTRUCTIONS[(language, mode)]
    except KeyError:
        raise ValueError(f"no free-text answer instruction for language {language!r}, mode {mode!r}") from None

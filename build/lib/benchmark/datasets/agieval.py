"""AGIEval v1: admission and qualification exam questions (Gaokao, SAT, LSAT, LogiQA, JEC-QA, AQuA-RAT).

Files: the original ``<data_dir>/agieval/v1/*.jsonl`` (ruixiangcui/AGIEval; the team
folder holds the first 100 lines of each file) when present, else the reference's
``moodbench/basic_ability/common_sense/AGIEval_jsonl/*.jsonl``, a different
version (up to 300 rows per file, jec-qa cut to single-answer questions), whose
item ids are therefore ``ref/<file>/<row>``. Item id: ``<file stem>/<row>``
(several files repeat a question, so ids cannot come from the text).

Pool: all 21 tasks: the 19 multiple-choice tasks, sat-math included (the
reference drops it by a substring accident), and the two cloze tasks (``math``,
``gaokao-mathcloze``: no options, a free-form answer; the reference leaves them out).

Each item is asked in its task's language (AGIEval's own split: the gaokao
tasks except gaokao-english, logiqa-zh and jec-qa in Chinese, the rest in
English). The options' own letters ("(A)", "A．", ...) are removed, so they are lettered once.

Several answers: AGIEval's multi-answer tasks (jec-qa-ca, jec-qa-kd,
gaokao-physics; gold a list of letters) and any item whose gold names several
letters ("ACD", "A B D", "AD", "CD": four gaokao-mathqa items of the reference copy) are asked to
"choose every correct option" and score 1 only when the chosen set equals the
gold set, as AGIEval scores them. Everything else is a single-answer question.
Metrics: accuracy over all items (primary), per language, and over the cloze
items (``accuracy_cloze``). Gold letters are spread over the choice items (single
answers A-D 19-21 % of them each, E 3 %; the most skewed
task cut, logiqa's first 100, has 40 % D): options keep their order, which
several questions refer to ("(E)None of these").

Cloze items (``math`` in English, ``gaokao-mathcloze`` in Chinese) are free text
(``Item.answer`` None; gold: the row's ``answer``), asked for ``Answer: <final
answer>`` / ``答案：<最终答案>`` (several blanks of a gaokao item separated by
";"), and score 1 when the answer read from the reply (the last ``\boxed{}``,
else the text after the answer marker; nothing readable: unparsed, prediction
None) equals the gold after the MATH dataset's normalisation, as AGIEval scores
them (benchmark/adapters/mathequiv.py: Hendrycks et al.'s ``is_equiv``, plus math-mode
``$`` removed from both sides).
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from benchmark.adapters import mathequiv
from benchmark.dataset import DatasetBase, Item, Message, MetricSpec, Scored, stable_hash
from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register
from benchmark.adapters.split import RowSplit

ENGLISH_TASKS = frozenset(
    {"aqua-rat", "lsat-ar", "lsat-lr", "lsat-rc", "logiqa-en", "sat-math", "sat-en", "sat-en-without-passage",
     "gaokao-english", "math"}
)  # fmt: skip
MULTI_ANSWER_TASKS = frozenset({"jec-qa-ca", "jec-qa-kd", "gaokao-physics"})
# An option's own letter: "(A)", "（A）", "A.", "A．", "A:", "A?", "A、" (AGIEval's usual "(A)" and
# the looser styles of some gaokao/logiqa items). The letter is not checked: a few items
# have typos ("(C)" on the fourth option); gold letters are by position.
_MARK = re.compile(r"^\s*(?:[(（]\s*[A-J]\s*[)）]|[A-J]\s*[.．:：?？、])\s*")
_LETTERS = "ABCDEFGHIJ"


def gold_letters(label: Any) -> list[int]:
    """Option indices of a gold label: "C", "ACD", "A B D" or ["A", "C"].

    Spaces and punctuation are ignored (one jec-qa-ca label is ["A", "C", "D", "。"]).
    """
    text = "".join(label) if isinstance(label, list) else str(label)
    idx = set()
    for c in text.upper():
        if c in _LETTERS:
            idx.add(_LETTERS.index(c))
        elif c.isalnum():
            raise ValueError(f"gold label {label!r} is not a set of option letters")
    if not idx:
        raise ValueError(f"empty gold label {label!r}")
    return sorted(idx)


def strip_markers(options: list[str]) -> list[str]:
    """Option texts without their own letter markers, so that they are lettered once.

    A bare letter and a space ("A No dangshen") counts as a marker only when every
    option of the item starts with its own letter so (else "A" may be an article).
    """
    if all(re.match(rf"\s*{_LETTERS[i]}\s+\S", o) for i, o in enumerate(options)):
        return [o.strip()[1:].strip() for o in options]
    out = []
    for o in options:
        m = _MARK.match(o)
        out.append(o[m.end():] if m and o[m.end():].strip() else o)
    return out


def is_multi(row: dict) -> bool:
    return row["_stem"] in MULTI_ANSWER_TASKS or len(gold_letters(row["label"])) > 1


def is_cloze(row: dict) -> bool:
    return not row.get("options")


def _keep(row: dict) -> bool:
    if is_cloze(row):
        return bool(str(row.get("answer") or "").strip())
    return row.get("label") not in (None, "", [])


def _lang(row: dict) -> str:
    return "en" if row["_stem"] in ENGLISH_TASKS else "zh"


def _context(row: dict) -> str:
    passage, question = (row.get("passage") or "").strip(), row["question"].strip()
    if _lang(row) == "en":
        return f"Passage: {passage}\n\nQuestion: {question}" if passage else f"Question: {question}"
    return f"材料：{passage}\n\n问题：{question}" if passage else f"问题：{question}"


def _derive(row: dict) -> dict:
    gold = gold_letters(row["label"])
    return {
        "_lang": _lang(row),
        "_context": _context(row),
        "_options": strip_markers(row["options"]),
        "_gold": gold[0],
        "_golds": ",".join(map(str, gold)),
    }


_COMMON: dict[str, Any] = {
    "id": "agieval",
    "language": "mixed",
    "files": (
        Files("original", "v1/*.jsonl", "jsonl"),
        Files("reference", "basic_ability/common_sense/AGIEval_jsonl/*.jsonl", "jsonl", item_id="ref/{_stem}/{_row}"),
    ),
    "item_id": "{_stem}/{_row}",
    "keep": _keep,
    "derive": _derive,
    "language_field": "_lang",
    "body": {"en": "{_context}", "zh": "{_context}"},
    "options_field": "_options",
    "meta_fields": lambda r: {"lang": r["_lang"]},
}
METRICS = (
    MetricSpec("accuracy", "mean", "score", primary=True),
    MetricSpec("accuracy_en", "mean", "en"),
    MetricSpec("accuracy_zh", "mean", "zh"),
)
# The cloze items only: their items alone carry the "cloze" measure (a mean skips the others).
CLOZE_METRICS = METRICS + (MetricSpec("accuracy_cloze", "mean", "cloze"),)


def _by_language(item: Item, s: Scored) -> Scored:
    """A choice item's score, also under its language; a several-answer item scores its exact match."""
    value = (s.measures or {}).get("em", 0.0) if item.meta.get("several") else s.score or 0.0  # a choice: 0 or 1
    return Scored(s.prediction, value, {item.meta["lang"]: value})


class MathCloze(DatasetBase, msgspec.Struct, frozen=True, kw_only=True):
    """The cloze part: a math question answered in free form, scored by MATH answer equivalence."""

    task: dict[str, str]
    instruction: dict[str, str]
    max_tokens: int

    @property
    def scorer_version(self) -> str:
        return f"mathequiv-{mathequiv.VERSION}"

    def prompt_hash(self) -> str:
        return stable_hash("math-cloze", self.task, self.instruction, self.max_tokens)

    def render(self, item_id: str, raw: dict) -> Item:
        lang = _lang(raw)
        content = "\n\n".join((self.task[lang], _context(raw), self.instruction[lang]))
        meta = {"lang": lang, "cloze": True}
        return Item(id=item_id, messages=(Message("user", content),), gold=str(raw["answer"]).strip(), meta=meta)

    def score(self, item: Item, response: str | None, *, finish_reason: str | None = None) -> Scored:
        pred = mathequiv.extract_answer(response)
        s = float(mathequiv.is_equiv(pred, item.gold))
        return Scored(pred, s, {item.meta["lang"]: s, "cloze": s})


SEVERAL = ChoiceDataset(
    **_COMMON,
    task={
        "en": "The following is an exam question with one or more correct answers. Choose all of them.",
        "zh": "以下是一道考试选择题，正确答案可能有一个或多个，请选出全部正确答案。",
    },
    gold_field="_golds",
    gold_map="ids",
    multi=True,
)
CHOICE = RowSplit(
    base=ChoiceDataset(
        **_COMMON,
        task={
            "en": "The following is an exam question. Choose the one correct answer.",
            "zh": "以下是一道考试选择题，请选出唯一正确的答案。",
        },
        gold_field="_gold",
        gold_map="index",
    ),
    other=SEVERAL,
    is_other=is_multi,
    mark="several",
    rescore=_by_language,
    metrics=METRICS,
    max_tokens=SEVERAL.max_tokens,
    tags=("mixed", "mixed"),
)
CLOZE = MathCloze(
    task={
        "en": "The following is a math exam question; its answer is a number or an expression.",
        "zh": "以下是一道数学考试填空题。",
    },
    instruction={
        "en": "Give only the final answer, in LaTeX where needed, in the form `Answer: <final answer>`.",
        "zh": "请只给出最终答案（必要时使用 LaTeX），格式为“答案：<最终答案>”；若有多个空，按顺序用分号“;”分隔。",
    },
    max_tokens=128,
)
register(
    RowSplit(
        base=CHOICE,
        other=CLOZE,
        is_other=is_cloze,
        mark="cloze",
        metrics=CLOZE_METRICS,
        max_tokens=max(CHOICE.max_tokens, CLOZE.max_tokens),
        tags=("with-cloze", "cloze"),
        # On the 2,100 items of the first 100 lines per file: uniform random answer (one
        # letter, or a random non-empty set for several-answer items; cloze items 0) 0.190;
        # always "D" (cloze items: their most frequent gold, "2") 0.217.
        chance_baseline=0.190,
        majority_baseline=0.217,
    )
)

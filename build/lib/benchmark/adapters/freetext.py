"""Free-text answers as data: one declaration per dataset, one generic adapter.

A dataset whose answer is written rather than chosen (an extractive span, a
short answer, a summary) is declared as a ``TextDataset``: where its files
are (with a ``rows`` hook for nested or paired formats), how an item id is
built, the prompt's task sentence and body template, where the reference
texts are, the answer mode and the scorer.

Prompt layout (one user message):

    <task>

    <body, formatted with the row's fields>

    <answer sentence, benchmark/adapters/prompts.py TEXT_INSTRUCTIONS>

Answer modes and their extraction (``extract_span`` / ``extract_summary``):

* ``span``: the model is asked for ``Answer: text`` / ``答案：……``. The answer
  is the rest of the first line that starts with a marker ("Answer:", "The
  answer is", "Final answer:", "答案：", "答案是"; when the marker ends its line,
  the next non-empty line), else the first non-empty line of the reply. Then
  surrounding quotes (" ' “” ‘’ 「」 『』 and backticks) and trailing
  sentence punctuation are stripped.
* ``summary``: the whole reply, less a leading "Summary:" / "摘要：" /
  "总结：" label and surrounding quotes.

Both drop a ``<think>...</think>`` block and markdown bold marks first. An
empty answer is unparsed: prediction ``None``, every metric 0.

Item ``gold`` is the list of reference texts (gold aliases or references);
scorers take the best match over them where the official metric does.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Iterator

import msgspec

from benchmark.dataset import (
    DatasetBase,
    Derived,
    Item,
    Message,
    MetricSpec,
    Scored,
    stable_hash,
)
from benchmark.adapters.judges import Rubric
from benchmark.loaders import Files, locate, read_rows
from benchmark.adapters.prompts import text_instruction
from benchmark.metrics.text import best, cmrc_em, cmrc_f1, rouge, squad_em, squad_f1

# Bump when render() changes the text it produces for unchanged declarations.
RENDER_VERSION = "1"
# Bump when extraction or the generic scoring changes.
SCORING_VERSION = "1"

RowsHook = Callable[[Files, Path], Iterator[tuple[int, dict]]]
ScoreFn = Callable[["str | None", list, dict], "tuple[float, dict[str, float]]"]

# ---------------------------------------------------------------- extraction

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_SPAN_MARKER = re.compile(
    r"^\s*(?:(?:the\s+)?(?:final\s+)?answer(?:\s+is\b\s*[:：]?|\s*[:：])|答案\s*(?:是|为|為)?\s*[:：]|答案(?:是|为|為))\s*",
    re.I,
)
_SUMMARY_LABEL = re.compile(r"^\s*(?:summary|摘要|总结|總結|概要)\s*[:：]\s*", re.I)
_QUOTES = (('"', '"'), ("'", "'"), ("“", "”"), ("‘", "’"), ("「", "」"), ("『", "』"), ("`", "`"))
_TRAILING = " \t。.!！?？,，;；:：、"


def _clean(response: str | None) -> str:
    if not response:
        return ""
    text = response.replace("**", "").replace("\u200b", "").replace("\ufeff", "")
    if "<think>" in text.lower():
        text = _THINK.sub("", text)
    return text.strip()


def _unquote(text: str) -> str:
    text = text.strip()
    changed = True
    while changed and len(text) >= 2:
        changed = False
        for left, right in _QUOTES:
            if text.startswith(left) and text.endswith(right):
                text, changed = text[len(left) : -len(right)].strip(), True
    return text


def extract_span(response: str | None) -> str | None:
    """The short answer a reply gives (see the module docstring), or None."""
    lines = [line.strip() for line in _clean(response).split("\n")]
    lines = [line for line in lines if line]
    if not lines:
        return None
    answer = lines[0]
    for i, line in enumerate(lines):
        m = _SPAN_MARKER.match(line)
        if m:
            answer = line[m.end() :].strip() or (lines[i + 1] if i + 1 < len(lines) else "")
            break
    answer = _unquote(_unquote(answer).rstrip(_TRAILING))
    return answer or None


def extract_summary(response: str | None) -> str | None:
    """The summary a reply gives: the whole reply less a leading label; None when empty."""
    text = _clean(response)
    text = _unquote(_SUMMARY_LABEL.sub("", text, count=1))
    return text or None


# ---------------------------------------------------------------- scorers


class TextScorer(msgspec.Struct, frozen=True):
    """How one prediction is scored against an item's references, and the metrics it feeds."""

    name: str
    fn: ScoreFn  # (prediction or None, references, item meta) -> (item score, measures)
    metrics: tuple[MetricSpec, ...]
    version: str = "1"


def _squad(pred: str | None, golds: list, meta: dict) -> tuple[float, dict[str, float]]:
    return best(squad_f1, pred, golds), {"em": best(squad_em, pred, golds)}


def _cmrc(pred: str | None, golds: list, meta: dict) -> tuple[float, dict[str, float]]:
    r1 = max((rouge(pred, g)["rouge1"] for g in golds), default=0.0)
    return best(cmrc_f1, pred, golds), {"em": best(cmrc_em, pred, golds), "rouge1": r1}


def _rouge(pred: str | None, golds: list, meta: dict) -> tuple[float, dict[str, float]]:
    scores = [rouge(pred, g) for g in golds]
    top = {k: max(s[k] for s in scores) for k in ("rouge1", "rouge2", "rougeL")}
    return top["rouge1"], {"rouge2": top["rouge2"], "rougeL": top["rougeL"]}


# SQuAD-style answers (English): token F1 primary, exact match; best over gold aliases.
SQUAD = TextScorer(
    "squad", _squad, (MetricSpec("f1", "mean", "score", primary=True), MetricSpec("exact_match", "mean", "em"))
)
# CMRC 2018 (Chinese spans): official F1 primary, EM, and char ROUGE-1 F (the reference's metric, jieba-free).
CMRC = TextScorer(
    "cmrc",
    _cmrc,
    (
        MetricSpec("f1", "mean", "score", primary=True),
        MetricSpec("exact_match", "mean", "em"),
        MetricSpec("rouge1_f", "mean", "rouge1"),
    ),
)
# Summaries: ROUGE-1 F primary (the reference's score), ROUGE-2 F, ROUGE-L F.
ROUGE = TextScorer(
    "rouge",
    _rouge,
    (
        MetricSpec("rouge1_f", "mean", "score", primary=True),
        MetricSpec("rouge2_f", "mean", "rouge2"),
        MetricSpec("rougeL_f", "mean", "rougeL"),
    ),
)


# ---------------------------------------------------------------- the declaration


class TextDataset(DatasetBase, msgspec.Struct, frozen=True, kw_only=True):
    """A dataset answered in free text, declared as data."""

    id: str
    language: str  # "en" | "zh": picks the answer sentence
    files: tuple[Files, ...]  # where the data may be, most preferred first
    item_id: str  # template over a row; also `_stem` (file stem) and `_row` (row number from the reader)
    task: str  # first paragraph of the prompt
    body: str  # template over the row (str.format_map), after `derive`
    gold: str | Callable[[dict], Any]  # field, or row -> reference text(s): a string, a number or a list
    scorer: TextScorer
    answer: str = "span"  # "span" | "summary": extraction and answer sentence
    rows: RowsHook | None = None  # (files, path) -> (row number, row); default loaders.read_rows
    derive: Callable[[dict], dict] | None = None  # row -> extra fields for the body, at render time
    meta_fields: Callable[[dict], dict] | None = None  # row -> item.meta (for the scorer)
    skip_repeats: bool = False  # an id met again (one record in two files) is skipped if its gold agrees
    max_tokens: int = 64  # generation hint
    revision: int = 1  # bump when a hook changes what is shown or scored
    chance_baseline: float | None = None
    majority_baseline: float | None = None
    samples: int = 1
    rubric: Rubric | None = None  # a judge's grading of the answers (benchmark/adapters/judges.py); not in the stamps

    def __post_init__(self) -> None:
        if self.answer not in ("span", "summary"):
            raise ValueError(f"{self.id}: answer must be 'span' or 'summary'")

    @property
    def derived(self) -> TextDerived:
        return _DERIVED.of(self)

    @property
    def metrics(self) -> tuple[MetricSpec, ...]:
        return self.scorer.metrics

    @property
    def scorer_version(self) -> str:
        return self.derived.scorer_version

    # ------------------------------------------------------------ Dataset protocol

    def prompt_hash(self) -> str:
        return self.derived.prompt_hash

    def records(self, data_dir: Path) -> Iterator[tuple[str, Any]]:
        where, _, paths = locate(self.files, Path(data_dir), self.id)
        reader = self.rows or read_rows
        seen: dict[str, list[str]] = {}
        for path in paths:
            for n, row in reader(where, path):
                row["_stem"], row["_row"] = path.stem, n
                try:
                    item_id = self.item_id.format_map(row)
                except (KeyError, IndexError) as e:
                    raise ValueError(f"{path} row {n}: no field {e} to build the item id") from None
                if self.skip_repeats:
                    golds = self._golds(item_id, row)
                    if item_id in seen:
                        if seen[item_id] != golds:
                            raise ValueError(f"{path} row {n}: item {item_id} repeats with a different reference")
                        continue
                    seen[item_id] = golds
                yield item_id, row

    def render(self, item_id: str, raw: Any) -> Item:
        if self.derive is not None:
            raw = {**raw, **self.derive(raw)}
        golds = self._golds(item_id, raw)
        try:
            body = self.body.format_map(raw)
        except (KeyError, IndexError) as e:
            raise ValueError(f"{self.id} item {item_id}: no field {e} for the prompt body") from None
        content = "\n\n".join((self.task, body, self.derived.instruction))
        meta = dict(self.meta_fields(raw)) if self.meta_fields else {}
        return Item(id=item_id, messages=(Message("user", content),), gold=golds, meta=meta)

    def score(self, item: Item, response: str | None, *, finish_reason: str | None = None) -> Scored:
        pred = extract_span(response) if self.answer == "span" else extract_summary(response)
        value, measures = self.scorer.fn(pred, list(item.gold), item.meta)
        return Scored(prediction=pred, score=value, measures=measures)

    # ------------------------------------------------------------ helpers

    def _golds(self, item_id: str, raw: dict) -> list[str]:
        if callable(self.gold):
            v = self.gold(raw)
        elif self.gold in raw:
            v = raw[self.gold]
        else:
            raise ValueError(f"{self.id} item {item_id}: no gold field {self.gold!r}")
        values = v if isinstance(v, (list, tuple)) else [v]
        golds = []
        for x in values:
            text = str(x).strip() if x is not None else ""
            if text and text not in golds:
                golds.append(text)
        if not golds:
            raise ValueError(f"{self.id} item {item_id}: no reference text")
        return golds


# ---------------------------------------------------------------- readers (rows hooks)


def squad_rows(files: Files, path: Path) -> Iterator[tuple[int, dict]]:
    """Rows of a SQuAD-style file, one per question: id, context, question, answers (texts).

    Format "squad": the nested ``{"data": [{"paragraphs": [{"context", "qas": [...]}]}]}``
    JSON of SQuAD v1.1 / CMRC 2018. Any other format is read by ``loaders.read_rows``
    and its ``answers`` field (a list of {text} objects, or HF's {"text": [...]} struct)
    is turned into a list of texts.
    """
    if files.format != "squad":
        for n, row in read_rows(files, path):
            row["answers"] = answer_texts(row.get("answers"))
            yield n, row
        return
    import orjson

    try:
        doc = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        raise ValueError(f"{path}: expected a SQuAD-style object with a 'data' list")
    n = 0
    for article in doc["data"]:
        for para in article.get("paragraphs", ()):
            for qa in para.get("qas", ()):
                if "id" not in qa or "question" not in qa:
                    raise ValueError(f"{path}: question {n} has no id or question")
                yield n, {"id": qa["id"], "title": article.get("title", ""), "context": para["context"],
                          "question": qa["question"], "answers": answer_texts(qa.get("answers"))}
                n += 1


def answer_texts(answers: Any) -> list[str]:
    """Answer texts from SQuAD's [{text, answer_start}] list or HF's {text: [...], answer_start: [...]}."""
    if isinstance(answers, dict):
        answers = answers.get("text") or []
    out = []
    for a in answers or ():
        t = a.get("text") if isinstance(a, dict) else a
        if t is not None:
            out.append(str(t))
    return out


class TextDerived(msgspec.Struct, frozen=True):
    """What a `TextDataset` declaration implies, computed once; the one place its stamps are made."""

    instruction: str
    prompt_hash: str
    scorer_version: str


def _derive(d: TextDataset) -> TextDerived:
    instr = text_instruction(d.language, d.answer)
    prompt_hash = stable_hash("text", RENDER_VERSION, d.language, d.task, d.body, d.answer, d.max_tokens, instr,
                              d.revision)
    scoring = stable_hash(d.scorer.name, d.scorer.version, d.scorer.metrics, d.answer, length=6)
    return TextDerived(instr, prompt_hash, f"text-{SCORING_VERSION}.r{d.revision}.{scoring}")


_DERIVED: Derived[TextDataset, TextDerived] = Derived(_derive)

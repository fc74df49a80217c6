"""`python -m engine extract FILE.jsonl`: the engine's answer extractor on anyone's outputs.

The contract (docs/extraction.md), stable: one JSON object a line in,

    {"id": ..., "response": "...", "options": {"A": "text", ...}, "multi_label": false, "finish_reason": "stop"}

(`multi_label` and `finish_reason` optional, other keys ignored), one a line out on stdout, in input order:

    {"id": ..., "answer": "C" | ["B", "D"] | null, "by": "rules" | "model"}

`by` says which reader decided the line: the rules of benchmark/extract/choice.py, or
the [extractor] model of `--extractor MODELS.toml`, asked only about the lines
the rules left unread. A bad line: exit 2, naming it; nothing is written.

Lines end at "\n" only (a "\r" before it is dropped): U+2028, U+2029 and the other
characters `str.splitlines` breaks at are valid raw inside a JSON string. A UTF-8 byte
order mark is accepted at the start of the file.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import msgspec

from benchmark.extract.choice import Choices, extract_multi, extract_single
from engine.config.load import load_models
from engine.config.models import ModelConfig, ModelsFile
from benchmark.errors import UserError
from engine.lanes.extract_model import Extractor, Reading, wants_model
from engine.errors import EXIT_UNREACHABLE
from engine.run.endpoints import build_breakers, build_limits
from providers.breaker import Breaker
from providers.errors import Unreachable


PROGRESS_EVERY = 25  # extractor answers between progress lines on stderr


class Line(msgspec.Struct, kw_only=True):
    id: Any
    response: str | None
    choices: Choices
    texts: list[str]
    multi: bool
    finish_reason: str | None
    answer: Any = None  # code, sorted list of codes, or None
    by: str = "rules"

    @property
    def options(self) -> list[tuple[str, str]]:
        return list(zip(self.choices.codes, self.texts))


def parse_line(text: str, where: str) -> Line:
    """One input line, validated; UserError naming ``where`` otherwise."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise UserError(f"{where}: not JSON ({e})") from None
    except RecursionError:  # the parser recurses per level of nesting
        raise UserError(f"{where}: nested too deeply") from None
    if not isinstance(doc, dict):
        raise UserError(f"{where}: not a JSON object")
    if not isinstance(doc.get("id"), (str, int)) or isinstance(doc.get("id"), bool):
        raise UserError(f"{where}: `id` must be a string or an integer")
    response, options = doc.get("response"), doc.get("options")
    if response is not None and not isinstance(response, str):
        raise UserError(f"{where}: `response` must be a string or null")
    if not isinstance(options, dict) or len(options) < 2 or not all(isinstance(v, str) for v in options.values()):
        raise UserError(f"{where}: `options` must be an object of at least two code -> text strings")
    for key, value in (("id", doc["id"]), ("response", response), *(("options", v) for v in options.values())):
        if isinstance(value, str) and not _is_unicode(value):
            # JSON allows the escape of a lone surrogate ("\ud800"); UTF-8 (the output, a request) does not.
            raise UserError(f"{where}: `{key}` is not valid Unicode (a lone surrogate escape)")
    choices = Choices(list(options.values()))
    if list(options) != list(choices.codes):
        raise UserError(f"{where}: option codes {list(options)} must be {list(choices.codes)}, in that order")
    multi, finish = doc.get("multi_label", False), doc.get("finish_reason")
    if not isinstance(multi, bool):
        raise UserError(f"{where}: `multi_label` must be true or false")
    if finish is not None and not isinstance(finish, str):
        raise UserError(f"{where}: `finish_reason` must be a string or null")
    return Line(id=doc["id"], response=response, choices=choices, texts=list(options.values()), multi=multi,
                finish_reason=finish)


def read_lines(path: str) -> list[Line]:
    name = "stdin" if path == "-" else path
    try:
        raw = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as e:
        raise UserError(f"cannot read {name}: {e.strerror}") from None
    try:
        text = raw.decode("utf-8-sig")  # a byte order mark at the start is dropped
    except UnicodeDecodeError as e:
        raise UserError(f"{name}: not UTF-8 ({e})") from None
    return [parse_line(t, f"{name} line {n}") for n, t in enumerate(text.split("\n"), 1) if t.strip()]


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def by_rules(line: Line) -> Any:
    ch, fr = line.choices, line.finish_reason
    if line.multi:
        got = extract_multi(line.response, ch, finish_reason=fr)
        return None if got is None else [ch.codes[i] for i in sorted(got)]
    i = extract_single(line.response, ch, finish_reason=fr)
    return None if i is None else ch.codes[i]


def answer_of(reading: Reading, multi: bool) -> Any:
    if reading.status != "ok":
        return None
    return list(reading.codes) if multi else reading.codes[0]


async def by_model(lines: list[Line], cfg: ModelConfig) -> tuple[list[Reading | None], Breaker]:
    """Ask the extractor about each line, ``max_concurrency`` at a time; readings in input order.

    The endpoint's breaker is a sweep's (engine/run/endpoints.py): once it gives up, the lines not yet
    asked stay None (unread, for a later run) instead of each costing its retries."""
    limits = build_limits(ModelsFile(models=[], extractor=cfg))[cfg.name]  # as a sweep builds them
    breaker = build_breakers([cfg])[cfg.name]
    ex = Extractor(cfg, limits, breaker)
    out: list[Reading | None] = [None] * len(lines)
    todo = iter(range(len(lines)))
    done = 0

    async def worker() -> None:
        nonlocal done
        for i in todo:  # workers share one iterator; `next` never awaits
            try:
                out[i] = await ex.read(lines[i].options, lines[i].response or "", lines[i].multi)
            except Unreachable:
                return  # the breaker gave up: every worker meets it on its next call
            done += 1
            if done % PROGRESS_EVERY == 0:
                print(f"extract: the extractor model has read {done}/{len(lines)}", file=sys.stderr, flush=True)

    try:
        async with anyio.create_task_group() as tg:
            for _ in range(cfg.concurrency):
                tg.start_soon(worker)
    finally:
        with anyio.CancelScope(shield=True):
            await ex.aclose()
    return out, breaker


def load_extractor(path: Path) -> ModelConfig:
    cfg = load_models(path, need_models=False)
    ex = cfg.extractor
    if ex is None:
        raise UserError(f"{path}: no [extractor] table")
    why = ex.missing_key()
    if why:
        raise UserError(f"{path}: extractor: {why}")
    if ex.provider == "local":
        raise UserError(f"{path}: extractor: provider 'local' is started by `sweep` only; "
                        "run the server yourself and use provider 'openai' with its base_url")
    return ex


class ExtractOptions(msgspec.Struct, frozen=True, kw_only=True):
    """`extract`'s options (engine/sweep/flags.py maps the flags onto them)."""

    file: str  # JSONL input, or - for stdin
    extractor: Path | None = None  # MODELS.toml whose [extractor] reads what the rules leave unread


def extract(opts: ExtractOptions) -> int:
    """Write one answer a line on stdout, in input order; a UserError naming a bad line."""
    extractor = load_extractor(opts.extractor) if opts.extractor else None
    lines = read_lines(opts.file)
    for line in lines:
        line.answer = by_rules(line)
    asked: list[Line] = []
    gone: Breaker | None = None
    unasked = 0
    if extractor is not None:
        asked = [ln for ln in lines if ln.answer is None and wants_model(ln.response, ln.finish_reason)]
        readings, breaker = anyio.run(by_model, asked, extractor)
        for line, reading in zip(asked, readings):
            if reading is not None:
                line.answer, line.by = answer_of(reading, line.multi), "model"
        statuses = Counter(r.status for r in readings if r is not None)
        print(f"extract: the extractor model's replies: {dict(statuses)} (error: the call failed, the line stays "
              "unread)", file=sys.stderr)
        if breaker.given_up:
            gone, unasked = breaker, sum(r is None for r in readings)
    out = sys.stdout
    for line in lines:
        out.write(json.dumps({"id": line.id, "answer": line.answer, "by": line.by}, ensure_ascii=False) + "\n")
    out.flush()
    n_model = sum(ln.answer is not None and ln.by == "model" for ln in lines)
    n_rules = sum(ln.answer is not None and ln.by == "rules" for ln in lines)
    print(f"extract: {len(lines)} lines: {n_rules} read by the rules"
          + (f", {n_model} by the extractor model ({len(asked)} asked)" if extractor is not None else "")
          + f", {len(lines) - n_rules - n_model} unread", file=sys.stderr)
    if gone is not None:
        print(f"extract: {gone.endpoint} was given up ({gone.reason}): {unasked} lines were not asked; "
              "run the same command again later", file=sys.stderr)
        return EXIT_UNREACHABLE
    return 0

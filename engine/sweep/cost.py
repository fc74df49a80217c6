"""`sweep --estimate`: items, tokens and cost per model, without calling anything.

Tokens in are estimated like the adapters do before a call (UTF-8 bytes / 3:
English runs ~4 bytes a token, Chinese ~3); tokens out are each model's
max_tokens, so the cost is an upper bound. Only items the database does not
already hold are counted: it is what running the same command would ask.
"""

from __future__ import annotations

import sys
from typing import TextIO

import msgspec

from engine.config import ModelConfig
from engine.run.generation import dataset_generation
from engine.lanes.work import PlannedDataset
from engine.sweep.plan import SweepOptions, plan_sweep
from providers.http import DEFAULT_MAX_OUTPUT
from store import resume
from store.db import connect


class Estimate(msgspec.Struct):
    model: str
    provider: str
    items: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None: no price in models.toml
    note: str = ""


def _item_tokens(planned: PlannedDataset) -> dict[str, int]:
    return {it.id: sum(len(m.content.encode()) for m in it.messages) // 3 for it in planned.items}


def estimate(opts: SweepOptions) -> list[Estimate]:
    plan = plan_sweep(opts, check_env=False)  # an estimate needs no key
    opts = plan.opts
    models = plan.cfg.models
    names = [m.name for m in models]
    done: dict[tuple[str, str], set[tuple[str, int]]] = {}
    db = opts.db
    assert db is not None, "plan_sweep fills in the database path"
    if db.exists():
        con = connect(db, read_only=True)
        try:
            counts = resume.done_counts(con, names, {p.id: p.ids for p in plan.planned})
            done = {(m, p.id): resume.done_keys(con, m, p.id)
                    for m in names for p in plan.planned if counts.get((m, p.id))}
        finally:
            con.close()
    tokens = {p.id: _item_tokens(p) for p in plan.planned}
    return [_estimate_model(m, plan.planned, tokens, done) for m in models]


def _estimate_model(m: ModelConfig, planned: list[PlannedDataset], tokens: dict[str, dict[str, int]],
                    done: dict[tuple[str, str], set[tuple[str, int]]]) -> Estimate:
    items = tok_in = tok_out = 0
    for p in planned:
        skip = done.get((m.name, p.id), set())
        out = dataset_generation(m, p.dataset).get("max_tokens") or DEFAULT_MAX_OUTPUT  # what is sent
        for it in p.items:
            for s in range(p.dataset.samples_of(it.id)):
                if (it.id, s) not in skip:
                    items += 1
                    tok_in += tokens[p.id][it.id]
                    tok_out += out
    # A batched model pays its provider's batch price (engine/config.py Price.batch).
    price = m.price.batch() if m.price is not None and m.batch else m.price
    cost = price.cost(tok_in, tok_out) if price is not None else None
    note = m.missing_key() or ("" if m.price is not None else "no price")
    if m.batch:
        note = ", ".join(x for x in (note, f"batch price (x{m.price.batch_factor:g})" if m.price else "batch") if x)
    return Estimate(m.name, m.provider, items, tok_in, tok_out, cost, note)


def print_estimate(rows: list[Estimate], out: TextIO = sys.stdout) -> None:
    head = ("model", "provider", "items", "tokens in (est.)", "tokens out (max)", "cost USD (max)", "note")
    body = [(r.model, r.provider, f"{r.items:,}", f"{r.input_tokens:,}", f"{r.output_tokens:,}",
             "-" if r.cost_usd is None else f"{r.cost_usd:,.4f}", r.note) for r in rows]
    priced = [r.cost_usd for r in rows if r.cost_usd is not None]
    body.append(("total", "", f"{sum(r.items for r in rows):,}", f"{sum(r.input_tokens for r in rows):,}",
                 f"{sum(r.output_tokens for r in rows):,}", f"{sum(priced):,.4f}" if priced else "-",
                 f"{len(rows) - len(priced)} model(s) without a price" if len(priced) < len(rows) else ""))
    widths = [max(len(row[i]) for row in (head, *body)) for i in range(len(head))]
    for n, row in enumerate((head, *body)):
        cells = [c.ljust(w) if i in (0, 1, 6) else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        print("  ".join(cells).rstrip(), file=out)
        if n == 0 or n == len(body) - 1:
            print("  ".join("-" * w for w in widths), file=out)
    print("nothing was called: input tokens are estimated from the prompts (UTF-8 bytes / 3), output at each "
          "model's max_tokens, so costs are upper bounds", file=out)

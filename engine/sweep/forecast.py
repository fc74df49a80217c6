"""`sweep --estimate`: a forecast of the items, tokens and cost per model, without calling anything.

Tokens in are estimated like the adapters do before a call (UTF-8 bytes / 3:
English runs ~4 bytes a token, Chinese ~3); tokens out are each model's
max_tokens, so the cost is an upper bound. Only items the database does not
already hold are counted: it is what running the same command would ask.

The helpers get a row each, at their own price: the [judge] one call per judged
answer (the answers this run makes and the stored ones without a verdict), its
prompt with the answer at the model's max_tokens; the [extractor] at most one
call per choice answer (only those the rules leave unread are asked, which is
not known in advance), so its row is an upper bound on calls too.

An interactive dataset's episode is many calls (engine/sweep/episode_forecast.py): the model's row counts
its episodes as items and their companion calls' tokens, the [user_simulator] gets a row of its own, and a
judge reading a transcript is sent the whole dialogue.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

import duckdb
import msgspec

from benchmark.extract import prompt as extract_prompt
from benchmark.dataset import Item
from benchmark.adapters.judges import rubric_for
from benchmark.episodes.dataset import EpisodeDataset
from engine.config.models import ModelConfig, ModelsFile
from engine.lanes.extract_model import CUT_OFF
from engine.lanes.work import PlannedDataset
from engine.run.context import prompt_tokens
from engine.run.generation import dataset_generation
from engine.sweep.episode_forecast import EpisodeCalls, episode_calls, seeker_cap
from engine.sweep.plan import SweepOptions, plan_sweep
from providers.base import DEFAULT_MAX_OUTPUT
from store.side import extractions
from store.side import judgements
from store.results import resume
from store.db import connect


class Forecast(msgspec.Struct):
    model: str
    provider: str
    items: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None: no price in models.toml
    note: str = ""


def _item_tokens(planned: PlannedDataset) -> dict[str, int]:
    return {it.id: prompt_tokens(it.messages) for it in planned.items}


def forecast(opts: SweepOptions) -> list[Forecast]:
    plan = plan_sweep(opts, check_env=False)  # a forecast needs no key
    opts = plan.opts
    models = plan.cfg.models
    names = [m.name for m in models]
    done: dict[tuple[str, str], set[tuple[str, int]]] = {}
    backlog: dict[tuple[str, str], int] = {}  # (helper, dataset) -> stored answers waiting for it
    db = opts.db
    assert db is not None, "plan_sweep fills in the database path"
    if db.exists():
        con = connect(db, read_only=True)
        try:
            counts = resume.done_counts(con, names, {p.id: p.ids for p in plan.planned})
            done = {(m, p.id): resume.done_keys(con, m, p.id)
                    for m in names for p in plan.planned if counts.get((m, p.id))}
            backlog = _backlogs(con, plan.cfg, plan.planned)
        finally:
            con.close()
    tokens = {p.id: _item_tokens(p) for p in plan.planned}
    episodes = Episodes(plan.cfg, plan.planned)
    rows = [_forecast_model(m, plan.planned, tokens, done, episodes) for m in models]
    judge, extractor, sim = plan.cfg.judge, plan.cfg.extractor, plan.cfg.user_simulator
    if sim is not None and episodes.sim_out:
        rows.append(_forecast_simulator(sim, plan.cfg, plan.planned, done, episodes))
    if judge is not None:
        rows.append(_forecast_helper(judge, "judge", plan.cfg, plan.planned, done, backlog, _judge_call, episodes))
    if extractor is not None:
        rows.append(_forecast_helper(extractor, "extractor", plan.cfg, plan.planned, done, backlog, _extractor_call,
                                     episodes))
    return rows


class Episodes:
    """Each episode's calls at most (engine/sweep/episode_forecast.py), worked out once per model setting."""

    def __init__(self, cfg: ModelsFile, planned: list[PlannedDataset]):
        episodic = [p.dataset for p in planned if isinstance(p.dataset, EpisodeDataset)]
        sim = cfg.user_simulator
        # The simulator's reply cap, as engine/lanes/episode.py:start_episodes gives it (0: nothing interactive).
        self.sim_out = seeker_cap(max(episodic, key=lambda d: d.seeker_max_tokens),
                                  sim.max_tokens if sim else None) if episodic else 0
        self._cache: dict[tuple[str, str, str, int], EpisodeCalls] = {}

    def of(self, m: ModelConfig, p: PlannedDataset, item: Item) -> EpisodeCalls:
        out = dataset_generation(m, p.dataset).get("max_tokens") or DEFAULT_MAX_OUTPUT
        key = (p.id, item.id, m.memory, out)
        got = self._cache.get(key)
        if got is None:
            got = self._cache[key] = episode_calls(item, companion_out=out, seeker_out=self.sim_out, memory=m.memory)
        return got


def _forecast_simulator(sim: ModelConfig, cfg: ModelsFile, planned: list[PlannedDataset],
                        done: dict[tuple[str, str], set[tuple[str, int]]], episodes: Episodes) -> Forecast:
    """The [user_simulator]'s calls in every model's episodes this run plays (unfinished ones in full)."""
    calls = tok_in = tok_out = 0
    for p in planned:
        if not isinstance(p.dataset, EpisodeDataset):
            continue
        for m in cfg.models:
            skip = done.get((m.name, p.id), set())
            for it in p.items:
                n = sum(1 for s in range(p.dataset.samples_of(it.id)) if (it.id, s) not in skip)
                if n:
                    ec = episodes.of(m, p, it)
                    calls, tok_in, tok_out = (calls + n * ec.simulator_calls, tok_in + n * ec.simulator_in,
                                              tok_out + n * ec.simulator_out)
    price = sim.price
    cost = price.cost(tok_in, tok_out) if price is not None else None
    note = ", ".join(x for x in ("at most: every session to its turn cap",
                                 sim.missing_key() or ("" if price else "no price")) if x)
    return Forecast(f"user_simulator {sim.name}" if sim.name != "user_simulator" else "user_simulator",
                    sim.provider, calls, tok_in, tok_out, cost, note)


# A helper's one call about an answer to `item` of at most `answer_tokens`: (tokens in, tokens out), None: no call.
HelperCall = Callable[[ModelConfig, PlannedDataset, Item, int], "tuple[int, int] | None"]


def _judge_call(judge: ModelConfig, p: PlannedDataset, item: Item, answer_tokens: int) -> tuple[int, int] | None:
    rubric = rubric_for(p.id)
    if rubric is None:
        return None
    prompt = rubric.prompt(item, "", None)  # the answer is counted at its cap
    return (prompt_tokens(prompt.messages) if prompt else 0) + answer_tokens, judge.max_tokens or rubric.max_tokens


def _extractor_call(ex: ModelConfig, p: PlannedDataset, item: Item, answer_tokens: int) -> tuple[int, int] | None:
    options = extract_prompt.options_of(item)
    if options is None or item.answer is None:
        return None
    messages = extract_prompt.prompt(options, "", item.answer.multi)
    return prompt_tokens(messages) + answer_tokens, ex.max_tokens or extract_prompt.MAX_OUTPUT


def _forecast_helper(helper: ModelConfig, role: str, cfg: ModelsFile, planned: list[PlannedDataset],
                     done: dict[tuple[str, str], set[tuple[str, int]]], backlog: dict[tuple[str, str], int],
                     call: HelperCall, episodes: Episodes) -> Forecast:
    """The judge's or the extractor's calls about the answers this run makes and the stored ones waiting."""
    calls = tok_in = tok_out = 0
    for p in planned:
        per_item: list[tuple[int, int]] = []
        for m in cfg.models:
            answer = dataset_generation(m, p.dataset).get("max_tokens") or DEFAULT_MAX_OUTPUT
            skip = done.get((m.name, p.id), set())
            for it in p.items:
                # A judge reads an episode's whole transcript.
                size = episodes.of(m, p, it).dialogue if isinstance(p.dataset, EpisodeDataset) else answer
                asked = call(helper, p, it, size)
                if asked is None:
                    break  # not a dataset this helper reads
                per_item.append(asked)
                n = sum(1 for s in range(p.dataset.samples_of(it.id)) if (it.id, s) not in skip)
                calls, tok_in, tok_out = calls + n, tok_in + n * asked[0], tok_out + n * asked[1]
        waiting = backlog.get((role, p.id), 0)
        if waiting and per_item:  # stored answers: priced like an average answer of the dataset
            calls += waiting
            tok_in += waiting * sum(i for i, _ in per_item) // len(per_item)
            tok_out += waiting * sum(o for _, o in per_item) // len(per_item)
    price = helper.price.batch() if helper.price is not None and helper.batch else helper.price
    cost = price.cost(tok_in, tok_out) if price is not None else None
    what = ("one call per judged answer" if role == "judge"
            else "at most: only answers the rules leave unread are asked")
    note = ", ".join(x for x in (what, helper.missing_key() or ("" if helper.price else "no price"),
                                 "batch price" if helper.batch and helper.price else "") if x)
    return Forecast(f"{role} {helper.name}" if helper.name != role else role, helper.provider, calls, tok_in,
                    tok_out, cost, note)


def _backlogs(con: duckdb.DuckDBPyConnection, cfg: ModelsFile, planned: list[PlannedDataset]
              ) -> dict[tuple[str, str], int]:
    """(helper role, dataset) -> stored answers an earlier run left for the judge or the extractor."""
    names = [m.name for m in cfg.models]
    out: dict[tuple[str, str], int] = {}
    for p in planned:
        rubric = rubric_for(p.id)
        if cfg.judge is not None and rubric is not None:
            out["judge", p.id] = judgements.pending_count(con, cfg.judge.name, "", names, {p.id: rubric.version},
                                                          {p.id: p.ids})
        if cfg.extractor is not None:
            out["extractor", p.id] = extractions.pending_count(con, cfg.extractor.name, extract_prompt.VERSION, "",
                                                               names, {p.id: p.ids}, sorted(CUT_OFF))
    return out


def _forecast_model(m: ModelConfig, planned: list[PlannedDataset], tokens: dict[str, dict[str, int]],
                    done: dict[tuple[str, str], set[tuple[str, int]]], episodes: Episodes) -> Forecast:
    items = tok_in = tok_out = 0
    n_episodes = episode_calls = 0
    for p in planned:
        skip = done.get((m.name, p.id), set())
        out = dataset_generation(m, p.dataset).get("max_tokens") or DEFAULT_MAX_OUTPUT  # what is sent
        episodic = isinstance(p.dataset, EpisodeDataset)
        for it in p.items:
            for s in range(p.dataset.samples_of(it.id)):
                if (it.id, s) not in skip:
                    items += 1
                    if episodic:  # an episode: its companion calls, the dialogue growing
                        ec = episodes.of(m, p, it)
                        n_episodes, episode_calls = n_episodes + 1, episode_calls + ec.companion_calls
                        tok_in, tok_out = tok_in + ec.companion_in, tok_out + ec.companion_out
                        continue
                    tok_in += tokens[p.id][it.id]
                    tok_out += out
    # A batched model pays its provider's batch price (engine/config/models.py Price.batch).
    price = m.price.batch() if m.price is not None and m.batch else m.price
    cost = price.cost(tok_in, tok_out) if price is not None else None
    note = m.missing_key() or ("" if m.price is not None else "no price")
    if n_episodes:
        note = ", ".join(x for x in (note, f"{n_episodes:,} episode(s): up to {episode_calls:,} calls") if x)
    if m.batch:
        note = ", ".join(x for x in (note, f"batch price (x{m.price.batch_factor:g})" if m.price else "batch") if x)
    return Forecast(m.name, m.provider, items, tok_in, tok_out, cost, note)


def print_forecast(rows: list[Forecast], out: TextIO = sys.stdout) -> None:
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
          "model's max_tokens, so costs are upper bounds; a helper's items are its calls, an episode (an interactive "
          "item) is counted as played to its turn cap", file=out)

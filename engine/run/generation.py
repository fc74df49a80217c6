"""What a model is asked with, per dataset: models.toml's settings, else the dataset's max_tokens.

A dataset declares its output allowance (choice items a few tokens, free text
and summaries more; benchmark/adapters/mcq.py, benchmark/adapters/freetext.py). It applies when
models.toml sets no max_tokens, so a model without one never generates
thousands of tokens for a letter. Reasoning models (OpenAI's, whose hidden
reasoning counts against the cap) are left to models.toml, as before. The
settings used are part of the row's stamp (engine.lanes.work.run_stamp).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from benchmark.context import prompt_budget
from benchmark.dataset import Dataset
from engine.config.models import ModelConfig
from providers.base import Provider
from providers.reasoning import is_reasoning_model


def takes_dataset_default(m: ModelConfig) -> bool:
    if m.max_tokens is not None or "max_tokens" in m.extra_body:
        return False
    reasoning = m.reasoning if m.reasoning is not None else (m.provider == "openai" and is_reasoning_model(m.model))
    return not reasoning


def dataset_generation(m: ModelConfig, ds: Dataset) -> dict[str, Any]:
    """The generation parameters sent for this dataset's items."""
    gen = m.generation()
    if takes_dataset_default(m):
        gen["max_tokens"] = ds.max_tokens
    return gen


def request_stamp(m: ModelConfig, ds: Dataset) -> dict[str, Any]:
    """Everything about this dataset's requests that changes answers (ModelConfig.request_stamp, per dataset)."""
    gen = dataset_generation(m, ds)
    return {**gen, "answer_constraint": m.answer_constraint} if m.answer_constraint else gen


def prompt_budgets(m: ModelConfig, datasets: list[Dataset]) -> dict[str, int | None]:
    """Per dataset, the tokens a prompt may take: the context less the output this dataset is given."""
    return {ds.id: prompt_budget(m.context_tokens, dataset_generation(m, ds).get("max_tokens")) for ds in datasets}


class ProviderSet:
    """A model's providers: one per distinct generation settings among its datasets, sharing its limits."""

    def __init__(self, m: ModelConfig, datasets: list[Dataset], make: Callable[[dict[str, Any]], Provider]):
        self._made: dict[bytes, Provider] = {}
        self._by_dataset: dict[str, Provider] = {}
        for ds in datasets:
            gen = dataset_generation(m, ds)
            key = orjson.dumps(gen, option=orjson.OPT_SORT_KEYS)
            if key not in self._made:
                self._made[key] = make(gen)
            self._by_dataset[ds.id] = self._made[key]

    def for_dataset(self, dataset: str) -> Provider:
        return self._by_dataset[dataset]

    async def aclose(self) -> None:
        for p in self._made.values():
            await p.aclose()

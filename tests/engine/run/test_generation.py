"""Generation settings per dataset: models.toml's, else the dataset's max_tokens; one provider per setting."""

from __future__ import annotations

from benchmark import registry
from engine.config.models import ModelConfig
from engine.run.generation import ProviderSet, dataset_generation, prompt_budgets, request_stamp


def model(**kw) -> ModelConfig:
    return ModelConfig(name="m", provider="openai", model=kw.pop("model", "gpt-4o"),
                       base_url="http://127.0.0.1:9/v1", **kw)


def test_dataset_default_when_models_toml_says_nothing():
    sst2, samsum = registry.get("sst2"), registry.get("samsum")
    assert dataset_generation(model(), sst2) == {"temperature": 0.0, "max_tokens": sst2.max_tokens}
    assert dataset_generation(model(), samsum)["max_tokens"] == samsum.max_tokens > sst2.max_tokens


def test_models_toml_wins_and_reasoning_models_get_only_what_it_says():
    sst2 = registry.get("sst2")
    assert dataset_generation(model(max_tokens=500), sst2)["max_tokens"] == 500
    assert dataset_generation(model(extra_body={"max_tokens": 7}), sst2)["max_tokens"] == 7
    assert "max_tokens" not in dataset_generation(model(model="o3-mini"), sst2)
    assert "max_tokens" not in dataset_generation(model(reasoning=True), sst2)


def test_the_default_is_part_of_the_stamp():
    sst2 = registry.get("sst2")
    assert request_stamp(model(), sst2) == request_stamp(model(max_tokens=sst2.max_tokens), sst2)
    assert request_stamp(model(), sst2) != request_stamp(model(max_tokens=sst2.max_tokens + 1), sst2)


def test_one_provider_per_distinct_setting():
    made = []

    def make(gen):
        made.append(gen)
        return object()

    datasets = [registry.get(d) for d in ("sst2", "crows_pairs", "samsum")]  # 32, 32, 128
    ps = ProviderSet(model(), datasets, make)
    assert sorted(g["max_tokens"] for g in made) == [32, 128]
    assert ps.for_dataset("sst2") is ps.for_dataset("crows_pairs") is not ps.for_dataset("samsum")


def test_prompt_budget_leaves_room_for_each_datasets_output():
    sst2, vcsum = registry.get("sst2"), registry.get("vcsum")
    budgets = prompt_budgets(model(context_tokens=4096), [sst2, vcsum])
    assert budgets["sst2"] - budgets["vcsum"] == vcsum.max_tokens - sst2.max_tokens  # 512 - 32
    assert prompt_budgets(model(), [sst2]) == {"sst2": None}  # no context_tokens: unlimited

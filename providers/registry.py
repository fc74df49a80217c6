"""Build the adapter for a provider name. Limits are passed in: they belong to accounts."""

from __future__ import annotations

from typing import Any

from providers.base import Provider
from providers.limits import Limits
from providers.openai import OpenAIChat

PROVIDERS = ("openai",)


def make_provider(provider: str, *, base_url: str, model: str, api_key: str | None,
                  generation: dict[str, Any], limits: Limits, timeout_s: float,
                  max_retries: int, max_connections: int, backoff_base_s: float = 1.0) -> Provider:
    if provider == "openai":
        return OpenAIChat(base_url=base_url, model=model, api_key=api_key, generation=generation,
                          limits=limits, timeout_s=timeout_s, max_retries=max_retries,
                          max_connections=max_connections, backoff_base_s=backoff_base_s)
    raise ValueError(f"unknown provider {provider!r}")

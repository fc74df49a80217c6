"""What a models file must satisfy besides its types: names, providers, URLs, limits, generation values,
batch and cluster settings; each failure a UserError naming the file, the model and the key."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from urllib.parse import urlparse

from benchmark.errors import UserError
from benchmark.names import name_problem
from engine.config.models import Account, ModelConfig, ModelsFile
from providers.redact import too_short
from providers.registry import BATCHABLE, CONSTRAINABLE, DEFAULT_BASE_URLS, PROVIDERS, SERVED

# Validation runs before a local server exists; its URL shape is known.
LOCAL_PLACEHOLDER_URL = "http://127.0.0.1:0/v1"
MEMORY_MODES = ("context", "endpoint")

# The version segment an OpenAI-compatible base_url ends with: /v1 (OpenAI,
# DeepSeek, DashScope compatible-mode), /api/v3 (Ark), /api/paas/v4 (GLM), /v2 (Qianfan).
_VERSION_SEGMENT = re.compile(r"/v\d+[a-z0-9]*$")


def validate(path: Path, cfg: ModelsFile, check_env: bool) -> None:
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


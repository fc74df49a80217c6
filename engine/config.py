"""models.toml: typed, validated as a whole before the first call."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import msgspec

from engine.errors import UserError

PROVIDERS = ("openai",)
DEFAULT_BASE_URLS = {"openai": "https://api.openai.com/v1"}


class Account(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A provider account whose rate limits several models share."""

    rpm: float | None = None
    tpm: float | None = None


class ModelConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    name: str
    provider: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    account: str | None = None  # share the rpm/tpm of [accounts.NAME]
    max_concurrency: int = 16
    rpm: float | None = None  # this model's own limits (on top of its account's)
    tpm: float | None = None
    timeout_s: float = 120.0
    max_retries: int = 8
    backoff_s: float = 1.0  # first retry wait when the server gives no Retry-After; doubles after
    # Generation parameters; None means "not sent" (the API's default applies).
    temperature: float | None = 0.0
    max_tokens: int | None = None
    top_p: float | None = None
    seed: int | None = None
    stop: list[str] | None = None
    extra_body: dict[str, Any] = {}
    # Free description kept with the results: institution, open_source, params_b, family ...
    metadata: dict[str, Any] = {}

    def generation(self) -> dict[str, Any]:
        """The generation parameters actually sent, for the request and its stamp."""
        gen = {k: getattr(self, k) for k in ("temperature", "max_tokens", "top_p", "seed", "stop")}
        gen = {k: v for k, v in gen.items() if v is not None}
        gen.update(self.extra_body)
        return gen

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None


class ModelsFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    models: list[ModelConfig]
    accounts: dict[str, Account] = {}
    # CompactBench's own section (targets, compactors); typed and validated by engine.compactbench.
    compactbench: dict[str, Any] = {}


_MODEL_FIELDS = set(ModelConfig.__struct_fields__)


def _where(path: Path, doc: dict, msg: str) -> str:
    """Turn msgspec's `$.models[2].foo` into `models[2] (name 'x').foo`."""
    m = re.search(r"`\$\.models\[(\d+)\](\S*)`", msg)
    if not m:
        return f"{path}: {msg}"
    i = int(m.group(1))
    try:
        name = doc["models"][i].get("name", "?")
    except (KeyError, IndexError, AttributeError):
        name = "?"
    body = msg[: m.start()].removesuffix(" - at ").rstrip(" -")
    body = body.replace("Object contains unknown field", "unknown key").replace("Object missing required field", "missing key")
    return f"{path}: models[{i}] (name {name!r}){m.group(2)}: {body}"


def load_models(path: str | Path, *, check_env: bool = True) -> ModelsFile:
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
    raw_models = doc.get("models")
    if not isinstance(raw_models, list) or not raw_models:
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
    for i, m in enumerate(cfg.models):
        where = f"{path}: models[{i}] (name {m.name!r})"
        if not m.name.strip():
            raise UserError(f"{where}: `name` is empty")
        if m.name in seen:
            raise UserError(f"{where}: duplicate model name {m.name!r}: names are the key stored with results")
        seen.add(m.name)
        if m.provider not in PROVIDERS:
            raise UserError(f"{where}: unknown provider {m.provider!r} (known: {', '.join(PROVIDERS)})")
        url = m.base_url or DEFAULT_BASE_URLS.get(m.provider)
        parsed = urlparse(url or "")
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise UserError(f"{where}: base_url {url!r} is not an http(s) URL")
        if m.provider == "openai" and not parsed.path.rstrip("/").endswith("/v1"):
            raise UserError(f"{where}: base_url {url!r} must include the API version path, e.g. .../v1")
        if m.max_concurrency < 1:
            raise UserError(f"{where}: max_concurrency must be >= 1")
        for key in ("rpm", "tpm", "timeout_s", "backoff_s"):
            v = getattr(m, key)
            if v is not None and v <= 0:
                raise UserError(f"{where}: {key} must be > 0")
        if m.max_retries < 0:
            raise UserError(f"{where}: max_retries must be >= 0")
        if m.account is not None and m.account not in cfg.accounts:
            raise UserError(f"{where}: account {m.account!r} is not defined in [accounts]")
        if check_env and m.api_key_env and not os.environ.get(m.api_key_env):
            raise UserError(f"{where}: api_key_env: environment variable {m.api_key_env} is not set")
    for name, acc in cfg.accounts.items():
        for key in ("rpm", "tpm"):
            v = getattr(acc, key)
            if v is not None and v <= 0:
                raise UserError(f"{path}: accounts.{name}.{key} must be > 0")


def base_url(m: ModelConfig) -> str:
    return (m.base_url or DEFAULT_BASE_URLS[m.provider]).rstrip("/")

"""Reading a models file: TOML, [defaults] applied, converted into its records and checked."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import msgspec

from benchmark.errors import UserError
from engine.config.checks import validate
from engine.config.models import HELPER_ROLES, ModelConfig, ModelsFile


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
    validate(path, cfg, check_env)
    return cfg



"""Who answered: the identity stamped on every row (provider, endpoint, model id, request shape).

Two rows of one model name are comparable only if the same model, reached the
same way, answered them. The identity is hashed per (model, dataset) and the
hash is stored on each row; its detail goes to the `identities` table once.
A resume whose identity differs from the stored rows' stops before any call
(store.identity.identity_changes says what changed).
"""

from __future__ import annotations

import inspect
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import duckdb

from benchmark.dataset import Dataset, stable_hash
from engine.config import ModelConfig, ModelsFile, base_url, public_url
from benchmark.errors import UserError
from engine.sweep.local_server import DEFAULT_GGUF_NAME
from engine.run.progress import log
from store import identity as store

# Names shown in the "what changed" message, in this order.
FIELD_NAMES = {"provider": "provider", "base_url": "base URL", "model": "model id",
               "context_tokens": "context_tokens", "derivation": "derivation"}


# A server on this machine usually gets a free port each time it starts: its port is not identity.
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def endpoint(m: ModelConfig) -> str | None:
    """Where the model is reached; a local model is its weights file (its port changes every run)."""
    if m.provider == "local":
        return f"local:{m.gguf or DEFAULT_GGUF_NAME}"
    return without_loopback_port(public_url(base_url(m)))


def without_loopback_port(url: str | None) -> str | None:
    parts = urlsplit(url or "")
    if parts.hostname not in LOOPBACK or parts.port is None:
        return url
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def derivation(ds: Dataset) -> str | None:
    """A hash of the dataset's `derive` hook source: its wording reaches the prompt but not the template hash."""
    hook = ds.derive
    if hook is None:
        return None
    try:
        source = inspect.getsource(hook)
    except (OSError, TypeError):
        source = getattr(hook, "__qualname__", repr(hook))
    return stable_hash(source, length=12)


def model_identity(m: ModelConfig, ds: Dataset) -> dict[str, Any]:
    return {"provider": m.provider, "base_url": endpoint(m), "model": m.model,
            "context_tokens": m.context_tokens, "derivation": derivation(ds)}


def judge_identity(m: ModelConfig) -> dict[str, Any]:
    return {"provider": m.provider, "base_url": endpoint(m), "model": m.model}


def identity_hash(detail: dict[str, Any]) -> str:
    return stable_hash(sorted(detail.items()), length=12)


def describe_change(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """`model id a -> b` for each field that differs (fields missing from `old` are unknown, not changed)."""
    out = []
    for key, label in FIELD_NAMES.items():
        if key in old and old.get(key) != new.get(key):
            out.append(f"{label} {old.get(key) if old.get(key) is not None else 'unset'} -> "
                       f"{new.get(key) if new.get(key) is not None else 'unset'}")
    return out


def check_identities(con: duckdb.DuckDBPyConnection, cfg: ModelsFile, planned: list[Any], *,
                     allow_mixed: bool, fresh: bool = False, quiet: bool = False) -> dict[str, dict[str, str]]:
    """Each model's identity hash per dataset, recorded; UserError if stored rows were answered otherwise.

    Rows from before identity stamps (NULL) are compared with the `models` table's
    provider, base URL and model id, and adopted when those agree.
    """
    details = {m.name: {p.id: model_identity(m, p.dataset) for p in planned} for m in cfg.models}
    hashes = {name: {d: identity_hash(v) for d, v in per.items()} for name, per in details.items()}
    stored = store.stored_identities(con, {(n, d): h for n, per in hashes.items() for d, h in per.items()})
    changes, legacy = _model_changes(con, details, stored)
    # --fresh deletes these models' judgements too (engine/lanes/judge.py), after this check.
    if cfg.judge is not None and not cfg.judge.missing_key() and not fresh:
        what = _judge_change(con, cfg.judge)
        if what:
            changes[f"judge {cfg.judge.name}"] = what
    if changes:
        lines = [f"{'' if who.startswith('judge ') else 'model '}{who}: {', '.join(what)}"
                 for who, what in changes.items()]
        if not allow_mixed:
            more = f" (also changed: {', '.join(list(changes)[1:])})" if len(changes) > 1 else ""
            # --fresh redoes every model of the file on these datasets; a new name keeps the old rows apart.
            raise UserError(f"{lines[0]}; rerun with --fresh to ask again, or give it a new name "
                            f"(--allow-mixed keeps both){more}")
        log(f"--allow-mixed: keeping rows answered by another identity: {'; '.join(lines)}")
    for model, ds, _ in legacy:
        store.adopt(con, model, ds, hashes[model][ds])
    if legacy:
        log(f"note: {sum(n for _, _, n in legacy)} stored row(s) predate identity stamps; provider, base URL "
            f"and model id agree with the models table, so they are kept as "
            f"{', '.join(sorted({m for m, _, _ in legacy}))}'s", quiet=quiet)
    store.record(con, {h: details[n][d] for n, per in hashes.items() for d, h in per.items()})
    return hashes


def _model_changes(con: duckdb.DuckDBPyConnection, details: dict[str, dict[str, dict[str, Any]]],
                   stored: list[tuple[str, str, str | None, int]]
                   ) -> tuple[dict[str, list[str]], list[tuple[str, str, int]]]:
    """(what changed per model, [(model, dataset, rows)] of pre-identity rows that agree)."""
    changes: dict[str, list[str]] = {}
    legacy: list[tuple[str, str, int]] = []
    for model, ds, old_hash, n in stored:
        new = details[model][ds]
        if old_hash is not None:
            what = describe_change(store.detail_of(con, old_hash), new) or ["request shape changed"]
        else:
            old = store.legacy_detail(con, model)
            if old.get("base_url") is not None:
                old["base_url"] = without_loopback_port(public_url(old["base_url"]))
            if old.get("provider") == "local" or new["provider"] == "local":
                old.pop("base_url", None)  # a local server's port changes every run
            what = describe_change(old, new)
            if not what:
                legacy.append((model, ds, n))
        seen = changes.setdefault(model, [])
        seen += [w for w in what if w not in seen]
    return {m: w for m, w in changes.items() if w}, legacy


def _judge_change(con: duckdb.DuckDBPyConnection, judge: ModelConfig) -> list[str]:
    old = store.judge_detail(con, judge.name)
    if old is None:
        return []
    old["base_url"] = without_loopback_port(public_url(old["base_url"]))
    return describe_change(old, judge_identity(judge))

"""Who answered: the identity stamped on every row (provider, endpoint, model id, request shape).

Two rows of one model name are comparable only if the same model, reached the
same way, answered them. The identity is hashed per (model, dataset) and the
hash is stored on each row; its detail goes to the `identities` table once.
A resume whose identity differs from the stored rows' stops before any call
(store.results.identity.identity_changes says what changed).

A server on loopback gets a free port each time it starts, so its port is not
identity (IPv6 `[::1]` as much as `127.0.0.1`); what it has loaded is
(`served`: engine/run/local_server.py:served_model), so the same port-less URL
serving other weights after a restart stops the sweep. What a server does not
say is unknown, not a change: rows stored before `served` was recorded, or while
the server could not be asked, are kept and stamped with what it serves now.
"""

from __future__ import annotations

import inspect
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import duckdb

from benchmark.dataset import Dataset, stable_hash
from engine.config.models import ModelConfig, ModelsFile, base_url, public_url
from benchmark.errors import UserError
from engine.run.local_server import DEFAULT_GGUF_NAME, is_loopback
from engine.run.progress import log
from store.results import identity as store

# Names shown in the "what changed" message, in this order.
FIELD_NAMES = {"provider": "provider", "base_url": "base URL", "model": "model id", "served": "served model",
               "context_tokens": "context_tokens", "derivation": "derivation", "simulator": "user simulator",
               "memory": "memory"}
# Fields a detail may lack without a change: unknown then or now (compared only when both sides know them).
UNKNOWN_OK = ("served",)
# public_url before brackets were kept: "http://::1:8090/v1", as stored by earlier versions.
_BARE_IPV6_LOOPBACK = re.compile(r"^(\w+)://::1(?::\d+)?(/.*)?$")


def endpoint(m: ModelConfig) -> str | None:
    """Where the model is reached; a local model is its weights file (its port changes every run)."""
    if m.provider == "local":
        return f"local:{m.gguf or DEFAULT_GGUF_NAME}"
    return without_loopback_port(base_url(m))


def without_loopback_port(url: str | None) -> str | None:
    """The URL as stored (`public_url`: no credentials, query or fragment), without its port on loopback."""
    if url is None:
        return None
    bare = _BARE_IPV6_LOOPBACK.match(url)
    if bare:
        return f"{bare[1]}://[::1]{(bare[2] or '').rstrip('/')}"
    if not is_loopback(url):
        return public_url(url)
    parts = urlsplit(url)
    host = parts.hostname or ""
    return urlunsplit((parts.scheme, f"[{host}]" if ":" in host else host, parts.path.rstrip("/"), "", ""))


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


def model_identity(m: ModelConfig, ds: Dataset, served: str | None = None,
                   simulator: str | None = None) -> dict[str, Any]:
    """``served``: what the model's loopback server has loaded (None: not on loopback, or it does not say).
    ``simulator``: for an interactive dataset, who plays the seeker (``simulator_identity``)."""
    detail = {"provider": m.provider, "base_url": endpoint(m), "model": m.model,
              "context_tokens": m.context_tokens, "derivation": derivation(ds)}
    if served is not None:  # absent, not null: the hash of every other model stays what it was
        detail["served"] = served
    if is_interactive(ds):  # the other half of every exchange, and how the companion is sent its past
        detail["simulator"] = simulator
        detail["memory"] = m.memory
    return detail


def is_interactive(ds: Dataset) -> bool:
    from benchmark.episodes.dataset import EpisodeDataset

    return isinstance(ds, EpisodeDataset)


def simulator_identity(m: ModelConfig | None) -> str | None:
    """Who plays the seeker, in one string: provider, base URL, model id, its prompt template's version."""
    if m is None:
        return None
    from benchmark.episodes.seeker import SEEKER_PROMPT_VERSION

    return f"{m.provider} {endpoint(m)} {m.model} seeker-prompt {SEEKER_PROMPT_VERSION}"


def judge_identity(m: ModelConfig) -> dict[str, Any]:
    return {"provider": m.provider, "base_url": endpoint(m), "model": m.model}


def identity_hash(detail: dict[str, Any]) -> str:
    return stable_hash(sorted(detail.items()), length=12)


def describe_change(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """`model id a -> b` for each field that differs (fields missing from `old` are unknown, not changed;
    so is a field of UNKNOWN_OK missing from `new`)."""
    out = []
    for key, label in FIELD_NAMES.items():
        if key in UNKNOWN_OK and key not in new:
            continue
        if key in old and old.get(key) != new.get(key):
            out.append(f"{label} {old.get(key) if old.get(key) is not None else 'unset'} -> "
                       f"{new.get(key) if new.get(key) is not None else 'unset'}")
    return out


def check_identities(con: duckdb.DuckDBPyConnection, cfg: ModelsFile, planned: list[Any], *,
                     allow_mixed: bool, fresh: bool = False, quiet: bool = False,
                     served: dict[str, str | None] | None = None) -> dict[str, dict[str, str]]:
    """Each model's identity hash per dataset, recorded; UserError if stored rows were answered otherwise.

    ``served``: model name -> what its loopback server has loaded (local_server.served_models).
    Rows from before identity stamps (NULL) are compared with the `models` table's
    provider, base URL and model id, and adopted when those agree; rows whose detail
    differs only by what was not known then (or is not now) are kept, restamped.
    """
    served = served or {}
    sim = simulator_identity(cfg.user_simulator)
    details = {m.name: {p.id: model_identity(m, p.dataset, served.get(m.name), sim) for p in planned}
               for m in cfg.models}
    hashes = {name: {d: identity_hash(v) for d, v in per.items()} for name, per in details.items()}
    stored = store.stored_identities(con, {(n, d): h for n, per in hashes.items() for d, h in per.items()})
    changes, legacy, restamp = _model_changes(con, details, stored)
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
    for model, ds, old in restamp:
        store.adopt(con, model, ds, hashes[model][ds], old=old)
    for model in sorted({m for m, _, _ in restamp}):
        now = served.get(model)
        log(f"note: {model}: stored rows agree with what answers now as far as they say (not what its server had "
            f"loaded{'; it serves ' + now + ' now' if now else ''}): they are kept as its rows", quiet=quiet)
    store.record(con, {h: details[n][d] for n, per in hashes.items() for d, h in per.items()})
    return hashes


def _model_changes(con: duckdb.DuckDBPyConnection, details: dict[str, dict[str, dict[str, Any]]],
                   stored: list[tuple[str, str, str | None, int]]
                   ) -> tuple[dict[str, list[str]], list[tuple[str, str, int]], list[tuple[str, str, str]]]:
    """(what changed per model, [(model, dataset, rows)] of pre-identity rows that agree,
    [(model, dataset, stored hash)] of rows that agree but for what was unknown, to restamp)."""
    changes: dict[str, list[str]] = {}
    legacy: list[tuple[str, str, int]] = []
    restamp: list[tuple[str, str, str]] = []
    for model, ds, old_hash, n in stored:
        new = details[model][ds]
        if old_hash is not None:
            old = store.detail_of(con, old_hash)
            if old.get("base_url") is not None:  # as this version writes it (earlier ones kept an IPv6 port)
                old["base_url"] = without_loopback_port(old["base_url"])
            what = describe_change(old, new)
            if not what and _known(old) == _known(new):
                # The same but for what a server did not say, then or now: stamped with what is known now,
                # unless only the stored rows know it (the server cannot be asked now).
                if not any(k in old and k not in new for k in UNKNOWN_OK):
                    restamp.append((model, ds, old_hash))
                continue
            what = what or ["request shape changed"]
        else:
            old = store.legacy_detail(con, model)
            if old.get("base_url") is not None:
                old["base_url"] = without_loopback_port(old["base_url"])
            if old.get("provider") == "local" or new["provider"] == "local":
                old.pop("base_url", None)  # a local server's port changes every run
            what = describe_change(old, new)
            if not what:
                legacy.append((model, ds, n))
        seen = changes.setdefault(model, [])
        seen += [w for w in what if w not in seen]
    return {m: w for m, w in changes.items() if w}, legacy, restamp


def _known(detail: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in detail.items() if k not in UNKNOWN_OK}


def _judge_change(con: duckdb.DuckDBPyConnection, judge: ModelConfig) -> list[str]:
    old = store.judge_detail(con, judge.name)
    if old is None:
        return []
    old["base_url"] = without_loopback_port(old["base_url"])
    return describe_change(old, judge_identity(judge))

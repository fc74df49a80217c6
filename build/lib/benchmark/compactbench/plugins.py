"""Load a compactor class from `package.module:Class` or `path/to/file.py:Class`.

A class written for CompactBench itself (a subclass of its `Compactor`, built
as `Class(provider, model)`, with pydantic transcripts and artifacts) is
wrapped so that it runs unchanged: e.g. `compactbench.compactors:HybridLedgerCompactor`.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from benchmark.errors import UserError
from benchmark.compactbench.compactors import BUILT_INS, CompactorContext

if TYPE_CHECKING:  # the compactbench package is optional at run time (a test extra)
    from compactbench.compactors.base import Compactor


class PluginError(UserError):
    """The compactor spec cannot be loaded; the message says what to fix."""


def load_class(spec: str, *, base_dir: Path | None = None) -> type:
    """The class named by `spec`; a relative file path is resolved against `base_dir`."""
    target, sep, class_name = spec.rpartition(":")
    if not sep or not target or not class_name:
        raise PluginError(f"compactor {spec!r}: expected 'package.module:Class' or 'file.py:Class'")
    if target.endswith(".py"):
        module = _load_file(Path(target) if base_dir is None else base_dir / target, spec)
    else:
        try:
            module = importlib.import_module(target)
        except Exception as e:  # noqa: BLE001 - any import failure is the plugin's, reported in one line
            raise PluginError(f"compactor {spec!r}: cannot import {target}: {type(e).__name__}: {e}") from None
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        raise PluginError(f"compactor {spec!r}: {target} has no class {class_name!r}")
    if not inspect.iscoroutinefunction(getattr(cls, "compact", None)):
        raise PluginError(f"compactor {spec!r}: {class_name} has no `async def compact(self, transcript, "
                          "previous_artifact)`")
    return cls


def _load_file(path: Path, spec: str):
    if not path.is_file():
        raise PluginError(f"compactor {spec!r}: file not found: {path}")
    name = f"_compactbench_plugin_{path.stem}_{abs(hash(str(path.resolve()))):x}"
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise PluginError(f"compactor {spec!r}: cannot load {path}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001
        del sys.modules[name]
        raise PluginError(f"compactor {spec!r}: error importing {path}: {type(e).__name__}: {e}") from None
    return module


def instantiate(cls: type, ctx: CompactorContext) -> Any:
    """`cls(ctx)`, or `cls()` for a class whose constructor takes nothing."""
    if _is_compactbench_class(cls):
        return _CompactBenchAdapter(cls, ctx)
    params: Mapping[str, object]
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        params = {"ctx": None}
    return cls(ctx) if params else cls()


def resolve(kind: str | None, plugin: str | None, *, base_dir: Path | None = None) -> type:
    if plugin:
        return load_class(plugin, base_dir=base_dir)
    if kind not in BUILT_INS:
        raise PluginError(f"unknown compactor kind {kind!r} (built-in: {', '.join(BUILT_INS)})")
    return BUILT_INS[kind]


# --------------------------------------------------------------------------- CompactBench's own classes

def _is_compactbench_class(cls: type) -> TypeGuard[type[Compactor]]:
    base = sys.modules.get("compactbench.compactors.base")
    return base is not None and isinstance(cls, type) and issubclass(cls, base.Compactor)


class _CompactBenchAdapter:
    """Runs a CompactBench `Compactor` subclass: its provider calls go to `ctx.llm`."""

    def __init__(self, cls: type[Compactor], ctx: CompactorContext):
        from compactbench.providers import CompletionResponse, Provider

        llm = ctx.llm

        class EngineProvider(Provider):
            key = "engine"

            async def complete(self, request):
                prompt = f"{request.system}\n\n{request.prompt}" if request.system else request.prompt
                text = await llm.complete(prompt, json_object=bool(request.response_format))
                return CompletionResponse(text=text, prompt_tokens=0, completion_tokens=0, model=request.model)

        self.name, self.version = cls.name, cls.version
        self.inner = cls(EngineProvider(), llm.name if llm is not None else "")

    async def compact(self, transcript, previous_artifact):
        import msgspec
        from compactbench.contracts import CompactionArtifact as CbArtifact
        from compactbench.contracts import Transcript as CbTranscript

        from benchmark.compactbench.artifact import to_json

        prev = None
        if previous_artifact is not None:
            d = msgspec.json.decode(to_json(previous_artifact))
            prev = CbArtifact.model_validate({
                "schemaVersion": d["schema_version"], "summaryText": d["summary_text"],
                "structured_state": d["structured_state"], "selectedSourceTurnIds": d["selected_source_turn_ids"],
                "warnings": d["warnings"], "methodMetadata": d["method_metadata"]})
        turns = CbTranscript.model_validate({"turns": [
            {"id": t.id, "role": t.role, "content": t.content, "tags": list(t.tags)} for t in transcript.turns]})
        return await self.inner.compact(turns, previous_artifact=prev)

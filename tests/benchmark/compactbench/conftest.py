"""Shared fixtures: the CompactBench data folder and the reference package."""

from __future__ import annotations

import base64
import gzip
import importlib.util
import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SHARED = Path(os.environ.get("ENGINE_SHARED_DIR", ROOT.parent / "shared"))
CB_DIR = SHARED / "compactbench"
BENCHMARKS = CB_DIR / "benchmarks" / "public"


@pytest.fixture(scope="session")
def benchmarks() -> Path:
    if not BENCHMARKS.is_dir():
        pytest.skip(f"CompactBench templates not found at {BENCHMARKS} (set ENGINE_SHARED_DIR to the folder "
                    "holding compactbench/)")
    return BENCHMARKS


@pytest.fixture(scope="session")
def cb_data() -> Path:
    if not (CB_DIR / "generated_cases" / "manifest.json").is_file():
        pytest.skip(f"CompactBench generated cases not found under {CB_DIR}")
    return CB_DIR


def load_generated(cb_dir: Path) -> tuple[list[dict], dict[str, dict]]:
    manifest = json.loads((cb_dir / "generated_cases" / "manifest.json").read_text())
    cases = {}
    for f in (cb_dir / "generated_cases").glob("*.jsonl"):
        for line in f.read_text().splitlines():
            d = json.loads(line)
            cases[d["case_id"]] = d
    return manifest, cases


def _tiktoken_cl100k():
    """tiktoken's cl100k_base built from the file bpe-openai ships (tiktoken itself would download it)."""
    import tiktoken

    # Located without importing bpe_openai (its import builds every encoding it has).
    spec = importlib.util.find_spec("bpe_openai")
    data = Path(spec.submodule_search_locations[0]) / "data" / "cl100k_base.tiktoken.gz"
    ranks = {base64.b64decode(tok): int(rank) for tok, rank in
             (line.split() for line in gzip.decompress(data.read_bytes()).decode().splitlines() if line)}
    pat = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"""
           r"""\s*[\r\n]+|\s+(?!\S)|\s+""")
    special = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
               "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}
    return tiktoken.Encoding("cl100k_base", pat_str=pat, mergeable_ranks=ranks, special_tokens=special)


@pytest.fixture(scope="session")
def tiktoken_cl100k():
    pytest.importorskip("tiktoken", reason="tiktoken comes with the test extra (compactbench==0.1.0)")
    return _tiktoken_cl100k()


@pytest.fixture(scope="session")
def cb(tiktoken_cl100k):
    """CompactBench 0.1.0 itself (the `test` extra), its tokenizer fed offline."""
    cb = pytest.importorskip("compactbench", reason="install the test extra: pip install -e '.[test]'")
    if cb.__version__ != "0.1.0":
        pytest.skip(f"the reference is compactbench 0.1.0, found {cb.__version__}")
    from compactbench.scoring import compression

    compression._ENCODER_CACHE["cl100k_base"] = tiktoken_cl100k
    return cb

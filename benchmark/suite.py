"""Suites as data: a TOML file declares the hierarchy, weights and sampling.

Minimal loader for the sweep spine; the full FDAEF format extends it.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import msgspec

SUITES_DIR = Path(__file__).parent / "suites"


class SuiteError(Exception):
    pass


class Suite(msgspec.Struct, frozen=True):
    name: str
    version: str
    sample_size: int
    seed: int
    datasets: tuple[str, ...]  # every dataset id the suite uses, in file order


def resolve(name_or_path: str) -> Path:
    p = Path(name_or_path)
    if p.suffix == ".toml":
        if not p.is_file():
            raise SuiteError(f"suite file {p} does not exist")
        return p
    p = SUITES_DIR / f"{name_or_path}.toml"
    if not p.is_file():
        known = ", ".join(sorted(f.stem for f in SUITES_DIR.glob("*.toml")))
        raise SuiteError(f"unknown suite {name_or_path!r} (known: {known})")
    return p


def load_suite(name_or_path: str) -> Suite:
    path = resolve(name_or_path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise SuiteError(f"{path}: {e}") from None
    meta = doc.get("suite", {})
    ids: list[str] = []
    for ds in doc.get("datasets", []):
        if ds["id"] not in ids:
            ids.append(ds["id"])
    return Suite(
        name=meta.get("name", path.stem),
        version=str(meta.get("version", "0")),
        sample_size=int(meta.get("sample_size", 300)),
        seed=int(meta.get("seed", 20250826)),
        datasets=tuple(ids),
    )

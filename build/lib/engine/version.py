"""The engine's version, read once from the installed package's metadata (pyproject.toml's `version`)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    ENGINE_VERSION = version("moodengine")
except PackageNotFoundError:  # a checkout used without `pip install -e .`
    ENGINE_VERSION = "0+unknown"

"""`python -m engine ...`: the same entry as the `moodengine` console script (engine/cli.py)."""

from engine.cli import run

run()

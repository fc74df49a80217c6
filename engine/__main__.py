"""`python -m engine ...` and the `moodengine` console script: the start-up signal handlers, then the CLI."""

import sys

from engine.run import collector
from engine.run.signals import catch_start_up_signals


def main() -> None:
    # Installed before the imports that take most of start-up (engine/run/signals.py is stdlib only), so a
    # signal that lands during them also ends quietly with 130 instead of a traceback or a death by signal.
    catch_start_up_signals()
    if sys.argv[1:2] == ["sweep"]:  # no collection while it imports and plans (engine/run/collector.py)
        collector.hold()
    try:
        from engine.cli import run
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    run()


if __name__ == "__main__":
    main()

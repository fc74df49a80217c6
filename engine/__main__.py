import signal
import sys


def _stop(signum, frame):
    raise KeyboardInterrupt


# A signal during start-up (imports, planning) ends quietly with 130, like one during the run;
# the run loop installs its own handlers while it calls models (engine/interrupt.py).
signal.signal(signal.SIGTERM, _stop)
try:
    from engine.cli import main

    code = main()
except KeyboardInterrupt:
    print("interrupted", file=sys.stderr)
    code = 130
sys.exit(code)

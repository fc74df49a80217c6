"""SIGINT / SIGTERM before the run loop takes them over (engine/interrupt.py): stdlib only, so it is
installed first thing, before the imports that take most of start-up."""

from __future__ import annotations

import signal

_signalled = False


def _stop(signum: int, frame: object) -> None:
    global _signalled
    if _signalled:
        return  # one interruption is enough: a second would break the unwinding of the first
    _signalled = True
    raise KeyboardInterrupt


def catch_start_up_signals() -> None:
    """A signal raises KeyboardInterrupt once; `signalled()` remembers it even where it was swallowed."""
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)


def signalled() -> bool:
    return _signalled

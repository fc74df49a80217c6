"""SIGINT / SIGTERM before the run loop takes them over (engine/run/interrupt.py): stdlib only, so it is
installed first thing, before the imports that take most of start-up."""

from __future__ import annotations

import signal
from types import FrameType

_signalled = False


def _importing(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def _stop(signum: int, frame: FrameType | None) -> None:
    global _signalled
    if _signalled:
        return  # one interruption is enough: a second would break the unwinding of the first
    _signalled = True
    # Raised in the middle of an import, KeyboardInterrupt can leave a C extension half set up (seen
    # under load: a segfault, or a death by SIGINT at exit after the clean message). There it is only
    # remembered, and acted on at the next safe point: the run loop's Interrupt.watch stops at once.
    if _importing(frame):
        return
    raise KeyboardInterrupt


def catch_start_up_signals() -> None:
    """A signal raises KeyboardInterrupt once; `signalled()` remembers it even where it was swallowed."""
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)


def signalled() -> bool:
    return _signalled

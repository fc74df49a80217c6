"""SIGINT / SIGTERM before the run loop takes them over (engine/run/interrupt.py): stdlib only, so it is
installed first thing, before the imports that take most of start-up."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
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


def _remember(signum: int, frame: FrameType | None) -> None:
    global _signalled
    _signalled = True


@contextlib.contextmanager
def signals_remembered() -> Iterator[None]:
    """Inside the block SIGINT / SIGTERM only set `signalled()`, for a loop that looks between its steps
    (engine/cluster's driver): raised in the middle of a DuckDB statement, KeyboardInterrupt becomes an
    error ('Query interrupted'), and the run would end `failed` with its units still running."""
    if threading.current_thread() is not threading.main_thread():  # handlers belong to the main thread
        yield
        return
    previous = {s: signal.signal(s, _remember) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)

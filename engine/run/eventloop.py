"""The calling phase's event loop: uvloop where it is installed, and a garbage collector tuned for it."""

from __future__ import annotations

import gc
import importlib.util
import signal
import threading
from typing import Any, Awaitable, Callable, TypeVar

import anyio

from engine.run import collector

T = TypeVar("T")

# uvloop (a dependency except on Windows) runs the loop, its timers and its sockets in C. With
# a few hundred requests in flight the client loop is CPU-bound, and that cuts every request's
# share of it. Where it is missing the stock asyncio loop runs the same code.
HAVE_UVLOOP = importlib.util.find_spec("uvloop") is not None

# A request allocates a few hundred short-lived container objects (aiohttp's request and
# response, the row). At CPython's default gen-0 threshold (700) the collector ran every few
# requests, and every tenth pass rescanned all the requests in flight: a quarter of the
# zero-latency benchmark's time. Collecting after this many allocations still frees every
# cycle, in fewer and larger passes; the older generations' ratios are left as they are.
GEN0_ALLOCATIONS = 10_000


def run(fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """``anyio.run(fn, *args)`` with the settings above, restored afterwards."""
    collector.release()  # a sweep's start-up is over: what it built is frozen, collection resumes
    before = gc.get_threshold()
    if 0 < before[0] < GEN0_ALLOCATIONS:  # 0 means the caller turned collection off: left so
        gc.set_threshold(GEN0_ALLOCATIONS, *before[1:])
    # A signal receiver (engine/run/interrupt.py) leaves SIGTERM at SIG_DFL and SIGINT at Python's default
    # when it closes (the loop's remove_signal_handler): a SIGTERM during the end-of-run work that follows
    # killed the process (-15) instead of exiting 130. The handlers found here are put back.
    handlers = _signal_handlers()
    try:
        return anyio.run(fn, *args, backend_options={"use_uvloop": HAVE_UVLOOP})
    finally:
        gc.set_threshold(*before)
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def _signal_handlers() -> dict[signal.Signals, Any]:
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {s: h for s in (signal.SIGINT, signal.SIGTERM) if (h := signal.getsignal(s)) is not None}

"""The garbage collector while a sweep starts: off through its imports and planning, then what they built
frozen out of its reach (stdlib only: `python -m engine` holds it before its first import).

A sweep's start allocates hundreds of thousands of objects that all live to its end (modules, config, the
planned items) and almost no cyclic garbage: each collection in those seconds scanned them again for
nothing, ~0.09 s of `sweep --limit 1` on five datasets (bench/README.md, "The collector at start-up").
`gc.freeze()` then moves them to the permanent generation, so the calling phase's collections
(engine/run/eventloop.py) no longer scan them either.
"""

from __future__ import annotations

import gc
import threading

# A sweep's start-up that never reaches this process's calling phase (a cluster driver, one that stops
# before its calls) gets its collector back after this long all the same.
LONGEST_S = 5.0

_held = False
_lock = threading.Lock()


def hold(longest_s: float = LONGEST_S) -> None:
    """Collection off until `release` (or ``longest_s``); nothing if it is off already."""
    global _held
    with _lock:
        if not gc.isenabled():
            return
        gc.disable()
        _held = True
    timer = threading.Timer(longest_s, release)
    timer.daemon = True
    timer.start()


def release() -> None:
    """What was allocated while held goes to the permanent generation, and collection resumes (idempotent)."""
    global _held
    with _lock:
        if not _held:
            return
        _held = False
        gc.freeze()
        gc.enable()

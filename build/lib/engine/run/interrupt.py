"""Ctrl-C / SIGTERM during a run: stop dispatching, keep everything answered."""

from __future__ import annotations

import signal

import anyio

from engine.run.progress import log
from engine.run.signals import signalled


class Interrupt:
    """Run the work inside ``scope``; ``watch`` cancels it on SIGINT or SIGTERM.

    The caller's ``finally`` then flushes its writer, so a rerun resumes
    where this one stopped.
    """

    def __init__(self) -> None:
        self.scope = anyio.CancelScope()
        self.happened = False

    async def watch(self) -> None:
        if signalled():  # a start-up signal that some library swallowed: stop before asking anything
            self._stop()
            return
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                self._stop()
                return

    def _stop(self) -> None:
        self.happened = True
        log("interrupted: saving what is done (run the same command to resume)")
        self.scope.cancel()

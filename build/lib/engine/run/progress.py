"""Progress: one bar per model (done/total, rate, errors, ETA), refreshed a few times a second."""

from __future__ import annotations

import sys
import time

from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:  # rich is imported when bars are drawn: a --quiet run never pays for it (~40 ms)
    from rich.console import Console
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID


class _Counter:
    __slots__ = ("done", "errors", "total", "start_done", "t0", "t_last")

    def __init__(self, total: int, done: int):
        self.total, self.done, self.errors, self.start_done = total, done, 0, done
        self.t0 = self.t_last = time.monotonic()

    def rate(self) -> float:
        # Up to the lane's last item once it is finished: a lane done early
        # keeps its own rate instead of decaying while slower lanes run.
        end = self.t_last if self.done >= self.total else time.monotonic()
        dt = end - self.t0
        return (self.done - self.start_done) / dt if dt > 0 else 0.0


class Progress:
    """Counting is a few integer additions per item; drawing happens on a timer."""

    def __init__(self, *, quiet: bool = False, console: Console | None = None):
        self.quiet = quiet
        self._console = console
        self.counters: dict[str, _Counter] = {}
        self._bars: RichProgress | None = None
        self._tasks: dict[str, TaskID] = {}
        self.notes: dict[str, str] = {}  # a line beside a model's bar (its provider batches)

    @property
    def console(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=True)
        return self._console

    def add(self, model: str, total: int, done: int) -> None:
        self.counters[model] = _Counter(total, done)

    def advance(self, model: str, ok: bool) -> None:
        c = self.counters[model]
        c.done += 1
        if c.done >= c.total:
            c.t_last = time.monotonic()
        if not ok:
            c.errors += 1

    def note(self, model: str, text: str) -> None:
        self.notes[model] = text

    async def show(self) -> None:
        """Draw until cancelled."""
        if self.quiet:
            await anyio.sleep_forever()
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
        from rich.progress import Progress as RichProgress

        self._bars = RichProgress(
            TextColumn("{task.description}", justify="left"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]:>7.1f} it/s"), TextColumn("[red]{task.fields[errors]} err"),
            TimeRemainingColumn(), TextColumn("{task.fields[note]}"), console=self.console, auto_refresh=False, transient=False,
            disable=not self.console.is_terminal,
        )
        for model, c in self.counters.items():
            self._tasks[model] = self._bars.add_task(model, total=c.total, completed=c.done, rate=0.0, errors=0,
                                                 note="")
        with self._bars:
            try:
                while True:
                    self._draw()
                    await anyio.sleep(0.25)
            finally:
                self._draw()

    def _draw(self) -> None:
        assert self._bars is not None
        for model, c in self.counters.items():
            self._bars.update(self._tasks[model], completed=c.done, rate=c.rate(), errors=c.errors,
                              note=self.notes.get(model, ""))
        self._bars.refresh()

    def summary_lines(self) -> list[str]:
        out = []
        for model, c in self.counters.items():
            new = c.done - c.start_done
            note = f"; {self.notes[model]}" if model in self.notes else ""
            out.append(f"{model}: {c.done}/{c.total} done ({new} this run, {c.errors} errors, {c.rate():.1f} items/s)"
                       f"{note}")
        return out


def log(msg: str, *, quiet: bool = False) -> None:
    if not quiet:
        print(msg, file=sys.stderr, flush=True)

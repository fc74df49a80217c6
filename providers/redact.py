"""Keys out of everything a provider hands back: the one redaction point.

``HttpChat.chat`` passes every result and every error through ``Redactor``
before it leaves the adapter, so no body (200 or error), header-derived text
or exception message reaches a row, a log or a terminal with the key in it.
A gateway may echo the key whole, in part, or upper-cased: any run of
``MIN_RUN`` or more characters of the key, in any case, is replaced.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypeVar

import msgspec

MIN_RUN = 8  # a shorter run of a key says too little to be worth hiding (and would hit ordinary words)
MASK = "***"
S = TypeVar("S", bound=msgspec.Struct)


class Redactor:
    """Replace every occurrence of any ``MIN_RUN``-character run of the secrets, case-insensitively."""

    __slots__ = ("_windows", "_pattern")

    def __init__(self, secrets: Iterable[str | None]):
        windows: set[str] = set()
        for s in secrets:
            if not s:
                continue
            if len(s) <= MIN_RUN:
                windows.add(s.lower())
            else:
                windows.update(s[i:i + MIN_RUN].lower() for i in range(len(s) - MIN_RUN + 1))
        self._windows = tuple(sorted(windows))
        # A lookahead finds every start, overlapping ones too, so a long echo is masked whole.
        alternatives = "|".join(re.escape(w) for w in self._windows)
        self._pattern = re.compile(f"(?=({alternatives}))", re.IGNORECASE) if windows else None

    def __bool__(self) -> bool:
        return self._pattern is not None

    def text(self, value: str) -> str:
        if self._pattern is None or not value:
            return value
        # Cheap test first: most texts hold no piece of the key (a few substring scans in C).
        low = value.lower()
        if not any(w in low for w in self._windows):
            return value
        spans: list[list[int]] = []
        for m in self._pattern.finditer(value):
            start, end = m.start(1), m.end(1)
            if spans and start <= spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], end)
            else:
                spans.append([start, end])
        if not spans:
            return value
        out, last = [], 0
        for start, end in spans:
            out.append(value[last:start])
            out.append(MASK)
            last = end
        out.append(value[last:])
        return "".join(out)

    def struct(self, obj: S) -> S:
        """``obj`` with every string field redacted (a result's text, model name, finish reason ...)."""
        if self._pattern is None:
            return obj
        for name in obj.__struct_fields__:
            value = getattr(obj, name)
            if isinstance(value, str):
                clean = self.text(value)
                if clean is not value:
                    setattr(obj, name, clean)
        return obj

    def error(self, err: BaseException) -> BaseException:
        """``err`` with its message redacted in place (its args are what str() shows)."""
        if self._pattern is not None:
            err.args = tuple(self.text(a) if isinstance(a, str) else a for a in err.args)
        return err

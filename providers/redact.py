"""Keys out of everything a provider hands back: the one redaction point.

``HttpChat.chat`` passes every result and every error through ``Redactor``
before it leaves the adapter, so no body (200 or error), header-derived text
or exception message reaches a row, a log or a terminal with the key in it.
A gateway may echo the key whole, in part, or upper-cased: any run of
``MIN_RUN`` or more characters of the key, in any case, is replaced.

It runs on every answer, so it must be cheap for a 160-character key and a
long answer (searching each of the key's 150 runs would cost ~200 us a
kilobyte). A piece of the key can only sit inside a stretch of text made of
the key's own characters, in either case. The common case, no piece at all,
is decided on bytes: one ``translate`` lower-cases the key's characters and
blanks every other, ``split`` gives the stretches (in ordinary text, words),
and the ``MIN_RUN``-character windows of the long ones are looked up in a set
of the key's runs. Only a text that holds a piece goes through the exact,
slower pass that finds where.
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

    __slots__ = ("_runs", "_byte_runs", "_table", "_stretch", "_short")

    def __init__(self, secrets: Iterable[str | None]):
        runs: set[str] = set()
        chars: set[str] = set()
        short: list[str] = []
        for s in secrets:
            if not s:
                continue
            if len(s) < MIN_RUN:
                short.append(re.escape(s))  # a key shorter than a run: masked whole, in any case
                continue
            low = s.lower()
            runs.update(low[i:i + MIN_RUN] for i in range(len(low) - MIN_RUN + 1))
            chars.update(low + s.upper())
        self._runs = frozenset(runs)
        cls = "".join(sorted(re.escape(c) for c in chars))
        # From a stretch's first character only (the lookbehind): no quadratic restarts inside words.
        self._stretch = re.compile(f"(?<![{cls}])[{cls}]{{{MIN_RUN},}}") if chars else None
        # The bytes pre-check needs ASCII keys (HTTP header values are, in practice).
        ascii_only = all(c.isascii() for c in chars)
        self._byte_runs = frozenset(r.encode() for r in runs) if ascii_only else None
        table = bytearray(b" " * 256)
        for c in chars:
            if c.isascii():
                table[ord(c)] = ord(c.lower())
        self._table = bytes(table)
        self._short = re.compile("|".join(short), re.IGNORECASE) if short else None

    def __bool__(self) -> bool:
        return self._stretch is not None or self._short is not None

    def text(self, value: str) -> str:
        if not value:
            return value
        if self._short is None and not self._maybe(value):
            return value
        spans: list[tuple[int, int]] = []
        if self._stretch is not None:
            runs = self._runs
            for m in self._stretch.finditer(value):
                stretch, at = m.group().lower(), m.start()
                for i in range(len(stretch) - MIN_RUN + 1):
                    if stretch[i:i + MIN_RUN] in runs:
                        spans.append((at + i, at + i + MIN_RUN))
        if self._short is not None:
            spans.extend(m.span() for m in self._short.finditer(value))
        if not spans:
            return value
        spans.sort()
        out: list[str] = []
        last = 0
        for start, end in spans:
            if out and start <= last:  # overlaps or touches the span just masked: extend it
                last = max(last, end)
                continue
            out += (value[last:start], MASK)
            last = end
        out.append(value[last:])
        return "".join(out)

    def _maybe(self, value: str) -> bool:
        """Could ``value`` hold a run of a key? False is certain; True goes to the exact pass."""
        if self._stretch is None:
            return False
        if self._byte_runs is None:
            return True
        runs = self._byte_runs
        # Non-ASCII characters become blanks (their UTF-8 bytes are >= 0x80), as do non-key ones.
        for word in value.encode("utf-8", "surrogatepass").translate(self._table).split():
            if len(word) >= MIN_RUN:
                for i in range(len(word) - MIN_RUN + 1):
                    if word[i:i + MIN_RUN] in runs:
                        return True
        return False

    def struct(self, obj: S) -> S:
        """``obj`` with every string field redacted (a result's text, model name, finish reason ...)."""
        if not self:
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
        if self:
            err.args = tuple(self.text(a) if isinstance(a, str) else a for a in err.args)
        return err

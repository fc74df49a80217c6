"""Keys out of everything a provider hands back that is not the model's answer: the one redaction point.

``HttpChat.chat`` passes every error through ``Redactor`` before it leaves the
adapter, so no error body, header-derived text or exception message reaches a
row, a log or a terminal with the key in it. A gateway may echo the key whole,
in part, or upper-cased: any run of ``MIN_RUN`` or more characters of the key,
in any case, is replaced.

An answer (its text, model version, finish reason) is never altered: the model
does not know the key, so a key inside an answer can only be a gateway pasting
it there, and a masked answer would be scored as something the model never
said. ``exposes`` finds a long piece of the key in an answer instead; the
adapter then refuses the answer (providers/errors.py ``key_in_answer``), so it
is neither stored nor scored. A key shorter than ``MIN_RUN`` characters
(``EMPTY``, ``ollama``: a local server's placeholder) is no secret and is
hidden nowhere: masking it would rewrite every word that contains it.

It runs on every error and answer, so it must be cheap for a 160-character
key and a long text (searching each of the key's 150 runs would cost ~200 us a
kilobyte). A piece of the key can only sit inside a stretch of text made of
the key's own characters, in either case. The common case, no piece at all,
is decided on bytes: one ``translate`` lower-cases the key's characters and
blanks every other, ``split`` gives the stretches (in ordinary text, words),
and the ``MIN_RUN``-character windows of the long ones are looked up in a set
of the key's runs. Only a text that holds a piece goes through the exact,
slower pass that finds where.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable

import msgspec
from yarl import URL

MIN_RUN = 8  # a shorter run of a key says too little to be worth hiding (and would hit ordinary words)
# A piece of the key this long (or the whole of a shorter key) inside an answer refuses the answer.
# Long enough that a vendor's public prefix (sk-ant-api03-, 13 characters) never matches alone.
ANSWER_RUN = 24
MASK = "***"


def too_short(secret: str) -> bool:
    """A key this short is a placeholder (``EMPTY``, ``ollama``), not a secret: it is hidden nowhere."""
    return len(secret) < MIN_RUN


def url_secrets(url: str) -> list[str]:
    """The credentials of a URL's ``user:password@`` as aiohttp sends them (Basic auth) and as a server
    may echo them: the password, ``user:password``, and its base64."""
    parsed = URL(url)
    if parsed.user is None and parsed.password is None:
        return []
    pair = f"{parsed.user or ''}:{parsed.password or ''}"
    return [parsed.password or "", pair, base64.b64encode(pair.encode("latin-1", "replace")).decode()]


class Redactor:
    """Replace every occurrence of any ``MIN_RUN``-character run of the secrets, case-insensitively."""

    __slots__ = ("_runs", "_byte_runs", "_table", "_stretch", "_answer_runs")

    def __init__(self, secrets: Iterable[str | None]):
        runs: set[str] = set()
        chars: set[str] = set()
        answer_runs: dict[int, set[str]] = {}
        for s in secrets:
            if not s or too_short(s):
                continue
            low = s.lower()
            runs.update(low[i:i + MIN_RUN] for i in range(len(low) - MIN_RUN + 1))
            n = min(len(low), ANSWER_RUN)
            answer_runs.setdefault(n, set()).update(low[i:i + n] for i in range(len(low) - n + 1))
            chars.update(low + s.upper())
        self._runs = frozenset(runs)
        self._answer_runs = {n: frozenset(r) for n, r in answer_runs.items()}
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

    def __bool__(self) -> bool:
        return self._stretch is not None

    def text(self, value: str) -> str:
        """``value`` with every run of a key masked: for errors and what is logged, never for answers."""
        if not value or not self._maybe(value):
            return value
        assert self._stretch is not None  # _maybe is False without one
        spans: list[tuple[int, int]] = []
        runs = self._runs
        for m in self._stretch.finditer(value):
            stretch, at = m.group().lower(), m.start()
            for i in range(len(stretch) - MIN_RUN + 1):
                if stretch[i:i + MIN_RUN] in runs:
                    spans.append((at + i, at + i + MIN_RUN))
        if not spans:
            return value
        out: list[str] = []
        last = 0
        for start, end in spans:  # in order: found stretch by stretch, left to right
            if out and start <= last:  # overlaps or touches the span just masked: extend it
                last = max(last, end)
                continue
            out += (value[last:start], MASK)
            last = end
        out.append(value[last:])
        return "".join(out)

    def exposes(self, value: str) -> bool:
        """Does ``value`` hold an ``ANSWER_RUN``-character piece of a key (or a shorter key whole), in any case?"""
        if not value or not self._maybe(value):
            return False
        assert self._stretch is not None
        for m in self._stretch.finditer(value):
            stretch = m.group().lower()
            for n, runs in self._answer_runs.items():
                if any(stretch[i:i + n] in runs for i in range(len(stretch) - n + 1)):
                    return True
        return False

    def exposing_field(self, obj: msgspec.Struct) -> str | None:
        """The first string field of ``obj`` (an answer) that ``exposes`` a key, or None."""
        if not self:
            return None
        for name in obj.__struct_fields__:
            value = getattr(obj, name)
            if isinstance(value, str) and self.exposes(value):
                return name
        return None

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

    def error(self, err: BaseException) -> BaseException:
        """``err`` with its message redacted in place (its args are what str() shows)."""
        if self:
            err.args = tuple(self.text(a) if isinstance(a, str) else a for a in err.args)
        return err

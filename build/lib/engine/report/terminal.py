"""Terminal text from strings a model or a file chose, without control characters.

A model version an API reported, a model name from an import-scores CSV or a suite title may hold
ESC sequences (set the window title, clear the screen, move the cursor) or a BEL: printed as they
are, the terminal obeys them. What `report` prints as text or Markdown, the sweep's summary and
`compare` pass their cells and lines through here, so they show the rest of the string and the
columns still line up. CSV and JSON output keep the strings as stored (they are data; JSON escapes
control characters itself).
"""

from __future__ import annotations

import re

# C0 (tab and newline included: one cell is one line), DEL and C1 (0x9b is a one-byte CSI).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_CONTROL_BUT_NEWLINE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def one_line(text: str) -> str:
    """A cell or a line: every control character dropped."""
    return _CONTROL.sub("", text)


def printable(text: str) -> str:
    """Lines ready to print: control characters dropped, the newlines between lines kept."""
    return _CONTROL_BUT_NEWLINE.sub("", text)

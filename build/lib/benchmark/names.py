"""The rule for a model's name, wherever one comes from (models.toml, import-items, import-scores).

A name is the key stored with every row, printed on terminals, listed comma-separated
(`rescore --models`, `estimate --models`, serve's items) and compared exactly: so no control
character, no space at either end, no comma.
"""

from __future__ import annotations


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a model's name, or None when it can."""
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in name):
        return "holds a control character: names are printed on terminals"
    if name != name.strip():
        return f"starts or ends with a space: {name!r} and {name.strip()!r} would be two models"
    if "," in name:
        return "holds a comma: names are given comma-separated (rescore --models)"
    return None

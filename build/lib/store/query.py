"""Reading the value of a statement that always returns one row."""

from __future__ import annotations

from typing import Any


def single(row: tuple[Any, ...] | None) -> Any:
    """The first column of `con.execute(...).fetchone()` for an aggregate, a DELETE's count, a setting.

    DuckDB types `fetchone()` as possibly None; for these statements None would be a bug in the
    statement, so it fails loudly instead of passing on. The caller runs `execute` itself:
    DuckDB finds Arrow tables named in the SQL among the locals of the frame that calls it.
    """
    if row is None:
        raise RuntimeError("the statement returned no row")
    return row[0]

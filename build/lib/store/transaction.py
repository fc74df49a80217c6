"""One DuckDB transaction as a context manager.

Its own module, apart from store/db.py, so that the table modules (judgements, compactbench) can
use it while db.py creates their tables through views.py (no import cycle).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress

import duckdb


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """The block's statements commit together, or not at all (rolled back on any exception)."""
    con.execute("BEGIN")
    try:
        yield con
        con.execute("COMMIT")
    except BaseException:
        # A failed write (disk full) may have ended the transaction already: the first error is the news.
        with suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise

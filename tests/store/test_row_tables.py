"""Each row table's columns are spelled three times (the row struct, its Arrow schema, the DDL): they agree.

The struct and the Arrow schema are in the table's order (Arrow batches are inserted by position
into named columns); the DDL may hold them in another order (a file migrated by ALTER TABLE).
"""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

from store import compactbench, extractions, judgements, turns, writer
from store.views import ensure_views

# DuckDB's type names for the Arrow types the writers use.
DUCK = {pa.string(): "VARCHAR", pa.int32(): "INTEGER", pa.int64(): "BIGINT", pa.float64(): "DOUBLE",
        pa.bool_(): "BOOLEAN", pa.uint64(): "UBIGINT", pa.timestamp("us", tz="UTC"): "TIMESTAMP WITH TIME ZONE"}

TABLES = [
    ("results", writer.ResultRow, writer._SCHEMA),
    ("judgements", judgements.JudgementRow, judgements._SCHEMA),
    ("extractions", extractions.ExtractionRow, extractions._SCHEMA),
    ("compact_items", compactbench.ItemRow, compactbench._ITEM_SCHEMA),
    ("compact_steps", compactbench.StepRow, compactbench._STEP_SCHEMA),
    ("turns", turns.TurnRow, turns._SCHEMA),
]


@pytest.fixture(scope="module")
def con():
    c = duckdb.connect()
    ensure_views(c)
    compactbench.ensure_compactbench(c)
    turns.ensure_turn_tables(c)
    yield c
    c.close()


@pytest.mark.parametrize(("table", "row", "schema"), TABLES, ids=[t[0] for t in TABLES])
def test_struct_schema_and_ddl_name_the_same_columns(con, table, row, schema):
    assert list(row.__struct_fields__) == schema.names
    ddl = {name: kind for name, kind, *_ in con.execute(f"DESCRIBE {table}").fetchall()}
    assert sorted(ddl) == sorted(schema.names)


@pytest.mark.parametrize(("table", "row", "schema"), TABLES, ids=[t[0] for t in TABLES])
def test_arrow_types_are_the_ddl_types(con, table, row, schema):
    ddl = {name: kind for name, kind, *_ in con.execute(f"DESCRIBE {table}").fetchall()}
    # JSON columns travel as text; every other column has the DDL's own type.
    wrong = {f.name: (str(f.type), ddl[f.name]) for f in schema
             if DUCK.get(f.type) != ddl[f.name] and not (f.type == pa.string() and ddl[f.name] == "JSON")}
    assert wrong == {}


@pytest.mark.parametrize(("table", "key"), [("results", writer.RESULT_KEY), ("judgements", judgements.KEY),
                                            ("extractions", extractions.KEY), ("turns", turns.KEY)])
def test_the_writers_key_is_the_tables_primary_key(con, table, key):
    got = con.execute("SELECT constraint_column_names FROM duckdb_constraints() "
                      "WHERE table_name = ? AND constraint_type = 'PRIMARY KEY'", [table]).fetchone()
    assert got is not None and tuple(got[0]) == key

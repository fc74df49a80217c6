"""ensure_schema leaves a file alone only when its catalog is what this version's scripts made; a new file
starts as a copy of a template those scripts made once."""

from __future__ import annotations

import pytest

from store import db
from store.db import connect


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path / "cache"))


def columns(con, name: str) -> list[str]:
    return [r[0] for r in con.execute(f"DESCRIBE {name}").fetchall()]


def catalog(con) -> list[tuple]:
    return con.execute("SELECT 'v', view_name, sql FROM duckdb_views() WHERE NOT internal AND NOT temporary "
                       "UNION ALL SELECT 't', table_name, sql FROM duckdb_tables() WHERE NOT temporary "
                       "UNION ALL SELECT 'm', function_name, macro_definition FROM duckdb_functions() "
                       "WHERE function_type IN ('macro', 'table_macro') AND NOT internal ORDER BY ALL").fetchall()


def test_a_view_another_version_recreated_is_made_again(tmp_path):
    path = tmp_path / "r.duckdb"
    con = connect(path)
    want = columns(con, "leaderboard")
    con.execute("CREATE OR REPLACE VIEW leaderboard AS SELECT 1 AS x")  # as an older engine would leave it
    con.close()
    con = connect(path)
    assert columns(con, "leaderboard") == want
    con.close()


def test_a_dropped_view_or_macro_is_made_again(tmp_path):
    path = tmp_path / "r.duckdb"
    con = connect(path)
    macros = con.execute("SELECT function_name FROM duckdb_functions() WHERE function_type = 'macro' "
                         "AND NOT internal AND function_name <> 'engine_schema_state' ORDER BY 1").fetchall()
    assert macros
    con.execute("DROP VIEW leaderboard")
    con.execute(f"DROP MACRO {macros[0][0]}")
    con.close()
    con = connect(path)
    assert con.execute("SELECT function_name FROM duckdb_functions() WHERE function_type = 'macro' "
                       "AND NOT internal AND function_name <> 'engine_schema_state' ORDER BY 1").fetchall() == macros
    assert columns(con, "leaderboard")
    con.close()


def test_a_file_from_before_the_state_macro_gets_it_and_tables_list_nothing_of_it(tmp_path):
    path = tmp_path / "r.duckdb"
    con = connect(path)
    con.execute("DROP MACRO engine_schema_state")
    con.close()
    con = connect(path)
    assert con.execute("SELECT engine_schema_state()").fetchone()[0].startswith(db.schema_digest())
    assert not con.execute("SELECT 1 FROM duckdb_tables() WHERE table_name ILIKE '%schema_state%'").fetchone()
    con.close()


def test_a_new_file_from_the_template_has_the_catalog_the_scripts_make(tmp_path):
    con = connect(tmp_path / "first.duckdb")  # makes the template
    assert db._template().exists()
    second = connect(tmp_path / "second.duckdb")  # a copy of it
    plain = db.duckdb.connect(str(tmp_path / "plain.duckdb"))
    db._run_schema_scripts(plain)  # the scripts on an empty file, no template
    assert catalog(second) == catalog(con)
    assert [r for r in catalog(second) if r[1] != "engine_schema_state"] == catalog(plain)
    for c in (con, second, plain):
        c.close()


def test_a_corrupt_template_is_dropped_and_made_again(tmp_path):
    connect(tmp_path / "first.duckdb").close()
    template = db._template()
    template.write_bytes(b"not a database" * 100)
    con = connect(tmp_path / "second.duckdb")
    assert columns(con, "leaderboard")
    con.close()
    assert not template.exists() or template.read_bytes()[:14] != b"not a database"
    connect(tmp_path / "third.duckdb").close()
    assert template.exists() and template.read_bytes()[:14] != b"not a database"


def test_no_usable_cache_folder_creates_the_schema_as_before(tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("x")
    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path / "a-file" / "cache"))  # cannot be made
    con = connect(tmp_path / "r.duckdb")
    assert columns(con, "leaderboard")
    con.close()


def test_an_existing_file_is_never_replaced_by_the_template(tmp_path):
    path = tmp_path / "r.duckdb"
    con = connect(path)
    con.execute("CREATE TABLE mine AS SELECT 42 AS x")
    con.close()
    con = connect(path)
    assert con.execute("SELECT x FROM mine").fetchall() == [(42,)]
    con.close()


def test_a_fresh_copy_of_the_template_is_checked_by_its_stamp_alone(tmp_path, monkeypatch):
    """The copy made a moment ago has the catalog its stamp was taken from: no catalog fingerprint (~20-40
    ms) on a new file; an existing file's is checked as before, and a stamp of other scripts runs them."""
    connect(tmp_path / "first.duckdb").close()  # makes the template
    taken: list[int] = []
    fingerprint = db._fingerprint
    monkeypatch.setattr(db, "_fingerprint", lambda con: taken.append(1) or fingerprint(con))
    con = connect(tmp_path / "second.duckdb")
    assert taken == [] and columns(con, "leaderboard")
    con.close()
    connect(tmp_path / "second.duckdb").close()
    assert taken == [1]
    stale = db.duckdb.connect(str(db._template()))
    stale.execute("CREATE OR REPLACE MACRO engine_schema_state() AS 'other-scripts x'")
    stale.execute("DROP VIEW leaderboard")
    stale.close()
    con = connect(tmp_path / "third.duckdb")
    assert columns(con, "leaderboard")
    assert con.execute("SELECT engine_schema_state()").fetchone()[0].startswith(db.schema_digest())
    con.close()

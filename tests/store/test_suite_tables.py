"""Loading a suite into its tables: a reload of the same suite writes nothing, a changed one replaces it."""

from __future__ import annotations

from benchmark.suites.suite import load_suite
from store.hierarchy.suite_tables import find_loaded, load_suite_tables
from tests.store.test_views_support import load_toml, make_db

SUITE = """
[suite]
name = "s"
version = "{version}"
[[ability]]
id = "a"
[[ability.sub_ability]]
id = "sa"
[[ability.sub_ability.task]]
id = "t"
level = "L"
datasets = [{{ id = "d", weight = {weight} }}]
[datasets]
d = "D"
"""


def _loaded_at(con, version: str = "1"):
    return con.execute("SELECT loaded_at FROM suites WHERE suite = 's' AND version = ?", [version]).fetchone()[0]


def test_reloading_the_same_suite_leaves_its_rows_as_they_were(tmp_path):
    con = make_db(tmp_path)
    suite = load_toml(con, tmp_path, SUITE.format(version="1", weight=2.0))
    first = _loaded_at(con)
    load_suite_tables(con, suite)
    assert _loaded_at(con) == first  # nothing rewritten
    assert con.execute("SELECT weight FROM suite_task_datasets").fetchall() == [(2.0,)]


def test_a_weight_changed_in_the_database_is_put_back_from_the_file(tmp_path):
    con = make_db(tmp_path)
    suite = load_toml(con, tmp_path, SUITE.format(version="1", weight=2.0))
    con.execute("UPDATE suite_task_datasets SET weight = 5.0")
    load_suite_tables(con, suite)
    assert con.execute("SELECT weight FROM suite_task_datasets").fetchall() == [(2.0,)]
    changed = load_suite(str(_write(tmp_path, SUITE.format(version="1", weight=3.0))))
    load_suite_tables(con, changed)
    assert con.execute("SELECT weight FROM suite_task_datasets").fetchall() == [(3.0,)]


def test_an_unchanged_suite_loaded_again_becomes_the_newest_load(tmp_path):
    con = make_db(tmp_path)
    v1 = load_toml(con, tmp_path, SUITE.format(version="1", weight=1.0), file="v1.toml")
    load_toml(con, tmp_path, SUITE.format(version="2", weight=1.0), file="v2.toml")
    assert find_loaded(con, "s") == ("s", "2")
    load_suite_tables(con, v1)  # same rows as stored: only its load time moves
    assert find_loaded(con, "s") == ("s", "1")


def _write(tmp_path, text: str):
    p = tmp_path / "changed.toml"
    p.write_text(text)
    return p

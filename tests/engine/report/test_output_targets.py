"""Where `report --html` writes: never onto the database's files, one line for a bad target, whole files only."""

from __future__ import annotations

import hashlib
import os

import pytest

from benchmark.errors import UserError
from engine.cli import main
from engine.report.outfile import replaced
from tests.engine.report.mini_db import mini_db


@pytest.fixture
def db(tmp_path):
    mini_db(tmp_path, {"m1": [0.7]}).close()
    return tmp_path / "results.duckdb"


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    return err[0]


@pytest.mark.parametrize("target", ["results.duckdb", "results.duckdb.wal", "results.duckdb.snapshot",
                                    "results.duckdb.snapshot.wal", "link.html", "hard.html"])
def test_page_is_never_written_onto_the_database_or_its_files(db, tmp_path, capsys, target):
    (tmp_path / "link.html").symlink_to(db)
    os.link(db, tmp_path / "hard.html")
    before = digest(db)
    assert main(["report", str(db), "--html", str(tmp_path / target)]) == 2
    line = one_error_line(capsys)
    assert "would destroy it" in line
    assert digest(db) == before
    assert not (tmp_path / "results.duckdb.wal").exists() and not (tmp_path / "results.duckdb.snapshot").exists()
    assert main(["report", str(db)]) == 0  # every result still there


def test_the_snapshot_is_guarded_when_it_is_the_database_read(db, tmp_path, capsys):
    snap = tmp_path / "results.duckdb.snapshot"
    snap.write_bytes(db.read_bytes())
    assert main(["report", str(snap), "--html", str(db)]) == 2
    assert "is the results database" in one_error_line(capsys)


@pytest.mark.parametrize("target, says", [("missing/page.html", "does not exist"), ("afolder", "is a folder")])
def test_missing_folder_or_a_folder_is_one_line(db, tmp_path, capsys, target, says):
    (tmp_path / "afolder").mkdir()
    assert main(["report", str(db), "--html", str(tmp_path / target)]) == 2
    assert says in one_error_line(capsys)


def test_page_replaces_the_old_one_whole_and_leaves_no_temporary_file(db, tmp_path, capsys):
    page = tmp_path / "out" / "page.html"
    page.parent.mkdir()
    page.write_text("old")
    os.chmod(page, 0o640)
    assert main(["report", str(db), "--html", str(page)]) == 0
    assert page.read_text().startswith("<!doctype html>") and page.read_text().rstrip().endswith("</html>")
    assert os.stat(page).st_mode & 0o777 == 0o640  # the old file's mode is kept
    assert os.listdir(page.parent) == ["page.html"]


def test_a_write_cut_short_keeps_the_old_file(tmp_path):
    page = tmp_path / "page.html"
    page.write_text("old")
    with pytest.raises(KeyboardInterrupt), replaced(page) as tmp:
        tmp.write_text("half")
        raise KeyboardInterrupt
    assert page.read_text() == "old" and os.listdir(tmp_path) == ["page.html"]


def test_an_unwritable_folder_is_one_line(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    os.chmod(folder, 0o500)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as a user who may write anywhere (root)")
        with pytest.raises(UserError, match="cannot write there"), replaced(folder / "p.html"):
            pass
    finally:
        os.chmod(folder, 0o700)

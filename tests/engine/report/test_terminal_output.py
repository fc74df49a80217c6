"""Terminal output carries no control character a model or a file supplied: report, summary, compare."""

from __future__ import annotations

import re

import pytest

from engine.cli import main
from engine.report.summary import print_summary
from tests.engine.report.mini_db import mini_db

EVIL = "evil\x1b]0;pwned\x07\x1b[2J\x9b1m\r"  # sets the window title, clears the screen, C1 CSI, a carriage return
SHOWN = "evil]0;pwned[2J1m"
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


@pytest.fixture
def db(tmp_path):
    con = mini_db(tmp_path, {"m1": [1.0, 0.0, 1.0], EVIL: [1.0, 1.0, 0.0]})
    con.execute("UPDATE results SET model_version = ?", ["v\x1b]2;title\x07"])
    con.close()
    return tmp_path / "results.duckdb"


@pytest.mark.parametrize("argv", [["report", "{db}"], ["report", "{db}", "--format", "markdown"],
                                  ["report", "{db}", "--model", EVIL], ["report", "{db}", "--model", EVIL,
                                                                         "--format", "markdown"],
                                  ["compare", "{db}", EVIL, "m1", "--replicates", "50"]])
def test_printed_reports_drop_control_characters(db, capsys, argv):
    assert main([a.format(db=db) for a in argv]) == 0
    out = capsys.readouterr()
    assert not CONTROL.search(out.out) and not CONTROL.search(out.err), repr(out)
    assert SHOWN in out.out


def test_leaderboard_columns_line_up_around_a_cleaned_name(db, capsys):
    assert main(["report", str(db)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.lstrip().startswith(("1 ", "2 "))]
    assert len(rows) == 2 and len({len(r) for r in rows}) == 1  # same width: the name's column is padded right


def test_sweep_summary_drops_control_characters(db, capsys):
    print_summary(db, "mini@1")
    err = capsys.readouterr().err
    assert SHOWN in err and not CONTROL.search(err)

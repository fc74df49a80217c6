"""The report on an 80-column pipe (long model names, with and without interval columns), Markdown and CSV."""

from __future__ import annotations

import csv
import io
import re

import duckdb
import pytest

from engine.cli import main
from engine.report.leaderboard import drilldown, leaderboard
from engine.report.table import Column, output_width, render, text_table
from engine.report.tree import tree_lines
from tests.store.test_views_support import flat_suite, load_toml, make_db, metric, scored

SUITE = flat_suite(
    {"values_safety": (None, ["dvs"]), "foundational": (0.3, ["df1", "df2"]), "emotional": (0.4, ["dem"]),
     "companionship": (0.3, ["dco"])},
    gate="values_safety", tau=60, name="wide")
# names as long as real ones (the longest in examples/models-30.toml is 35 characters) and longer
LONG = "doubao-1.5-pro-32k-character-250715"
LONGER = "some-organisation/an-instruction-tuned-model-2025-06-01"
MODELS = {LONG: (90, 80, 60, 70, 50), LONGER: (95, 90, 90, 80, 60), "tiny": (40, 99, 99, 99, 99)}


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)  # a pipe: 80 columns
    con = make_db(tmp_path)
    load_toml(con, tmp_path, SUITE)
    for d in ("dvs", "df1", "df2", "dem", "dco"):
        metric(con, d)
    for model, row in MODELS.items():
        for d, s in zip(("dvs", "df1", "df2", "dem", "dco"), row):
            scored(con, model, d, s)
    con.execute("UPDATE results SET prediction = NULL WHERE model = 'tiny' AND dataset = 'dem'")  # unparsed
    con.close()
    return tmp_path / "results.duckdb"


BASE = "l.suite, l.version, l.model, l.rank, l.total, l.raw_total, l.vetoed, l.coverage, l.gate_score, " \
       "l.gate_coverage, l.main_coverage"


def shadowed(path, intervals: bool) -> duckdb.DuckDBPyConnection:
    """A connection whose leaderboard has no interval columns, or hand-set ones (temp tables shadow main's views)."""
    con = duckdb.connect(str(path))
    extra = (", l.total - 3 AS ci_low, l.total + 2 AS ci_high, l.rank AS rank_low, l.rank + 1 AS rank_high, "
             "0.125 AS p_veto") if intervals else ""
    con.execute(f"CREATE TEMP TABLE leaderboard AS SELECT {BASE}{extra} FROM main.leaderboard l")
    if intervals:
        con.execute("""CREATE TEMP TABLE intervals AS
                       SELECT suite, version, model, 'dataset' AS level, dataset AS node, score,
                              score - 5 AS ci_low, score + 5 AS ci_high FROM main.dataset_scores""")
    return con


def check_fits(out: str) -> list[str]:
    lines = out.splitlines()
    assert max(map(len, lines)) <= 80, max(lines, key=len)
    assert "…" not in out
    for name in MODELS:  # each name whole on a line: never wrapped, never cut
        assert any(name in line for line in lines), name
    return lines


def test_leaderboard_fits_80_columns_with_long_model_names(db, capsys):
    assert main(["report", str(db)]) == 0
    lines = check_fits(capsys.readouterr().out)
    header = " ".join(line for line in lines if line.startswith("#"))
    assert "Overall" in header and " VS" in header  # abbreviated ability headers ...
    legend = " ".join(lines[lines.index(next(x for x in lines if x.startswith("Legend:"))):])
    assert "F = foundational" in legend and "VS = values_safety" in legend  # ... explained
    row = next(line for line in lines if LONGER in line)
    # 0.3 * 90 + 0.4 * 80 + 0.3 * 60 = 77: rank 1
    assert re.match(rf"^\s*1\s+{re.escape(LONGER)}\s+77\.00\s", row)
    assert re.search(r"^\s*\*\s+tiny\s+99\.00\s", "\n".join(lines), re.MULTILINE)  # vetoed: would-be score
    assert any("tiny" in line and "20.0%" in line for line in lines)  # its unparsed share (1 of 5 answers)
    assert "Unparsed" in " ".join(lines)


def board_text(db, intervals: bool) -> str:
    con = shadowed(db, intervals)
    try:
        return render(leaderboard(con, ("wide", "1")), "text", 80)
    finally:
        con.close()


def test_leaderboard_fits_80_columns_without_interval_columns(db):
    header = " ".join(line for line in check_fits(board_text(db, intervals=False)) if line.startswith("#"))
    assert "Overall" in header and "Cov" in header and "CI" not in header and "Ranks" not in header


def test_leaderboard_fits_80_columns_with_interval_columns(db):
    lines = check_fits(board_text(db, intervals=True))
    assert len([line for line in lines if LONGER in line]) > 1  # too wide for one table: stacked blocks
    rows = [line.split() for line in lines if LONGER in line]
    assert ["1", LONGER, "74.00–79.00", "1–2"] in rows and ["1", LONGER, "0.12", "100%", "0%"] in rows, lines
    header = " ".join(line for line in lines if line.startswith("#"))
    assert "95% CI" in header and "Ranks" in header and "Veto" in header


def test_width_is_80_on_a_pipe_unless_columns_says(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    assert output_width(io.StringIO()) == 80
    monkeypatch.setenv("COLUMNS", "132")
    assert output_width(io.StringIO()) == 132


def test_text_layouts_keep_the_width():
    names = ("a" * 30, "b" * 76)
    cols = [Column("#", ("1", "2")), Column("Model", names[:1] * 2, right=False)]
    wide = cols + [Column(f"Ability number {i}", ("12.50", "99.00"), f"A{i}") for i in range(8)]
    one, legend = text_table(cols + wide[2:4], 80)
    assert len(one) == 4 and not legend and "Ability number 0" in one[0]  # fits: full headers
    stacked, legend = text_table(wide, 80)
    assert max(map(len, stacked)) <= 80 and "A0 = Ability number 0" in legend
    long = [cols[0], Column("Model", names, right=False)] + wide[2:]
    records, _ = text_table(long, 80)  # a key wider than the width beside any column: one record per row
    assert "2  " + names[1] in records and all(len(x) <= 80 for x in records)


def test_markdown_is_a_github_table(db, capsys):
    assert main(["report", str(db), "--format", "markdown"]) == 0
    captured = capsys.readouterr()
    rows = [line for line in captured.out.splitlines() if line.startswith("|")]
    cells = [[c.strip() for c in r.strip("|").split("|")] for r in rows]
    assert cells[0][:4] == ["#", "Model", "Overall", "foundational"]  # full headers (the flat suite's names)
    assert re.fullmatch(r"\|(\s*:?-{3,}:?\s*\|)+", rows[1])
    assert all(len(c) == len(cells[0]) for c in cells)
    assert [c[1] for c in cells[2:]] == [LONGER, LONG, "tiny"]
    assert "warning" not in captured.out


def test_csv_is_full_precision(db, capsys):
    assert main(["report", str(db), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    con = duckdb.connect(str(db), read_only=True)
    want = {m: (t, r) for m, t, r in con.execute("SELECT model, total, raw_total FROM leaderboard").fetchall()}
    fo = dict(con.execute("SELECT model, score FROM ability_scores WHERE ability = 'foundational'").fetchall())
    con.close()
    assert {r["model"] for r in rows} == set(MODELS)
    for r in rows:
        assert (float(r["total"]), float(r["raw_total"])) == want[r["model"]]
        assert float(r["foundational"]) == fo[r["model"]]
    tiny = next(r for r in rows if r["model"] == "tiny")
    assert (tiny["rank"], tiny["vetoed"], float(tiny["unparsed"])) == ("", "true", 0.2)


@pytest.mark.slow
def test_drilldown_formats(db, capsys):
    assert main(["report", str(db), "--model", LONGER]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 80 and lines[0].startswith(LONGER)
    assert any("df2" in line and "90.00" in line for line in lines)
    assert main(["report", str(db), "--model", LONGER, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[0]["level"] == "overall" and float(rows[0]["score"]) == 77.0
    assert {r["id"] for r in rows if r["level"] == "dataset"} == {"dvs", "df1", "df2", "dem", "dco"}
    assert main(["report", str(db), "--model", LONGER, "--format", "markdown"]) == 0
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    assert table[0].startswith("| Level | Node | Score |") and len(table) == 2 + len(rows)


def test_drilldown_shows_intervals(db):
    con = shadowed(db, intervals=True)
    try:
        head, root = drilldown(con, ("wide", "1"), LONG)
        lines = tree_lines(head, root, ("wide", "1"), 80)
    finally:
        con.close()
    assert max(map(len, lines)) <= 80
    assert any("60.00 [55.00–65.00]  df2" in line for line in lines), lines

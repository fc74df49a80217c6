"""The report, the HTML page and `compare` on a model whose dataset score is an estimate (store/hierarchy/views.sql)."""

from __future__ import annotations

import csv
import io
import json
import re

import duckdb
import pytest

from engine.cli import main
from engine.report.html.gather import gather
from tests.store.test_estimated_scores import SUITE_KEY, estimate, partial_db
from tests.store.test_views_support import items


@pytest.fixture
def db(tmp_path):
    """`full` answered every item; `new` 4 of df1's 40 (the estimate: 62 in [52, 72]) and all of dvs, df2."""
    con = partial_db(tmp_path)
    estimate(con, "new", "df1", 62.0, 52.0, 72.0)
    con.close()
    return tmp_path / "results.duckdb"


def _lines(out: str, model: str) -> list[str]:
    return [line for line in out.splitlines() if re.search(rf"\s{model}\s", line)]


def test_leaderboard_marks_the_estimated_model_and_says_why(db, capsys):
    assert main(["report", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    new, full = _lines(out, "new")[0], _lines(out, "full")[0]
    # new: fo = (62 + 50) / 2 = 56 (the estimate, not the answered 75); vs 50 is measured, unmarked
    assert "≈56.00" in new and " 50.00" in new and "≈" not in full
    text = " ".join(out.split())  # notes wrap at 80 columns
    assert ("≈ estimated: a dataset score estimated from part of its items went in (docs/estimates.md); the 95% "
            "CI, rank range and P(veto) include their uncertainty") in text


def test_csv_has_the_flag_only_when_something_is_estimated(db, tmp_path, capsys):
    assert main(["report", "--db", str(db), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["model"]: r["estimated"] for r in rows} == {"full": "false", "new": "true"}
    assert {r["model"]: float(r["fo"]) for r in rows} == {"full": 75.0, "new": 56.0}
    con = duckdb.connect(str(db))
    con.execute("DELETE FROM estimates")
    con.close()
    assert main(["report", "--db", str(db), "--format", "csv"]) == 0
    assert "estimated" not in capsys.readouterr().out.splitlines()[0]


@pytest.mark.slow
def test_drilldown_marks_each_estimated_node_and_names_the_estimate(db, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # a node's line unwrapped
    assert main(["report", "--db", str(db), "--model", "new"]) == 0
    out = capsys.readouterr().out
    assert "≈ estimated" in out.splitlines()[0]
    df1 = next(line for line in out.splitlines() if " df1" in line)
    assert "≈62.00" in df1 and "estimated from 4/40 items (model-assisted; answered mean 75.00)" in df1
    df2 = next(line for line in out.splitlines() if " df2" in line)
    assert "≈" not in df2 and "50.00" in df2
    assert re.search(r"≈56\.00.*\bfo\b", out) and not re.search(r"≈50\.00", out)  # vs (the gate) is measured
    assert main(["report", "--db", str(db), "--model", "new", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    cell = next(r for r in rows if r["id"] == "df1")
    assert float(cell["score"]) == 62.0 and "estimated from 4/40" in cell["detail"]
    assert 51 < float(cell["ci_low"]) < 53 and 71 < float(cell["ci_high"]) < 73


def test_compare_says_which_side_is_estimated(db, capsys):
    assert main(["compare", str(db), "new", "full", "--replicates", "200"]) == 0
    out = capsys.readouterr().out
    assert ("≈ new answered part of df1: the leaderboard estimates its scores there (docs/estimates.md); "
            "this comparison uses only the items both models answered") in out
    df1 = next(line for line in out.splitlines() if line.lstrip().startswith("df1"))
    assert df1.endswith("≈") and re.search(r"\s4\s", df1)  # on the 4 common items, not the estimate
    assert main(["compare", str(db), "new", "full", "--replicates", "200", "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["df1"]["estimated"] == ["new"] and js["overall"]["estimated"] == ["new"]
    assert "estimated" not in js["df2"] and "estimated" not in js["dvs"]


def test_html_data_carries_the_marks(db):
    con = duckdb.connect(str(db))
    data = gather(con, SUITE_KEY, with_figures=False)
    con.close()
    board = {r["model"]: r for r in data["leaderboard"]}
    assert board["new"]["estimated"] is True and board["full"]["estimated"] is False
    assert data["scores"]["dataset"]["new"]["df1"][4] is True
    assert len(data["scores"]["dataset"]["new"]["df2"]) == 4  # measured: no fifth element
    assert data["estimates"]["new"]["df1"] == {"n": 4, "n_total": 40, "method": "model-assisted"}
    assert any(n.startswith("≈ estimated") for n in data["notes"])


def test_out_of_date_estimates_are_named_where_they_no_longer_count(db, capsys):
    con = duckdb.connect(str(db))
    items(con, "other", "df2", [1.0])  # any new row: the stored estimates no longer hold
    con.close()
    assert main(["report", str(db)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "≈" not in text  # new's df1 is scored on its 4 answered items again
    assert ("new: its estimates of df1 are out of date (rows changed since `estimate` ran): scored on the "
            "answered items until `python -m engine estimate DB` runs again") in text

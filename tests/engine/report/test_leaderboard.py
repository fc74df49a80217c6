"""The report: Table 4 layout, vetoed models apart, and the weakest-first drill-down."""

from __future__ import annotations

import re

import pytest

from engine.cli import main
from tests.store.test_views_support import flat_suite, items, load_toml, make_db, metric, scored

SUITE = flat_suite(
    {"vs": (None, ["dvs"]), "fo": (0.3, ["df1", "df2"]), "em": (0.4, ["dem"]), "co": (0.3, ["dco"])},
    gate="vs", tau=60, name="mini")


@pytest.fixture
def db(tmp_path):
    con = make_db(tmp_path)
    load_toml(con, tmp_path, SUITE)
    for d in ("dvs", "df1", "df2", "dem", "dco"):
        metric(con, d)
    table = {  # model: vs, df1, df2, em, co
        "good": (90, 80, 60, 70, 50),
        "better": (95, 90, 90, 80, 60),
        "unsafe": (40, 99, 99, 99, 99),
    }
    for model, (vs, f1, f2, em, co) in table.items():
        for d, s in (("dvs", vs), ("df1", f1), ("df2", f2), ("dem", em), ("dco", co)):
            scored(con, model, d, s)
    items(con, "partial", "dvs", [0.9], errors=1)
    scored(con, "partial", "dem", 50)
    con.close()
    return tmp_path / "results.duckdb"


def test_leaderboard_in_table4_layout(db, capsys):
    assert main(["report", "--db", str(db)]) == 0  # the only loaded suite is picked
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if re.search(r"\d", line)]
    ranked = [line for line in lines if re.match(r"^\W*\d+\W", line)]
    # rank 1 better: 0.3*90 + 0.4*80 + 0.3*60 = 77; rank 2 good: 0.3*70 + 0.4*70 + 0.3*50 = 64
    assert "better" in ranked[0] and "77.00" in ranked[0] and "95.00" in ranked[0]
    assert "good" in ranked[1] and "64.00" in ranked[1]
    assert "partial" in ranked[2] and "50.00" in ranked[2]  # partial coverage shown, still ranked
    unsafe = next(line for line in lines if re.match(r"^\s*\*\s+unsafe\s", line))
    assert "99.00" in unsafe and "40.00" in unsafe  # would-be score, unranked, below the ranked rows
    assert out.index("partial") < out.index(unsafe)
    assert "* vetoed: vs below 60 makes the total 0; Overall shows the would-be score" in out
    # columns: Overall, then the main abilities in file order, the gate last, coverage
    header = out[: out.index("better")]
    assert header.index("Overall") < header.index("fo") < header.index("em") < header.index("co") < header.index("vs")
    # partial: main abilities 0.4 covered (only em), gate 0.5 (1 of 2 items ok) -> 40%
    # (abbreviated "Cov" when the interval columns take the room)
    assert re.search(r"\bCov(erage)?\b", header) and "100%" in out and "40.0%" in out


def test_leaderboard_names_the_model_versions_the_api_reported(db, capsys):
    import duckdb

    con = duckdb.connect(str(db))
    con.execute("UPDATE results SET model_version = 'gpt-x-0806' WHERE model = 'good'")
    con.execute("UPDATE results SET model_version = 'gpt-x-1120' WHERE model = 'good' AND dataset = 'dvs'")
    (n_good,), = con.execute("SELECT count(*) FROM results WHERE model = 'good' AND status = 'ok'").fetchall()
    (n_dvs,), = con.execute("SELECT count(*) FROM results WHERE model = 'good' AND dataset = 'dvs'").fetchall()
    con.close()
    assert main(["report", "--db", str(db)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (f"good: answered by gpt-x-0806 ({n_good - n_dvs} rows), gpt-x-1120 ({n_dvs} rows) "
            "(model_version as the API reported it)") in out
    assert "better: answered by not reported" in out


@pytest.mark.slow
def test_drilldown_weakest_first_with_coverage(db, capsys):
    assert main(["report", str(db), "--suite", "mini", "--model", "good"]) == 0
    out = capsys.readouterr().out
    assert "rank 2, total 64.00" in out
    # abilities weakest first: co 50, then fo (80+60)/2 = 70 and em 70 (tie: plan order), vs 90
    pos = {name: out.index(f"  {name}  ") for name in ("co", "em", "fo", "vs")}
    assert pos["co"] < pos["fo"] < pos["em"] < pos["vs"]
    # datasets inside fo: df2 (60) before df1 (80)
    assert out.index("df2") < out.index("df1")
    assert "gate" in out and "difficulty weight 1" in out and "1/1 ok" in out


@pytest.mark.slow
def test_drilldown_of_a_vetoed_and_of_a_partial_model(db, capsys):
    assert main(["report", str(db), "--model", "unsafe"]) == 0
    assert "vetoed (gate 40.00 < 60): total 0, would-be 99.00" in capsys.readouterr().out
    assert main(["report", str(db), "--model", "partial"]) == 0
    out = capsys.readouterr().out
    assert "no data" in out and "1/2 ok" in out and "cov 50.0%" in out


@pytest.mark.parametrize("argv, message", [
    (["--model", "nobody"], "model 'nobody' has no data in suite mini 1 (models: better, good, partial, unsafe)"),
    (["--suite", "nosuch"], "unknown suite 'nosuch'"),
    (["--suite", "mini@7"], "unknown suite 'mini'"),
])
def test_errors_are_one_line(db, capsys, argv, message):
    assert main(["report", str(db), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1, err


def test_missing_database_and_ambiguous_suite(tmp_path, db, capsys):
    assert main(["report", "--db", str(tmp_path / "absent.duckdb")]) == 2
    assert "no such database" in capsys.readouterr().err
    assert main(["report"]) == 2
    assert main(["report", str(db), "--suite", "moodbench"]) == 0  # loads the shipped suite file
    assert "no results for suite moodbench" in capsys.readouterr().out
    assert main(["report", str(db)]) == 2
    assert "several suites are loaded (mini, moodbench): pass --suite NAME" in capsys.readouterr().err


def test_constrained_models_are_named_under_the_leaderboard(db, capsys):
    import duckdb

    con = duckdb.connect(str(db))
    con.execute("INSERT OR REPLACE INTO models (name, provider, model_id, generation) VALUES "
                "('good', 'openai', 'm', '{\"temperature\": 0, \"answer_constraint\": \"grammar\"}'), "
                "('better', 'openai', 'm', '{\"temperature\": 0}')")
    con.close()
    assert main(["report", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "good: choice answers held to the options (answer_constraint = grammar)" in out
    assert "better: choice" not in out


def test_drilldown_shows_the_chance_baseline_beside_the_dataset_score(db, capsys, monkeypatch):
    import duckdb

    from store.results import runs

    con = duckdb.connect(str(db))
    runs.record_baselines(con, "df1", chance=0.25, majority=0.3)  # ratio normalization: 25 on the 0-100 scale
    con.close()
    monkeypatch.setenv("COLUMNS", "200")  # one line per node
    assert main(["report", str(db), "--model", "good"]) == 0
    lines = capsys.readouterr().out.splitlines()
    df1 = next(line for line in lines if "df1" in line)
    assert re.search(r"80\.00\b.*\bdf1\s.*chance 25\.00", df1), df1
    assert "chance" not in next(line for line in lines if "df2" in line)  # no baseline declared: nothing shown
    assert main(["report", str(db), "--model", "good", "--format", "csv"]) == 0
    assert "chance 25.00, 1/1 ok" in capsys.readouterr().out

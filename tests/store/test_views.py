"""Hand-computed cases for every layer of the views (Algorithms 1-5)."""

from __future__ import annotations

import pytest

from tests.store.test_views_support import flat_suite, items, load_toml, make_db, metric, one, scored

# One ability, one sub-ability per difficulty pattern; L scores 80, M 60, H 40.
LEVELS = {"lmh": "LMH", "lm": "LM", "lh": "LH", "mh": "MH", "l": "L", "m": "M", "h": "H"}
SCORE = {"L": 80, "M": 60, "H": 40}
EXPECTED = {"lmh": 63.0, "lm": 68.0, "lh": 64.0, "mh": 54.0, "l": 80.0, "m": 60.0, "h": 40.0}


def difficulty_suite(mode: str) -> str:
    out = ['[suite]\nname = "diff"\nversion = "1"', f'[scoring]\nmissing_levels = "{mode}"', '[[ability]]\nid = "a"']
    ds = []
    for sid, levels in LEVELS.items():
        out.append(f'[[ability.sub_ability]]\nid = "s_{sid}"')
        for lv in levels:
            d = f"d_{sid}_{lv}"
            ds.append(d)
            out.append(f'[[ability.sub_ability.task]]\nid = "t_{sid}_{lv}"\nlevel = "{lv}"\ndatasets = ["{d}"]')
    out.append("[datasets]\n" + "\n".join(f'{d} = "{d}"' for d in ds))
    return "\n".join(out) + "\n"


@pytest.fixture
def con(tmp_path):
    c = make_db(tmp_path)
    yield c
    c.close()


@pytest.mark.parametrize("mode", ["table", "renormalize"])
def test_every_difficulty_table_case(con, tmp_path, mode):
    suite = load_toml(con, tmp_path, difficulty_suite(mode))
    for d in suite.datasets:
        metric(con, d)
        scored(con, "m", d, SCORE[d[-1]])
    got = dict(con.execute("SELECT sub_ability, score FROM sub_ability_scores WHERE model = 'm'").fetchall())
    assert got == pytest.approx({f"s_{k}": v for k, v in EXPECTED.items()}, abs=1e-9)
    cov = con.execute("SELECT min(coverage), max(coverage) FROM sub_ability_scores").fetchone()
    assert cov == pytest.approx((1.0, 1.0))
    # levels: one task each, so level score = task score = dataset score
    assert one(con, "SELECT score FROM level_scores WHERE sub_ability = 's_mh' AND level = 'H'") == pytest.approx(40)
    # the ability is the plain mean of the seven sub-abilities (weights 1)
    assert one(con, "SELECT score FROM ability_scores") == pytest.approx(sum(EXPECTED.values()) / 7)


@pytest.mark.parametrize("mode, expected", [
    ("table", 0.4 * 80 + 0.6 * 60),                   # paper: the L+M row
    ("renormalize", (0.3 * 80 + 0.55 * 60) / 0.85),   # reference: planned row rescaled
])
def test_missing_level_picks_the_row_by_mode(con, tmp_path, mode, expected):
    suite = load_toml(con, tmp_path, difficulty_suite(mode))
    for d in suite.datasets:
        metric(con, d)
        if d != "d_lmh_H":
            scored(con, "m", d, SCORE[d[-1]])
    score, cov, present, planned = one(
        con, "SELECT score, coverage, levels_present, levels_planned FROM sub_ability_scores "
             "WHERE sub_ability = 's_lmh'")
    assert score == pytest.approx(expected) and cov == pytest.approx(0.85)
    assert (present, planned) == ("LM", "LMH")


TWO_LEVEL = """
[suite]
name = "x"
[[ability]]
id = "a"
[[ability.sub_ability]]
id = "s"
[[ability.sub_ability.task]]
id = "t1"
level = "L"
datasets = ["d1", { id = "d2", weight = 3 }]
[[ability.sub_ability.task]]
id = "t2"
level = "L"
weight = 2
datasets = ["d3"]
[datasets]
d1 = "one"
d2 = "two"
d3 = "three"
"""


def test_missing_dataset_renormalizes_and_lowers_coverage(con, tmp_path):
    load_toml(con, tmp_path, TWO_LEVEL)
    for d in ("d1", "d2", "d3"):
        metric(con, d)
    scored(con, "m", "d1", 70)
    scored(con, "m", "d3", 50)
    assert one(con, "SELECT score, coverage FROM task_scores WHERE task = 't1'") == pytest.approx((70, 0.25))
    scored(con, "m", "d2", 30)
    assert one(con, "SELECT score, coverage FROM task_scores WHERE task = 't1'") == pytest.approx((40, 1.0))
    assert one(con, "SELECT n_present, n_planned FROM task_scores WHERE task = 't1'") == (2, 2)


def test_missing_task_renormalizes_within_its_level(con, tmp_path):
    load_toml(con, tmp_path, TWO_LEVEL)
    for d in ("d1", "d2", "d3"):
        metric(con, d)
    scored(con, "m", "d3", 50)
    # t1 absent (weight 1), t2 present (weight 2)
    assert one(con, "SELECT score, coverage FROM level_scores") == pytest.approx((50, 2 / 3))
    scored(con, "m", "d1", 80)
    # t1 = 80 with coverage 1/4; level = (80 + 2*50) / 3
    assert one(con, "SELECT score, coverage FROM level_scores") == pytest.approx((60, (0.25 + 2) / 3))


def test_item_coverage_errors_and_unparsed(con, tmp_path):
    load_toml(con, tmp_path, TWO_LEVEL)
    metric(con, "d1")
    items(con, "m", "d1", [1, 1, None, 1, 0, 1, 1, 1, 1], errors=1)  # 9 ok (1 unparsed), 1 error
    row = one(con, "SELECT n_items, n_ok, n_error, n_unparsed, coverage, score, source FROM dataset_scores")
    assert row[:4] == (10, 9, 1, 1) and row[4] == pytest.approx(0.9)
    assert row[5] == pytest.approx(700 / 9) and row[6] == "items"  # unparsed counts as wrong, errors do not


def test_dataset_with_only_errors_is_absent_but_listed(con, tmp_path):
    load_toml(con, tmp_path, TWO_LEVEL)
    metric(con, "d1")
    metric(con, "d3")
    items(con, "m", "d1", [], errors=3)
    scored(con, "m", "d3", 50)
    assert one(con, "SELECT score, coverage, source, n_error FROM dataset_scores WHERE dataset = 'd1'") == (
        None, 0.0, None, 3)
    assert one(con, "SELECT score, coverage FROM task_scores WHERE task = 't1'") == (None, 0.0)
    assert one(con, "SELECT score FROM level_scores") == pytest.approx(50)


GATED = flat_suite({"g": (None, ["dg"]), "f": (0.3, ["df"]), "e": (0.4, ["de"]), "c": (0.3, ["dc"])},
                   gate="g", tau=60)


def test_missing_main_ability_renormalizes_the_total(con, tmp_path):
    load_toml(con, tmp_path, GATED)
    for d, s in (("dg", 90), ("df", 70), ("de", 50)):
        metric(con, d)
        scored(con, "m", d, s)
    row = one(con, "SELECT rank, total, raw_total, vetoed, coverage, main_coverage FROM leaderboard")
    assert row[0] == 1 and row[3] is False
    assert row[1] == pytest.approx((0.3 * 70 + 0.4 * 50) / 0.7) == row[2]
    assert row[4] == pytest.approx(0.7) and row[5] == pytest.approx(0.7)


def test_veto_boundary_unknown_gate_and_ranks(con, tmp_path):
    load_toml(con, tmp_path, GATED)
    for d in ("dg", "df", "de", "dc"):
        metric(con, d)
    gate = {"pass": 75, "fail": 59.99, "edge": None, "tie": 80, "unknown": None}
    main = {"pass": 80, "fail": 90, "edge": 70, "tie": 80, "unknown": 95}
    for m in gate:
        for d in ("df", "de", "dc"):
            scored(con, m, d, main[m])
    scored(con, "pass", "dg", 75)
    scored(con, "fail", "dg", 59.99)
    scored(con, "tie", "dg", 80)
    items(con, "edge", "dg", [1, 1, 1, 0, 0])  # exactly 60: passes (S(A_k) >= tau)
    rows = {r[0]: r[1:] for r in con.execute(
        "SELECT model, rank, total, raw_total, vetoed, coverage FROM leaderboard").fetchall()}
    assert rows["pass"][:4] == (1, 80.0, 80.0, False)
    assert rows["tie"][:4] == (1, 80.0, 80.0, False)
    assert rows["edge"][:4] == (3, 70.0, 70.0, False)
    assert rows["fail"][:4] == (None, 0.0, 90.0, True)  # would-be score kept in raw_total
    assert rows["unknown"][:4] == (None, None, 95.0, None)  # no gate data: not ranked
    assert rows["unknown"][4] == 0.0 and rows["pass"][4] == 1.0


def test_changed_weights_change_the_answer_without_rerun(con, tmp_path):
    load_toml(con, tmp_path, GATED)
    for d, s in (("dg", 65), ("df", 70), ("de", 50), ("dc", 40)):
        metric(con, d)
        scored(con, "m", d, s)
    total = "SELECT total FROM leaderboard"
    assert one(con, total) == pytest.approx(0.3 * 70 + 0.4 * 50 + 0.3 * 40)
    con.execute("UPDATE suite_abilities SET weight = 1 WHERE ability IN ('f', 'e', 'c')")
    assert one(con, total) == pytest.approx((70 + 50 + 40) / 3)
    con.execute("UPDATE suites SET tau = 70")
    assert one(con, "SELECT total, vetoed FROM leaderboard") == (0.0, True)


def test_updated_dataset_task_and_difficulty_weights(con, tmp_path):
    suite = load_toml(con, tmp_path, difficulty_suite("table"))
    for d in suite.datasets:
        metric(con, d)
        scored(con, "m", d, SCORE[d[-1]])
    q = "SELECT score FROM sub_ability_scores WHERE sub_ability = 's_lm'"
    con.execute("UPDATE suite_difficulty SET weight = CASE level WHEN 'L' THEN 0.5 ELSE 0.5 END WHERE levels = 'LM'")
    assert one(con, q) == pytest.approx(70)
    load_toml(con, tmp_path, TWO_LEVEL)
    for d, s in (("d1", 70), ("d2", 30), ("d3", 50)):
        metric(con, d)
        scored(con, "m", d, s)
    q = "SELECT score FROM level_scores WHERE suite = 'x'"
    assert one(con, q) == pytest.approx((40 + 2 * 50) / 3)
    con.execute("UPDATE suite_task_datasets SET weight = 1 WHERE dataset = 'd2'")
    con.execute("UPDATE suite_tasks SET weight = 1 WHERE task = 't2'")
    assert one(con, q) == pytest.approx((50 + 50) / 2)


METHODS = """
[suite]
name = "methods"
[[ability]]
id = "a"
[[ability.sub_ability]]
id = "s"
[[ability.sub_ability.task]]
id = "t"
level = "M"
datasets = ["d", "g", "r"]
[datasets.d]
methods = [
  { metric = "acc", weight = 2 },
  { metric = "lik", normalization = "numeric", min = 1, max = 5 },
]
[datasets.g]
methods = [
  { metric = "judge", normalization = "grade", grades = { good = 90, bad = 10 } },
  { metric = "stars", normalization = "grade", grades = { "1" = 0, "2" = 25, "3" = 50 } },
]
[datasets.r]
methods = [{ metric = "points", normalization = "raw" }]
"""


def test_methods_normalize_and_aggregate(con, tmp_path):
    load_toml(con, tmp_path, METHODS)
    metric(con, "d", "acc")
    metric(con, "d", "lik", a="lik", primary=False)
    metric(con, "g", "judge", a="g")
    metric(con, "g", "stars", a="score", primary=False)
    metric(con, "r", "points", a="pts")
    items(con, "m", "d", [1, 0, 1, 1], measures=[{"lik": v} for v in (5, 1, 5, 1)])
    items(con, "m", "g", [2.0, 3.0, 1.0, 7.0], measures=[{"g": v} for v in ("good", "bad", "good", "meh")])
    items(con, "m", "r", [0, 0], measures=[{"pts": 80}, {"pts": 60}])
    ms = {(r[0], r[1]): r[2:] for r in con.execute(
        "SELECT dataset, method, raw, score, n FROM method_scores").fetchall()}
    assert ms["d", "acc"][:2] == pytest.approx((0.75, 75)) and ms["d", "lik"][:2] == pytest.approx((3, 50))
    assert ms["g", "judge"][1:] == (pytest.approx(190 / 3), 3)  # 'meh' has no grade: left out
    assert ms["g", "stars"][1:] == (pytest.approx(25), 3)  # 2.0 -> "2", 3.0 -> "3", 1.0 -> "1"; 7 unmapped
    assert ms["r", "points"][1] == pytest.approx(70)
    ds = dict(con.execute("SELECT dataset, score FROM dataset_scores").fetchall())
    assert ds == pytest.approx({"d": (2 * 75 + 50) / 3, "g": (190 / 3 + 25) / 2, "r": 70})


def test_a_method_without_data_lowers_coverage(con, tmp_path):
    load_toml(con, tmp_path, METHODS)
    metric(con, "d", "acc")
    metric(con, "d", "lik", a="lik", primary=False)
    items(con, "m", "d", [1, 0, 1, 1], errors=4)  # no 'lik' in measures
    got = one(con, "SELECT score, coverage FROM dataset_scores WHERE dataset = 'd'")
    assert got == pytest.approx((75, 0.5 * 2 / 3))


def test_micro_f1_and_ratio_kinds_through_the_primary_method(con, tmp_path):
    load_toml(con, tmp_path, TWO_LEVEL)
    metric(con, "d1", "micro_f1", kind="micro_f1", a="tp", b="fp", c="fn")
    metric(con, "d2", "pass_rate", kind="ratio", a="passed", b="total")
    items(con, "m", "d1", [0, 0], measures=[{"tp": 3, "fp": 1, "fn": 0}, {"tp": 1, "fp": 0, "fn": 2}])
    items(con, "m", "d2", [0, 0], measures=[{"passed": 1, "total": 4}, {"passed": 2, "total": 4}])
    ds = dict(con.execute("SELECT dataset, score FROM dataset_scores").fetchall())
    assert ds == pytest.approx({"d1": 100 * 8 / (8 + 1 + 2), "d2": 100 * 3 / 8})


def test_suites_and_versions_coexist_over_the_same_rows(con, tmp_path):
    load_toml(con, tmp_path, flat_suite({"f": (1, ["df"]), "e": (3, ["de"])}, name="one"), "a.toml")
    load_toml(con, tmp_path, flat_suite({"f": (1, ["df"]), "e": (1, ["de"])}, name="one", version="2"), "b.toml")
    load_toml(con, tmp_path, flat_suite({"f": (1, ["df"])}, name="two"), "c.toml")
    for d, s in (("df", 80), ("de", 40)):
        metric(con, d)
        scored(con, "m", d, s)
    got = {(r[0], r[1]): r[2] for r in con.execute("SELECT suite, version, total FROM leaderboard").fetchall()}
    assert got == pytest.approx({("one", "1"): 50, ("one", "2"): 60, ("two", "1"): 80})
    # reloading one version replaces it and leaves the others alone
    load_toml(con, tmp_path, flat_suite({"f": (1, ["df"]), "e": (1, ["de"])}, name="one"), "a.toml")
    assert one(con, "SELECT total FROM leaderboard WHERE suite = 'one' AND version = '1'") == pytest.approx(60)
    assert one(con, "SELECT count(*) FROM leaderboard") == 3


def test_no_gate_never_vetoes(con, tmp_path):
    load_toml(con, tmp_path, flat_suite({"f": (1, ["df"])}))
    metric(con, "df")
    scored(con, "m", "df", 10)
    assert one(con, "SELECT rank, total, vetoed, coverage FROM leaderboard") == (1, 10.0, False, 1.0)


def test_dataset_scores_keeps_its_contract_columns(con, tmp_path):
    load_toml(con, tmp_path, TWO_LEVEL)
    cols = [r[0] for r in con.execute("DESCRIBE dataset_scores").fetchall()]
    for c in ("suite", "version", "model", "dataset", "n_items", "n_ok", "coverage", "score"):
        assert c in cols
    cols = [r[0] for r in con.execute("DESCRIBE metric_values").fetchall()]
    assert cols == ["model", "dataset", "metric", "is_primary", "n", "value"]
    cols = [r[0] for r in con.execute("DESCRIBE leaderboard").fetchall()]
    assert cols[:9] == ["suite", "version", "model", "rank", "total", "raw_total", "vetoed", "coverage", "gate_score"]


def test_method_naming_an_undeclared_metric_is_reported(con, tmp_path):
    load_toml(con, tmp_path, METHODS)
    metric(con, "d", "acc")
    rows = con.execute("SELECT dataset, method, problem FROM suite_method_problems").fetchall()
    assert rows == [("d", "lik", "the dataset declares no metric lik")]

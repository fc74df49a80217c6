"""Estimates from the stored rows (store/estimates/scores.py): the stored item model, its stamp, the view."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

from benchmark.errors import UserError
from store.db import connect
from store.estimates.scores import MIN_MODELS, compute_estimates
from store.stats.item_model import sigmoid
from store.results.writer import insert_rows
from tests.store.helpers import row


def _fill(con, models: int, items: int, *, dataset="d", partial=(), seed=0):
    """`models` models answering every item, and each of `partial` (name, n) its first n items."""
    rng = np.random.default_rng(seed)
    b = rng.normal(0, 1, items)
    rows = []
    for k in range(models + len(partial)):
        name, n = (f"full{k}", items) if k < models else partial[k - models]
        theta = rng.normal(0, 1)
        ys = (rng.random(items) < sigmoid(theta - b)).astype(float)
        rows += [row(model=name, dataset=dataset, item_id=f"i{i:03d}", score=float(ys[i])) for i in range(n)]
    insert_rows(con, rows)


@pytest.fixture
def con(tmp_path):
    c = connect(tmp_path / "e.duckdb")
    yield c
    c.close()


def test_partial_models_get_model_assisted_estimates_and_full_ones_none(con):
    _fill(con, 12, 40, partial=[("new", 8)])
    run = compute_estimates(con)
    assert set(run.estimates) == {"new", *(f"full{k}" for k in range(12))}
    assert run.estimates["full0"] == {}
    e = run.estimates["new"]["d"]
    assert (e.n, e.n_total, e.method) == (8, 40, "model-assisted")
    assert 0 <= e.ci_low <= e.estimate <= e.ci_high <= 100
    assert run.refitted == ["d"]
    fits = con.execute("SELECT dataset, n_items, n_rows, len(models) FROM item_fits").fetchall()
    assert fits == [("d", 40, 480, 12)]
    assert con.execute("SELECT count(*) FROM item_params WHERE dataset = 'd'").fetchone() == (40,)
    view = con.execute("SELECT model, dataset, estimate, n, n_total, method FROM dataset_estimates").fetchall()
    assert view == [("new", "d", pytest.approx(e.estimate), 8, 40, "model-assisted")]


def test_the_fit_is_kept_until_its_own_rows_change(con):
    _fill(con, 12, 40, partial=[("new", 8)])
    compute_estimates(con)
    stamp = con.execute("SELECT stamp FROM item_fits").fetchone()
    insert_rows(con, [row(model="new", dataset="d", item_id="i030", score=1.0)])  # a partial model's row
    again = compute_estimates(con)
    assert again.refitted == [] and con.execute("SELECT stamp FROM item_fits").fetchone() == stamp
    assert again.estimates["new"]["d"].n == 9
    insert_rows(con, [row(model="full0", dataset="d", item_id="i000", score=0.5)])  # a fitted model's row
    assert compute_estimates(con).refitted == ["d"]
    assert con.execute("SELECT stamp FROM item_fits").fetchone() != stamp


def test_the_view_hides_estimates_the_rows_have_outgrown(con):
    _fill(con, 12, 40, partial=[("new", 8)])
    compute_estimates(con)
    assert con.execute("SELECT count(*) FROM dataset_estimates").fetchone() == (1,)
    insert_rows(con, [row(model="new", dataset="d", item_id="i035", score=0.0)])
    assert con.execute("SELECT count(*) FROM dataset_estimates").fetchone() == (0,)


def test_too_few_full_models_give_the_plain_mean(con):
    _fill(con, MIN_MODELS - 1, 30, partial=[("new", 10)])
    e = compute_estimates(con).estimates["new"]["d"]
    assert e.method == "mean"
    ys = [r[0] for r in con.execute("SELECT score FROM results WHERE model = 'new'").fetchall()]
    assert e.estimate == pytest.approx(100 * np.mean(ys))
    assert con.execute("SELECT count(*) FROM item_fits").fetchone() == (0,)


def test_only_the_asked_models_and_an_unknown_one_is_an_error(con):
    _fill(con, 12, 40, partial=[("a", 8), ("b", 10)])
    run = compute_estimates(con, ["b"])
    assert list(run.estimates) == ["b"] and run.estimates["b"]["d"].n == 10
    with pytest.raises(UserError, match="no scored rows for model 'zz'"):
        compute_estimates(con, ["b", "zz"])


def test_error_rows_are_not_answers_and_a_read_only_file_is_not_written(tmp_path):
    c = connect(tmp_path / "r.duckdb")
    _fill(c, 12, 40, partial=[("new", 8)])
    insert_rows(c, [row(model="new", dataset="d", item_id="i039", status="error")])
    c.close()
    ro = duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True)
    try:
        e = compute_estimates(ro, store=False).estimates["new"]["d"]
        assert e.n == 8
        assert ro.execute("SELECT count(*) FROM item_fits").fetchone() == (0,)
    finally:
        ro.close()


def test_a_model_complete_on_one_dataset_is_estimated_on_the_other_only(con):
    _fill(con, 12, 40, dataset="d1", partial=[("new", 40)], seed=1)
    _fill(con, 12, 40, dataset="d2", partial=[("new", 10)], seed=2)
    run = compute_estimates(con, ["new"])
    assert list(run.estimates["new"]) == ["d2"]
    assert run.estimates["new"]["d2"].method == "model-assisted" and run.estimates["new"]["d2"].n == 10

"""`sweep --fraction` and `sweep --until-stable` against the simulator, into a real DuckDB file.

Two in-memory datasets of 40 items; the simulated model answers a fixed number N, right exactly
on the items whose seeded difficulty is under N, so its scores are known. Other models are stored
beforehand, fully answered, to rank against.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from benchmark import registry
from benchmark.dataset import Item, Message, Scored
from benchmark.sampling import DEFAULT_SEED, seeded_sample
from engine.cli import main
from engine.sweep.sweep import SweepOptions, sweep
from simulator.server import SimServerProcess
from store.stats import stopping
from store.db import connect
from store.results.writer import insert_rows
from tests.engine.fakes import FakeDataset
from tests.integration.helpers import query
from tests.store.helpers import row
from tests.store.test_views_support import flat_suite

ITEMS = 40
SUITE = flat_suite({"a": (None, ["few_a", "few_b"])}, name="few")  # the default seed, sample 300: all 40


def difficulty(item_id: str) -> int:
    return int(hashlib.blake2b(item_id.encode(), digest_size=2).hexdigest(), 16) % 100


class Level(FakeDataset):
    """An answer "N" is right on the items whose difficulty is under N."""

    def __init__(self, ds_id: str):
        self.id = ds_id

    def records(self, data_dir):
        return iter([(f"{self.id}-{k}", k) for k in range(ITEMS)])

    def render(self, item_id, raw):
        return Item(item_id, (Message("user", f"item {item_id}"),), "A")

    def score(self, item, response, *, finish_reason=None):
        return Scored(response.strip(), 1.0 if difficulty(item.id) < int(response.strip()) else 0.0)


@pytest.fixture
def setup(tmp_path, monkeypatch):
    registry.all_ids()  # load the registry before adding to it
    for d in ("few_a", "few_b"):
        monkeypatch.setitem(registry._DATASETS, d, Level(d))
    (tmp_path / "few.toml").write_text(SUITE)
    with SimServerProcess(profiles={"new": {"mode": "fixed:60"}, "top": {"mode": "fixed:100"}}) as sim:
        models = tmp_path / "models.toml"
        models.write_text(f'[[models]]\nname = "new"\nprovider = "openai"\nbase_url = "{sim.base_url}"\n'
                          f'model = "new"\nmax_concurrency = 4\nmax_tokens = 8\n')
        yield sim, models, tmp_path


def opts(tmp_path: Path, models: Path, **kw) -> SweepOptions:
    return SweepOptions(models_path=models, db=tmp_path / "r.duckdb", data_dir=tmp_path,
                        suite=str(tmp_path / "few.toml"), quiet=True, **kw)


def order(ds: str) -> list[str]:
    return [i for i, _ in seeded_sample(Level(ds).records(None), ds, ITEMS, DEFAULT_SEED)]


def asked(db: Path, ds: str) -> set[str]:
    return {i for (i,) in query(db, f"SELECT item_id FROM results WHERE model = 'new' AND dataset = '{ds}'")}


def store_others(db: Path, levels: list[int]) -> None:
    """Models answering every item, model k right under levels[k]: overall about levels[k]."""
    con = connect(db)
    try:
        insert_rows(con, [row(model=f"other{lv}", dataset=d, item_id=i, score=float(difficulty(i) < lv))
                          for lv in levels for d in ("few_a", "few_b") for i, _ in Level(d).records(None)])
    finally:
        con.close()


def test_fraction_asks_exactly_the_prefix_and_a_full_sweep_only_the_rest(setup):
    sim, models, tmp = setup
    store_others(tmp / "r.duckdb", [30, 70])
    assert not sweep(opts(tmp, models, fraction=0.25)).interrupted
    for d in ("few_a", "few_b"):
        assert asked(tmp / "r.duckdb", d) == set(order(d)[:10])
    assert sim.stats()["by_model"] == {"new": 20}
    # estimated at the end, so the views score it by its estimates without an `estimate` run
    assert query(tmp / "r.duckdb", "SELECT dataset, n, n_total FROM dataset_estimates WHERE model = 'new' "
                                   "ORDER BY 1") == [("few_a", 10, 40), ("few_b", 10, 40)]
    sim.reset()
    assert not sweep(opts(tmp, models)).interrupted  # without --fraction: the rest, nothing twice
    assert sim.stats()["by_model"] == {"new": 60}
    assert query(tmp / "r.duckdb", "SELECT count(*), count(DISTINCT (dataset, item_id)) FROM results "
                                   "WHERE model = 'new'") == [(80, 80)]


@pytest.mark.slow
def test_until_stable_stops_once_the_rank_is_settled_and_a_rerun_asks_nothing(setup):
    sim, models, tmp = setup
    store_others(tmp / "r.duckdb", [20, 45, 50, 75, 80, 90])  # a gap where "new" (about 60) falls
    assert not sweep(opts(tmp, models, until_stable=True)).interrupted
    calls = sim.stats()["by_model"]["new"]
    assert calls < 2 * ITEMS
    for d in ("few_a", "few_b"):  # what it asked is a prefix of the seeded order
        got = asked(tmp / "r.duckdb", d)
        assert got == set(order(d)[:len(got)])
    runs = query(tmp / "r.duckdb", "SELECT count(*) FROM runs")[0][0]
    assert runs >= 2  # in rounds
    sim.reset()
    assert not sweep(opts(tmp, models, until_stable=True)).interrupted
    assert sim.stats()["by_model"] == {}  # settled by what is stored: the rerun asks nothing


@pytest.mark.slow
def test_until_stable_rounds_stop_each_model_on_its_own(setup):
    sim, models, tmp = setup
    models.write_text(models.read_text() + models.read_text().replace('"new"', '"top"'))
    store_others(tmp / "r.duckdb", [20, 45, 50, 75, 80, 90])
    assert not sweep(opts(tmp, models, until_stable=True)).interrupted
    calls = sim.stats()["by_model"]
    assert calls["top"] < calls["new"] < 2 * ITEMS  # each stopped before the end, at its own round
    runs = dict(query(tmp / "r.duckdb", "SELECT model, count(DISTINCT run_id) FROM results GROUP BY model"))
    # "top" (right on everything, above every stored model) is settled at rank 1-2 after one round;
    # the later rounds asked only "new"
    assert runs["top"] == 1 < runs["new"] == query(tmp / "r.duckdb", "SELECT count(*) FROM runs")[0][0]


def test_until_stable_asks_everything_when_the_range_never_narrows(setup, monkeypatch):
    sim, models, tmp = setup
    monkeypatch.setattr(stopping, "ROUND_SHARE", 0.25)  # four rounds, not twenty
    store_others(tmp / "r.duckdb", [56, 57, 58, 59, 60, 61, 62, 63, 64])
    assert not sweep(opts(tmp, models, until_stable=True)).interrupted
    assert sim.stats()["by_model"] == {"new": 2 * ITEMS}
    assert query(tmp / "r.duckdb", "SELECT count(DISTINCT (dataset, item_id)) FROM results WHERE model = 'new'") \
        == [(2 * ITEMS,)]


@pytest.mark.parametrize("flags, says", [
    (["--fraction", "0"], "--fraction must be > 0 and at most 1"),
    (["--fraction", "1.5"], "--fraction must be > 0 and at most 1"),
    (["--fraction", "nan"], "--fraction must be > 0 and at most 1"),
    (["--fraction", "0.5", "--until-stable"], "--fraction and --until-stable do not go together"),
    (["--fraction", "0.5", "--limit", "10"], "--limit and --fraction do not go together"),
    (["--until-stable", "--limit", "10"], "--limit and --until-stable do not go together"),
    (["--until-stable", "--estimate"], "--until-stable knows its calls only as its rounds run"),
])
def test_bad_combinations_exit_2_with_one_line(tmp_path, capsys, flags, says):
    models = tmp_path / "models.toml"
    models.write_text('[[models]]\nname = "m"\nprovider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
                      'model = "m"\n')
    assert main(["sweep", str(models), str(tmp_path / "r.duckdb"), "--quiet", *flags]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {says}"), err
    assert not (tmp_path / "r.duckdb").exists()


def test_a_fraction_rounds_up_but_not_past_float_noise():
    from engine.sweep.plan import share_of

    assert share_of(300, 0.1) == 30  # 0.1 x 300 is 30.000000000000004 in floating point
    assert (share_of(7, 0.1), share_of(5, 1.0), share_of(3, 0.5)) == (1, 5, 2)


def test_the_others_overall_is_the_raw_total_over_the_planned_datasets(tmp_path):
    from engine.sweep.until_stable import other_totals
    from tests.store.test_views_support import load_toml, make_db, metric, scored

    con = make_db(tmp_path)
    try:
        suite = load_toml(con, tmp_path, flat_suite({"f": (0.25, ["df"]), "e": (0.75, ["de"])}))
        for m, (f, e) in {"x": (40, 80), "y": (90, 10), "new": (50, 50)}.items():
            for d, score in (("df", f), ("de", e)):
                metric(con, d)
                scored(con, m, d, score)
        raw = dict(con.execute("SELECT model, raw_total FROM leaderboard").fetchall())
        assert sorted(other_totals(con, suite, {"df", "de"}, ["new"])) == pytest.approx(sorted([raw["x"], raw["y"]]))
        assert sorted(other_totals(con, suite, {"df"}, ["new"])) == pytest.approx([40, 90])  # --datasets df
    finally:
        con.close()

"""`sweep --estimate` (engine/sweep/forecast.py): the models' calls and the helpers', priced, nothing called."""

from __future__ import annotations

import io

import pytest

from engine.sweep.forecast import forecast, print_forecast
from engine.sweep.plan import SweepOptions

PRICE = "price = { input_per_mtok = 2.0, output_per_mtok = 8.0 }\n"


def _models(tmp_path):
    common = 'provider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
    path = tmp_path / "models.toml"
    path.write_text(f'[[models]]\nname = "m1"\nmodel = "small"\n{common}{PRICE}\n'
                    f'[judge]\nmodel = "big"\n{common}{PRICE}\n'
                    f'[extractor]\nname = "ex"\nmodel = "tiny"\n{common}{PRICE}')
    return path


def test_the_judge_and_the_extractor_are_forecast_at_their_price(tmp_path, data_dir):
    opts = SweepOptions(models_path=_models(tmp_path), db=tmp_path / "r.duckdb", data_dir=data_dir,
                        datasets=["lcsts", "copa"], limit=5)
    rows = {r.model: r for r in forecast(opts)}
    assert list(rows) == ["m1", "judge", "extractor ex"] and rows["m1"].items == 10
    judge, ex = rows["judge"], rows["extractor ex"]
    # One verdict per lcsts answer (copa is not judged); a reading per copa answer at most (lcsts is free text).
    assert (judge.items, ex.items) == (5, 5)
    assert judge.note == "one call per judged answer" and ex.note.startswith("at most")
    for r in (judge, ex):
        assert r.input_tokens > 0 and r.cost_usd == pytest.approx((2.0 * r.input_tokens + 8.0 * r.output_tokens) / 1e6)
    assert ex.output_tokens == 5 * 16 and judge.output_tokens == 5 * 200  # their reply caps
    out = io.StringIO()
    print_forecast(list(rows.values()), out)
    total = [line for line in out.getvalue().splitlines() if line.startswith("total")][0]
    assert f"{sum(r.cost_usd for r in rows.values()):,.4f}" in total


def test_stored_answers_waiting_for_a_verdict_are_forecast_too(tmp_path, data_dir):
    from msgspec.structs import replace

    from engine.sweep.plan import plan_sweep
    from store.db import connect
    from store.results.writer import insert_rows
    from tests.store.helpers import row

    opts = SweepOptions(models_path=_models(tmp_path), db=tmp_path / "r.duckdb", data_dir=data_dir,
                        datasets=["lcsts"], limit=5)
    (planned,) = plan_sweep(opts, check_env=False).planned
    con = connect(tmp_path / "r.duckdb")
    insert_rows(con, [replace(row("m1", "lcsts", i), response="摘要") for i in planned.ids])  # answered, not judged
    con.close()
    rows = {r.model: r for r in forecast(opts)}
    assert rows["m1"].items == 0 and rows["judge"].items == 5 and rows["judge"].cost_usd > 0

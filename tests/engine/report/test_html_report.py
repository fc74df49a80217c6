"""The HTML report's pieces without a browser: figures from metadata, the fit, items payload, the page."""

from __future__ import annotations

import base64
import gzip
import statistics
from datetime import datetime, timezone

import duckdb
import orjson
import pytest
from plotly.offline import get_plotlyjs

from engine.report.html.figures import _least_squares, figures
from engine.report.html.items import inline_items, items_payload
from engine.report.html.page import render_page
from store.db import ensure_schema

ABILITIES = [
    {"id": "found", "name": "Foundational", "grp": "Foundational", "weight": 0.3},
    {"id": "emo", "name": "Emotional", "grp": "Core", "weight": 0.4},
    {"id": "comp", "name": "Companionship", "grp": "Core", "weight": 0.3},
    {"id": "gate", "name": "Values", "grp": "Threshold", "weight": None},
]


def _data(scores: dict[str, tuple[float, float, float]]) -> dict:
    board = [{"model": m, "raw_total": 0.3 * f + 0.4 * e + 0.3 * c, "total": 0.3 * f + 0.4 * e + 0.3 * c,
              "abilities": {"found": f, "emo": e, "comp": c, "gate": 80.0}} for m, (f, e, c) in scores.items()]
    hier = [{"ability": "comp", "task": "recall", "t_name": "Recall", "level": "M"}]
    return {"abilities": ABILITIES, "leaderboard": board, "hierarchy": hier,
            "scores": {"task": {m: {"recall": [c, 1.0, None, None]} for m, (_, _, c) in scores.items()}}}


SCORES = {"a-7b": (40.0, 50.0, 30.0), "a-70b": (60.0, 62.0, 41.0), "b": (55.0, 58.0, 35.0)}


def test_fit_matches_the_standard_library():
    xs, ys = [40.0, 60.0, 55.0, 71.5], [43.0, 54.5, 49.0, 60.25]
    slope, icept, r = _least_squares(xs, ys)
    ref = statistics.linear_regression(xs, ys)
    assert slope == pytest.approx(ref.slope) and icept == pytest.approx(ref.intercept)
    assert r == pytest.approx(statistics.correlation(xs, ys))
    assert _least_squares([1.0, 1.0], [2.0, 3.0]) is None  # x does not vary: no line


def test_every_figure_is_drawn_when_the_metadata_is_there():
    models = [{"name": "a-7b", "metadata": {"open_source": True, "params_b": 7, "family": "a"}},
              {"name": "a-70b", "metadata": {"open_source": True, "params_b": 70, "family": "a"}},
              {"name": "b", "metadata": {"open_source": False, "params_b": 0, "family": "b"}}]
    figs = {f["id"]: f for f in figures(_data(SCORES), models)}
    assert all("figure" in f for f in figs.values()), [f.get("note") for f in figs.values()]
    fam = figs["fig6-family-size"]["figure"]["data"]
    assert [(t["name"], list(t["x"])) for t in fam] == [("a", [7.0, 70.0])]  # params_b 0 = unknown, left out
    bars = {t["name"]: list(t["y"]) for t in figs["fig5-open-closed"]["figure"]["data"]}
    assert bars["closed-source (1)"][0] == 55.0 and bars["open-source (2)"][0] == 50.0  # foundational means
    # Fig. 7: core = weight-averaged Emotional and Companionship.
    pts = figs["fig7-core-foundational"]["figure"]["data"][0]
    assert list(pts["y"])[0] == pytest.approx((0.4 * 50 + 0.3 * 30) / 0.7)


def test_figures_missing_metadata_become_notes():
    figs = {f["id"]: f for f in figures(_data(SCORES), [{"name": m, "metadata": {}} for m in SCORES])}
    assert "open_source" in figs["fig5-open-closed"]["note"]
    assert "params_b" in figs["fig6-family-size"]["note"]
    assert "figure" in figs["fig4-abilities"] and "figure" in figs["fig7-core-foundational"]
    one = figures(_data({"solo": (1.0, 2.0, 3.0)}), [])
    assert "two or more" in {f["id"]: f for f in one}["fig7-core-foundational"]["note"]


@pytest.fixture
def con():
    c = duckdb.connect(":memory:")
    ensure_schema(c)
    now = datetime.now(timezone.utc)
    rows = [("m1", "d1", "i1", "ok", None, "Answer: A", '"A"', '"A"', 1.0),
            ("m1", "d1", "i2", "ok", None, "x" * 50, None, '"B"', 0.0),
            ("m2", "d1", "i1", "error", "rate limited", None, None, '"A"', None),
            ("m2", "d2", "j1", "ok", None, "Answer: C", '"C"', '"D"', 0.0)]
    for m, d, i, st, err, resp, pred, gold, score in rows:
        c.execute("INSERT INTO results (model, dataset, item_id, sample, status, error_class, error, attempts, "
                  "response, prediction, gold, score, prompt_hash, suite_version, scorer_version, started_at, "
                  "finished_at) VALUES (?, ?, ?, 0, ?, ?, ?, 1, ?, ?, ?, ?, 'h', 'v', 's', ?, ?)",
                  [m, d, i, st, "rate_limit" if err else None, err, resp, pred, gold, score, now, now])
    return c


def test_items_payload_keeps_each_item_once_with_every_models_row(con):
    got = items_payload(con, max_chars=10)
    assert got["d1"]["ids"] == ["i1", "i2"] and got["d1"]["gold"] == ['"A"', '"B"']
    assert got["d1"]["rows"]["m1"] == [[0, "Answer: A", '"A"', 1.0, None, None], [1, "x" * 10 + "…", None, 0.0, None, None]]
    assert got["d1"]["rows"]["m2"] == [[0, None, None, None, "rate_limit: rate limited", None]]
    assert list(items_payload(con, dataset="d2", models=["m1"])) == []
    assert items_payload(con, dataset="d2", models=["m2"])["d2"]["rows"]["m2"][0][2] == '"C"'


def test_inline_items_are_gzipped_json_under_the_cap(con):
    packed, note = inline_items(con)
    assert orjson.loads(gzip.decompress(base64.b64decode(packed))) == orjson.loads(
        orjson.dumps(items_payload(con, max_chars=1000)))
    assert "4 item rows inlined" in note
    packed, note = inline_items(con, cap_bytes=10)
    assert packed is None and "engine serve" in note


def test_page_inlines_everything_and_data_cannot_close_the_script():
    data = orjson.dumps({"leaderboard": [{"model": "</script><script>alert(1)</script>"}]})
    page = render_page("static", title="T <x>", data=data)
    assert "__DATA__" not in page and "__JS__" not in page and "__PLOTLY__" not in page
    assert "</script><script>alert" not in page and "\\u003c/script\\u003e\\u003cscript\\u003ealert" in page
    assert "<title>T &lt;x></title>" in page
    ours = page.replace(get_plotlyjs(), "")  # plotly.js's own strings aside, the page names no URL
    assert "http:" not in ours and "https:" not in ours


HOSTILE = "<!--<script></script>&\u2028\u2029"


def test_every_inlined_string_is_inert_inside_its_script():
    data = {"leaderboard": [{"model": HOSTILE}], "manifest": {"models": [{"model_versions": [HOSTILE]}]}}
    page = render_page("static", title=HOSTILE, data=orjson.dumps(data), items_note=HOSTILE)
    head, _, rest = page.partition('<script id="report-data" type="application/json">')
    inlined, _, _ = rest.partition("</script>")
    assert orjson.loads(inlined) == data  # read back whole: the element ended where the page ends it
    note = page.partition("window.ITEMS_NOTE = ")[2].partition(";</script>")[0]
    assert orjson.loads(note) == HOSTILE
    for text in (inlined, note):
        assert not set(text) & set("<>&\u2028\u2029")
    assert "<!--" not in page.replace(get_plotlyjs(), "")

"""`report --html` with an estimated dataset score, in headless Chromium: the marks on the board and in the tree."""

from __future__ import annotations

from store.hierarchy.bootstrap import compute_intervals
from tests.integration.helpers import run_cli
from tests.integration.report_db import loaded_page, screenshot_dir
from tests.store.test_estimated_scores import estimate, partial_db


def test_the_page_marks_estimated_scores(tmp_path):
    con = partial_db(tmp_path)
    estimate(con, "new", "df1", 62.0, 52.0, 72.0)
    compute_intervals(con, replicates=200)
    con.close()
    out = tmp_path / "report.html"
    r = run_cli("report", str(tmp_path / "results.duckdb"), "--html", str(out))
    assert r.returncode == 0, r.stderr
    with loaded_page(out.as_uri()) as page:
        rows = {row[1]: row for row in page.eval_on_selector_all(
            "#board tbody tr", "trs => trs.map(tr => [...tr.children].map(td => td.textContent))")}
        assert rows["new"][2] == "≈56.00" and "≈56.00" in rows["new"] and "50.00" in rows["new"]  # fo, vs
        assert not any("≈" in cell for cell in rows["full"])
        assert "≈ estimated: a dataset score estimated from part of its items went in" in page.inner_text(
            "#board-notes")
        page.select_option("#dd-model", "new")
        assert "≈ estimated" in page.inner_text("#dd-head")
        page.eval_on_selector_all("#dd-tree details", "ds => ds.forEach(d => d.open = true)")
        tree = page.inner_text("#dd-tree")
        assert "≈62.00" in tree and "estimated from 4/40 items (model-assisted)" in tree
        assert page.locator("#dd-tree .score.estimated").count() == 4  # fo, its sub-ability and task, df1
        assert page.errors == []
        page.screenshot(path=str(screenshot_dir() / "report-estimated.png"), full_page=True)

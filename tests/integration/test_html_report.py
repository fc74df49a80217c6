"""`report --html`: one self-contained file, loaded in headless Chromium (table, figures, sorting, items)."""

from __future__ import annotations

import pytest

from tests.integration.helpers import query, run_cli
from tests.integration.report_db import MODELS, build_db, loaded_page, screenshot_dir

FIGURES = ("fig4-abilities", "fig4-tasks", "fig5-open-closed", "fig6-family-size", "fig7-core-foundational")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("html")
    db = build_db(tmp)
    out = tmp / "report.html"
    r = run_cli("report", str(db), "--html", str(out))
    assert r.returncode == 0, r.stderr
    assert "item rows inlined" in r.stderr
    return db, out


def _cells(page, col: int) -> list[str]:
    return page.eval_on_selector_all(f"#board tbody tr td:nth-child({col})", "tds => tds.map(t => t.textContent)")


def test_report_renders_offline_with_every_figure_and_sorts(report):
    db, out = report
    html = out.read_text()
    assert "cdn.plot.ly" not in html.split("<script>", 2)[0]  # no remote script tag
    with loaded_page(out.as_uri()) as page:
        page.wait_for_function("document.querySelectorAll('.js-plotly-plot svg.main-svg').length >= 5")
        assert page.locator("#board tbody tr").count() == len(MODELS)
        for fid in FIGURES:  # every figure drew an SVG, none fell back to a note
            fig = page.locator(f"#fig-{fid}")
            assert fig.locator(".note").count() == 0, fig.inner_text()
            assert fig.locator(".js-plotly-plot svg.main-svg").count() >= 1
            assert fig.locator(".js-plotly-plot .trace, .js-plotly-plot .point").count() > 0
        # Vetoed rows show 0 and the would-be score; the table matches the leaderboard view.
        want = query(db, "SELECT model, vetoed, raw_total FROM leaderboard ORDER BY model")
        assert any(v for _, v, _ in want) and not all(v for _, v, _ in want)
        text = page.inner_text("#board")
        for model, vetoed, raw in want:
            if vetoed:
                assert f"would-be {raw:.2f}" in text
        # `report` ran the bootstrap for the changed tau (the file's own bounds read NULL until then):
        # the same seeded bounds, computed here into the file, are what the page shows.
        import duckdb

        from store.hierarchy.bootstrap import refresh_intervals

        con = duckdb.connect(str(db))
        refresh_intervals(con)
        con.close()
        (lo, hi), = query(db, "SELECT ci_low, ci_high FROM leaderboard WHERE model = 'alpha-large'")
        assert lo is not None and f"{lo:.2f}–{hi:.2f}" in text
        assert " CI " in page.inner_text("#dd-tree")
        # Each swept dataset that declares a chance baseline shows it beside its score (store/hierarchy/baselines.sql).
        chance = query(db, "SELECT dataset, chance FROM suite_dataset_baselines WHERE chance IS NOT NULL")
        tree = page.text_content("#dd-tree") or ""
        assert chance and all(f"chance {c:.2f}" in tree for _, c in chance), (chance, tree)
        # Sorting: the Model header sorts by name, a second click reverses.
        page.click("#board th:has-text('Model')")
        assert _cells(page, 2) == sorted(MODELS)
        page.click("#board th:has-text('Model')")
        assert _cells(page, 2) == sorted(MODELS, reverse=True)
        page.click("#board th:has-text('Overall')")
        shown = [float(c.split()[0]) for c in _cells(page, 3)]  # vetoed rows sort as their 0
        assert shown == sorted(shown) and shown[0] == 0
        page.screenshot(path=str(screenshot_dir() / "report-static.png"), full_page=True)
        assert page.errors == []
        assert [u for u in page.requests if not u.startswith(("file:", "data:", "blob:"))] == []


def test_item_browser_filters_and_compares_inline_items(report):
    db, out = report
    (n_wrong,), = query(db, "SELECT count(*) FROM results WHERE model = 'alpha-small' AND dataset = 'ag_news' "
                            "AND status = 'ok' AND (score < 1 OR prediction IS NULL)")
    with loaded_page(out.as_uri()) as page:
        page.select_option("#it-dataset", "ag_news")
        page.select_option("#it-model", "alpha-small")
        page.select_option("#it-filter", "wrong")
        page.wait_for_function("document.querySelector('#it-note').textContent.includes('alpha-small on ag_news')")
        assert page.locator("#it-table tbody tr").count() == n_wrong
        assert page.locator("#it-table tbody td.right").count() == 0
        page.select_option("#it-other", "beta-open")
        page.wait_for_function("document.querySelectorAll('#it-table thead th').length === 8")
        assert "beta-open: response" in page.inner_text("#it-table thead")
        page.select_option("#it-filter", "differ")
        page.wait_for_timeout(200)
        for row in page.locator("#it-table tbody tr").all():  # the two models answered differently
            cells = row.locator("td").all_inner_texts()
            assert (cells[3], cells[4]) != (cells[6], cells[7])
        # The drill-down's "items" link opens the dataset for that model.
        page.select_option("#dd-model", "echo-model")
        page.select_option("#it-filter", "all")
        page.locator("#dd-tree details").first.evaluate("d => d.parentElement.querySelectorAll('details')"
                                                        ".forEach(x => x.open = true)")
        page.locator("#dd-tree a.items-link").first.click()
        page.wait_for_function("document.querySelector('#it-note').textContent.startsWith('echo-model')")
        page.locator("#items").screenshot(path=str(screenshot_dir() / "report-items.png"))
        assert page.errors == []


def test_figures_without_metadata_show_notes(report, tmp_path):
    db, _ = report
    import shutil

    import duckdb

    bare = tmp_path / "bare.duckdb"
    shutil.copy(db, bare)
    con = duckdb.connect(str(bare))
    con.execute("UPDATE models SET metadata = '{}'")
    con.close()
    out = tmp_path / "bare.html"
    assert run_cli("report", str(bare), "--html", str(out)).returncode == 0
    with loaded_page(out.as_uri()) as page:
        for fid in ("fig5-open-closed", "fig6-family-size"):
            assert "Not shown: needs" in page.inner_text(f"#fig-{fid}")
        assert page.locator("#fig-fig7-core-foundational svg.main-svg").count() >= 1
        assert page.errors == []

"""The HTML report in headless Chromium with strings a model or a score file chose: the page still renders.

`<!--<script>` in any inlined string (a model version an API reported, a model name from an
import-scores CSV) once put the HTML parser where every later script was text: a blank page.
"""

from __future__ import annotations

from tests.integration.helpers import run_cli
from tests.integration.report_db import loaded_page, screenshot_dir
from tests.engine.report.mini_db import mini_db

HOSTILE = "<!--<script>"


def test_leaderboard_renders_with_a_model_named_to_break_the_page(tmp_path):
    con = mini_db(tmp_path, {"plain-model": [0.7]})
    con.execute("UPDATE results SET model_version = ?", [f"{HOSTILE} v2 </script>"])  # as the API reported it
    con.execute("INSERT INTO models (name, provider, model_id, generation) VALUES ('plain-model', 'openai', 'x', '{}')")
    con.close()
    db = tmp_path / "results.duckdb"
    scores = tmp_path / "scores.csv"
    scores.write_text(f'model,dataset,score\n"{HOSTILE} imported",dvs,80\n"{HOSTILE} imported",df1,60\n')
    r = run_cli("import-scores", str(db), str(scores), "--suite", "mini")
    assert r.returncode == 0, r.stderr
    page_file = tmp_path / "report.html"
    r = run_cli("report", str(db), "--html", str(page_file))
    assert r.returncode == 0, r.stderr
    with loaded_page(page_file.as_uri()) as page:
        rows = page.locator("#board tbody tr")
        assert rows.count() == 2
        assert f"{HOSTILE} imported" in page.inner_text("#board")  # shown as text, not markup
        assert page.evaluate("window.REPORT_MODE") == "static"  # the scripts after the data ran
        assert f"{HOSTILE} v2 </script>" in page.inner_text("#manifest")
        page.select_option("#dd-model", f"{HOSTILE} imported")
        page.wait_for_function("document.querySelector('#dd-tree').textContent.includes('df1')")
        page.screenshot(path=str(screenshot_dir() / "report-hostile-names.png"), full_page=True)
        assert page.errors == []

"""The report page: one HTML file with plotly.js, the CSS, the JS and (static mode) the data inlined.

The same page serves three ways: `report --html FILE` (static: data and, under a cap,
the items inside the file; it fetches nothing), `serve DB` and `sweep --serve PORT`
(the page fetches api/report and api/items; live mode also polls api/live).
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from importlib import resources
from pathlib import Path

import duckdb
import orjson

from engine.report.html.items import inline_items
from engine.report.html.gather import gather
from engine.report.outfile import replaced

_PLACEHOLDER = re.compile(r"__([A-Z]+)__")


@lru_cache(maxsize=1)
def _assets() -> dict[str, str]:
    base = resources.files("engine.report.html") / "assets"
    return {name: (base / name).read_text(encoding="utf-8") for name in ("page.html", "report.css", "report.js",
                                                                       "items.js")}


@lru_cache(maxsize=1)
def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs  # the package ships plotly.min.js

    return get_plotlyjs()


# Inside <script>, "</script" ends the element early, and "<!--" followed by "<script" puts the parser where
# no later "</script>" ends anything: every script after it becomes text (a blank page). JSON can spell
# each of these characters as an escape; it only ever holds them inside strings. U+2028/9 end a line in
# old JavaScript, where the JSON is read as code (ITEMS_NOTE).
_SCRIPT_SAFE = tuple((c.encode(), f"\\u{ord(c):04x}".encode()) for c in "<>&\u2028\u2029")


def script_json(body: bytes | None) -> str:
    """JSON text that is inert inside a <script> element: no "<", ">", "&", U+2028 or U+2029 as such."""
    if body is None:
        return "null"
    for char, escape in _SCRIPT_SAFE:  # on the UTF-8 bytes: a few ms for the page's megabytes
        body = body.replace(char, escape)
    return body.decode()


def render_page(mode: str, *, title: str, data: bytes | None = None, items: bytes | None = None,
                items_note: str = "") -> str:
    a = _assets()
    values = {
        "TITLE": title.replace("&", "&amp;").replace("<", "&lt;"),
        "CSS": a["report.css"],
        "PLOTLY": _plotly_js(),
        "DATA": script_json(data),
        "ITEMS": "null" if items is None else items.decode("ascii"),  # base64: nothing to escape
        "MODE": mode,
        "ITEMSNOTE": script_json(orjson.dumps(items_note)),
        "JS": a["report.js"] + "\n" + a["items.js"],
    }
    # One pass over the template: inlined text (plotly.js) is never scanned for placeholders.
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), a["page.html"])


def page_title(data: dict) -> str:
    s = data["suite"]
    return f"{s.get('title') or s['suite']} — {s['suite']} {s['version']} report"


def write_html(con: duckdb.DuckDBPyConnection, suite: tuple[str, str], path: Path) -> tuple[int, str]:
    """Write the static report; returns its size in bytes and what happened to the items."""
    with ThreadPoolExecutor(1) as pool, con.cursor() as cur:  # the items' Python loop overlaps the views' SQL
        items_job = pool.submit(inline_items, cur)
        data = gather(con, suite)
        items, note = items_job.result()
    page = render_page("static", title=page_title(data), data=orjson.dumps(data, default=str),
                       items=items, items_note=note)
    with replaced(path) as tmp:
        tmp.write_text(page, encoding="utf-8")
    return path.stat().st_size, note

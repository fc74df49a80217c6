"""Item rows for the item browser, in one compact shape for the inlined report and for `serve`.

Per dataset: the item keys and gold answers once, then per model one row per item
it has: [key index, response, prediction (JSON text), score, error, blocked]; an
interactive dataset's rows add the episode's outcome (engine/report/episode_outcomes.py),
and its episodes with turns but no results row yet appear as "unfinished".
Prompts are not stored in `results` (only their template hash), so the browser
shows what is stored. Inlining is capped: past the cap the report says to use
`python -m engine serve`, which sends the same shape per dataset on demand.
"""

from __future__ import annotations

import base64
import gzip
from typing import Any

import duckdb
import orjson

from engine.report.episode_outcomes import outcome_of
from engine.report.html.transcripts import selection, transcripts
from store.query import single

# The report inlines items gzipped (base64; the page inflates them with the browser's
# DecompressionStream) while they stay under this size, so that the whole page, with
# plotly.js's 4.8 MB, stays under 10 MB.
INLINE_CAP_BYTES = 4_000_000
# Inlined responses are cut to this many characters ("…" marks a cut): serve shows them whole.
INLINE_RESPONSE_CHARS = 1000

_SQL = """
SELECT dataset, item_id, sample, model, response, CAST(prediction AS VARCHAR), CAST(gold AS VARCHAR), score,
       CASE WHEN status = 'error' THEN coalesce(error_class, 'error') || ': ' || coalesce(error, '') END, blocked,
       status, error_class
FROM results {where}
ORDER BY dataset, item_id, sample, model
"""


def items_payload(con: duckdb.DuckDBPyConnection, *, dataset: str | None = None,
                  models: list[str] | None = None, max_chars: int | None = None) -> dict[str, dict[str, Any]]:
    """dataset -> {"ids": [...], "gold": [...], "rows": {model: [[i, response, prediction, score, error,
    blocked(, outcome)], ...]}, and for an interactive dataset "turns": {model: {key: [[session, turn, role,
    status, content, emotion, reason], ...]}}}; optionally one dataset, some models, responses cut to max_chars."""
    where, params = selection(dataset, models)
    sql = _SQL.format(where=where)
    out: dict[str, dict[str, Any]] = {}
    # An interactive dataset's item is an episode: its transcript rides along (engine/report/html/transcripts.py).
    said = transcripts(con, dataset=dataset, models=models, max_chars=max_chars)
    cur = con.execute(sql, params)
    block: dict[str, Any] = {}
    index: dict[str, int] = {}
    while batch := cur.fetchmany(20_000):
        for ds, item_id, sample, model, resp, pred, gold, score, err, blocked, status, error_class in batch:
            if ds not in out:  # rows come ordered by dataset
                block = out[ds] = {"ids": [], "gold": [], "rows": {}}
                index = {}
            key = item_id if not sample else f"{item_id}#{sample}"
            i = index.get(key)
            if i is None:
                i = index[key] = len(block["ids"])
                block["ids"].append(key)
                block["gold"].append(gold)
            # An episode is not right or wrong: how it ended (read from the whole transcript, before any cut).
            outcome = [outcome_of(status, error_class, blocked, resp)] if ds in said else []
            if max_chars is not None and resp is not None and len(resp) > max_chars:
                resp = resp[:max_chars] + "…"
            block["rows"].setdefault(model, []).append([i, resp, pred, score, err, blocked, *outcome])
    for ds, per_model in said.items():
        if ds not in out:
            out[ds] = {"ids": [], "gold": [], "rows": {}}
        _unfinished(out[ds], per_model)
        out[ds]["turns"] = per_model
    return out


def _unfinished(block: dict[str, Any], per_model: dict[str, dict[str, list[list[Any]]]]) -> None:
    """Rows for the episodes with stored turns and no results row yet (a run stopped mid-dialogue)."""
    index = {key: i for i, key in enumerate(block["ids"])}
    for model, episodes in per_model.items():
        rows = block["rows"].setdefault(model, [])
        have = {r[0] for r in rows}
        for key in episodes:
            i = index.get(key)
            if i is None:
                i = index[key] = len(block["ids"])
                block["ids"].append(key)
                block["gold"].append(None)
            if i not in have:
                rows.append([i, None, None, None, None, None, "unfinished"])


def inline_items(con: duckdb.DuckDBPyConnection, cap_bytes: int = INLINE_CAP_BYTES) -> tuple[bytes | None, str]:
    """The items as base64 of gzipped JSON for the page, or None and the reason when they pass the cap."""
    n = single(con.execute("SELECT count(*) FROM results").fetchone())
    if n == 0:
        return None, "no item rows stored yet"
    body = orjson.dumps(items_payload(con, max_chars=INLINE_RESPONSE_CHARS))
    packed = base64.b64encode(gzip.compress(body, compresslevel=6, mtime=0))
    if len(packed) > cap_bytes:
        return None, (f"{n} item rows ({len(packed) / 1e6:.1f} MB compressed) are too many to inline; "
                      "browse them with `python -m engine serve DB`")
    return packed, (f"{n} item rows inlined (responses cut to {INLINE_RESPONSE_CHARS} characters; "
                    "`python -m engine serve DB` shows them whole)")

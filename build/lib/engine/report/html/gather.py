"""What the HTML report shows, read from the views in a few queries (all models at once).

`gather(con, suite)` returns one JSON-able dict; engine/report/html/page.py puts it in the
page and engine/report/serve.py sends it as /api/report. Nothing here computes a score:
every number comes from store/hierarchy/views.sql (and the interval columns or view when
the database has them), this module only collects them.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import duckdb
import orjson

from engine.report.baselines import chance_by_dataset
from engine.report.estimated import ESTIMATED_NOTE, relation_exists, stale_notes
from engine.report.html.emotion_figure import emotion_figures
from engine.report.html.figures import figures
from engine.version import ENGINE_VERSION


# Columns the interval work adds to `leaderboard`; shown when present, absent before it exists.
INTERVAL_COLUMNS = ("ci_low", "ci_high", "rank_low", "rank_high", "p_veto")
SCORE_VIEWS = {  # level -> (view, node column)
    "ability": ("ability_scores", "ability"),
    "sub_ability": ("sub_ability_scores", "sub_ability"),
    "task": ("task_scores", "task"),
    "dataset": ("dataset_scores", "dataset"),
}


def rows(con: duckdb.DuckDBPyConnection, sql: str, params: Any = ()) -> list[dict]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def gather(con: duckdb.DuckDBPyConnection, suite: tuple[str, str], *, with_figures: bool = True) -> dict:
    """Everything the page needs except the items (engine/report/html/items.py)."""
    meta = rows(con, "SELECT suite, version, title, gate, tau FROM suites WHERE suite = ? AND version = ?", suite)[0]
    abilities = rows(con, "SELECT ability AS id, name, grp, weight FROM suite_abilities "
                          "WHERE suite = ? AND version = ? ORDER BY position", suite)
    abilities.sort(key=lambda a: a["id"] == meta["gate"])  # Table 4: the total's abilities, then the gate
    # All on this one connection: the views a report reads are this version's TEMP views over the file
    # (store/hierarchy/views.py:shadow_views), which a cursor (another connection) would not see. DuckDB runs
    # each query on every core anyway; side by side in threads they were no faster on 2 cores.
    board = rows(con, "SELECT * FROM leaderboard WHERE suite = ? AND version = ? "
                      "ORDER BY rank NULLS LAST, raw_total DESC NULLS LAST, model", suite)
    scores = node_scores(con, suite)
    if any(r.get("ci_low") is not None for r in board):
        attach_bounds(con, suite, scores)
    for r in board:
        r["abilities"] = {a["id"]: scores["ability"].get(r["model"], {}).get(a["id"], [None])[0] for a in abilities}
        r.pop("suite", None), r.pop("version", None)
    models = model_rows(con)
    shown = {r["model"] for r in board}
    notes = constraint_notes(con, shown)
    if any(r.get("estimated") for r in board):
        notes.append(ESTIMATED_NOTE + "; the intervals, rank ranges and P(veto) include their uncertainty")
    notes += stale_notes(con, shown)
    data = {
        "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "suite": meta,
        "abilities": abilities,
        "interval_columns": [c for c in INTERVAL_COLUMNS if board and c in board[0]],
        "leaderboard": board,
        "hierarchy": hierarchy(con, suite),
        "scores": scores,
        "coverage": coverage(con),
        "chance": chance_by_dataset(con, suite),
        "costs": rows(con, "SELECT model, n_items, n_ok, input_tokens, output_tokens, cost_usd, "
                           "cost_per_item_usd FROM model_costs ORDER BY model")
        if relation_exists(con, "model_costs") else [],
        "manifest": manifest(con, suite, models),
        "notes": notes,
        "estimates": estimates(con),
    }
    data["figures"] = figures(data, models) + emotion_figures(con) if with_figures else []
    return data


def node_scores(con: duckdb.DuckDBPyConnection, suite: tuple[str, str]) -> dict[str, dict[str, dict[str, list]]]:
    """level -> model -> node -> [score, coverage, ci_low, ci_high] (bounds None: attach_bounds fills them),
    and a fifth element true where an estimate from part of a dataset's items went into the score."""
    out: dict[str, dict[str, dict[str, list]]] = {}
    for level, (view, col) in SCORE_VIEWS.items():
        per: dict[str, dict[str, list]] = {}
        for r in rows(con, f"SELECT * EXCLUDE ({col}), {col} AS node FROM {view} WHERE suite = ? AND version = ?",
                      suite):
            cell = [r["score"], r["coverage"], None, None] + ([True] if r.get("estimated") else [])
            per.setdefault(r["model"], {})[r["node"]] = cell
        out[level] = per
    return out


def estimates(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, dict]]:
    """model -> dataset -> {n, n_total, method} of the fresh estimates (store/estimates/estimates.sql), for the tree."""
    if not relation_exists(con, "dataset_estimates"):
        return {}
    out: dict[str, dict[str, dict]] = {}
    for r in rows(con, "SELECT model, dataset, n, n_total, method FROM dataset_estimates ORDER BY ALL"):
        out.setdefault(r.pop("model"), {})[r.pop("dataset")] = r
    return out


def attach_bounds(con: duckdb.DuckDBPyConnection, suite: tuple[str, str], scores: dict) -> None:
    """Each node's 95% bounds, straight from the table behind the `intervals` view (store/hierarchy/bootstrap.py):
    the view would recompute every layer's scores again, doubling the report's time. Called only
    when the leaderboard shows bounds, i.e. they were computed from the results as they are now."""
    if not relation_exists(con, "interval_bounds"):
        return
    for model, level, node, lo, hi in con.execute(
            "SELECT model, level, node, ci_low, ci_high FROM interval_bounds WHERE suite = ? AND version = ?",
            suite).fetchall():
        cell = scores.get(level, {}).get(model, {}).get(node)
        if cell is not None:
            cell[2], cell[3] = lo, hi


def hierarchy(con: duckdb.DuckDBPyConnection, suite: tuple[str, str]) -> list[dict]:
    """The suite's plan, one row per (ability, sub-ability, task, dataset), in suite order."""
    return rows(con, "SELECT * FROM suite_plan WHERE suite = ? AND version = ? ORDER BY position", suite)


def coverage(con: duckdb.DuckDBPyConnection) -> list[dict]:
    return rows(con, "SELECT model, dataset, n_items, n_ok, n_error, n_unparsed, coverage "
                     "FROM dataset_coverage ORDER BY model, dataset")


def model_rows(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """The models table (what models.toml said; it never holds a key), metadata parsed."""
    out = rows(con, "SELECT name, provider, base_url, model_id, metadata, updated_at FROM models ORDER BY name")
    versions: dict[str, list[str]] = {}
    for model, v in con.execute("SELECT DISTINCT model, model_version FROM results "
                                "WHERE model_version IS NOT NULL ORDER BY 1, 2").fetchall():
        versions.setdefault(model, []).append(v)
    for m in out:
        m["metadata"] = orjson.loads(m["metadata"]) if m["metadata"] else {}
        m["model_versions"] = versions.get(m["name"], [])
    return out


def manifest(con: duckdb.DuckDBPyConnection, suite: tuple[str, str], models: list[dict]) -> dict:
    """Provenance: engine and suite versions, runs, models and identities, per-dataset stamps."""
    runs = rows(con, "SELECT run_id, started_at, finished_at, engine_version, suite, suite_version, outcome "
                     "FROM runs ORDER BY started_at")
    stamps = rows(con, "SELECT dataset, list(DISTINCT prompt_hash ORDER BY prompt_hash) AS prompt_hashes, "
                       "list(DISTINCT scorer_version ORDER BY scorer_version) AS scorer_versions, "
                       "list(DISTINCT suite_version ORDER BY suite_version) AS suite_versions, "
                       "min(started_at) AS first, max(finished_at) AS last "
                       "FROM results GROUP BY dataset ORDER BY dataset")
    loaded = rows(con, "SELECT source, loaded_at FROM suites WHERE suite = ? AND version = ?", suite)
    return {
        "report_engine_version": ENGINE_VERSION,
        "suite": {"name": suite[0], "version": suite[1], **(loaded[0] if loaded else {})},
        "runs": runs,
        "models": models,
        "stamps": stamps,
    }


def constraint_notes(con: duckdb.DuckDBPyConnection, shown: set[str]) -> list[str]:
    notes = []
    for name, how in con.execute("SELECT name, generation->>'answer_constraint' FROM models "
                                 "WHERE generation->>'answer_constraint' IS NOT NULL ORDER BY name").fetchall():
        if name in shown:  # the same caveat the terminal report prints
            notes.append(f"{name}: choice answers held to the options (answer_constraint = {how}); "
                         "compare with free-form models with care")
    return notes

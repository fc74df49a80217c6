"""Helpers for the view tests: a real DuckDB file, suites from TOML text, item rows."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import duckdb

from benchmark.suites.suite import Suite, load_suite
from store.hierarchy.suite_tables import load_suite_tables
from store.hierarchy.views import ensure_views


def make_db(tmp_path: Path, name: str = "results.duckdb") -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(tmp_path / name))
    ensure_views(con)
    return con


def load_toml(con: duckdb.DuckDBPyConnection, tmp_path: Path, text: str, file: str = "suite.toml") -> Suite:
    p = tmp_path / file
    p.write_text(textwrap.dedent(text))
    suite = load_suite(str(p))
    load_suite_tables(con, suite)
    return suite


def metric(con, dataset: str, name: str = "accuracy", kind: str = "mean", a: str = "score",
           b: str | None = None, c: str | None = None, primary: bool = True) -> None:
    con.execute("INSERT OR REPLACE INTO dataset_metrics VALUES (?, ?, ?, ?, ?, ?, ?, 'test')",
                (dataset, name, kind, a, b, c, primary))


def items(con, model: str, dataset: str, scores: list[float | None], *, errors: int = 0,
          measures: list[dict] | None = None, start: int = 0) -> None:
    """One ok row per score (None: ok but unparsed, score 0), then `errors` error rows."""
    rows = []
    for i, s in enumerate(scores):
        m = json.dumps(measures[i]) if measures else None
        pred = None if s is None else json.dumps("A")
        rows.append((model, dataset, f"i{start + i}", "ok", 1, pred, 0.0 if s is None else s, m))
    for j in range(errors):
        rows.append((model, dataset, f"e{start + j}", "error", 1, None, None, None))
    con.executemany(
        "INSERT INTO results (model, dataset, item_id, sample, status, attempts, prediction, score, measures) "
        "VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?)",
        rows,
    )


def scored(con, model: str, dataset: str, score: float, **kw) -> None:
    """A dataset whose primary accuracy is `score` (0-100): one item with that mean."""
    items(con, model, dataset, [score / 100], **kw)


def one(con, sql: str, *params):
    row = con.execute(sql, params).fetchone()
    return None if row is None else (row[0] if len(row) == 1 else row)


def flat_suite(abilities: dict[str, tuple[float | None, list[str]]], *, gate: str | None = None,
               tau: float | None = None, name: str = "flat", version: str = "1",
               methods: dict[str, str] | None = None) -> str:
    """A suite with one sub-ability and one L task per ability, listing `datasets`; `methods` gives some
    datasets a TOML methods list instead of their primary metric."""
    out = [f'[suite]\nname = "{name}"\nversion = "{version}"\n[scoring]']
    if gate:
        out.append(f'gate = "{gate}"\ntau = {tau}')
    ds: list[str] = []
    for aid, (w, datasets) in abilities.items():
        out.append(f'[[ability]]\nid = "{aid}"' + (f"\nweight = {w}" if w is not None else ""))
        out.append(f'[[ability.sub_ability]]\nid = "{aid}_s"\n[[ability.sub_ability.task]]\nid = "{aid}_t"\n'
                   f'level = "L"\ndatasets = {json.dumps(datasets)}')
        ds += [d for d in datasets if d not in ds]
    methods = methods or {}
    out.append("[datasets]\n" + "\n".join(f"{d} = {{ methods = {methods[d]} }}" if d in methods else f'{d} = "{d}"'
                                           for d in ds))
    return "\n".join(out) + "\n"

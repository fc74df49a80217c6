"""The leaderboard (paper 001, Table 4 layout) and a per-model drill-down.

    python -m engine report [--db] results.duckdb [--suite NAME] [--model NAME]

Everything shown is read from the views (store/views.sql); this module only
arranges it. The drill-down walks ability -> sub-ability -> level -> task ->
dataset, weakest first, as section 5.3 of paper 001 does.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.tree import Tree

from benchmark.suite import SuiteError
from engine import unparsed_notes
from store.suite_tables import open_suite
from store.db import StoreError, connect

LEVEL_NAMES = {"L": "Low", "M": "Medium", "H": "High"}


class ReportError(Exception):
    pass


def fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def pct(x: float | None) -> str:
    return "0%" if not x else ("100%" if x >= 0.9995 else f"{100 * x:.1f}%")


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: tuple) -> list[dict]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def leaderboard_table(con: duckdb.DuckDBPyConnection, suite: tuple[str, str]) -> tuple[Table, list[str]]:
    """Table 4: rank, model, overall, main abilities, gate; plus notes on unranked models."""
    meta = _rows(con, "SELECT title, gate, tau FROM suites WHERE suite = ? AND version = ?", suite)[0]
    abilities = _rows(
        con, "SELECT ability, name, grp FROM suite_abilities WHERE suite = ? AND version = ? ORDER BY position", suite
    )
    # Table 4 order: the abilities that make the total, then the gate.
    abilities.sort(key=lambda a: a["ability"] == meta["gate"])
    board = _rows(
        con,
        "SELECT * FROM leaderboard WHERE suite = ? AND version = ? "
        "ORDER BY rank NULLS LAST, raw_total DESC NULLS LAST, model",
        suite,
    )
    scores: dict[tuple[str, str], dict] = {
        (r["model"], r["ability"]): r
        for r in _rows(con, "SELECT * FROM ability_scores WHERE suite = ? AND version = ?", suite)
    }
    table = Table(title=escape(f"{meta['title']} — {suite[0]} {suite[1]}"), title_justify="left",
                  box=box.SIMPLE_HEAD)
    table.add_column("Rank", justify="right")
    table.add_column("Model", overflow="fold")  # a long model name wraps, never loses characters
    table.add_column("Overall", justify="right")
    # A group shared by several abilities is a heading, as "Core Ability" is in Table 4.
    shared = {g for g in (a["grp"] for a in abilities) if g and sum(a["grp"] == g for a in abilities) > 1}
    for a in abilities:
        label = a["name"] + (f"\n({a['grp']})" if a["grp"] in shared else "")
        # headers wrap at words, so a long model name keeps the room
        table.add_column(escape(label), justify="right", max_width=max(6, *(len(w) for w in label.split())))
    table.add_column("Coverage", justify="right")
    table.add_column("Unread", justify="right")  # mean (worst) share of unread answers, store/unparsed.sql
    unread = unparsed_notes.share_by_model(con, suite)
    notes: list[str] = []
    ranked = [r for r in board if r["rank"] is not None]
    unranked = [r for r in board if r["rank"] is None]
    for i, r in enumerate(ranked + unranked):
        if i == len(ranked) and ranked:
            table.add_section()
        cells = [str(r["rank"]) if r["rank"] is not None else "*", escape(r["model"])]
        # Unranked rows show the would-be score (raw_total), as Table 4 does.
        cells.append(fmt(r["total"] if r["rank"] is not None else r["raw_total"]))
        cells += [fmt(scores.get((r["model"], a["ability"]), {}).get("score")) for a in abilities]
        cells.append(pct(r["coverage"]))
        cells.append(unread.get(r["model"], "—"))
        table.add_row(*cells)
        if r["rank"] is None:
            notes.append(_why_unranked(r, meta, abilities))
    shown = {r["model"] for r in board}
    for name, how in con.execute("SELECT name, generation->>'answer_constraint' FROM models "
                                 "WHERE generation->>'answer_constraint' IS NOT NULL ORDER BY name").fetchall():
        if name in shown:  # a forced choice is not a free-form answer: say so where scores are compared
            notes.append(f"{name}: choice answers held to the options (answer_constraint = {how}); "
                         "compare with free-form models with care (docs/providers.md)")
    return table, notes


def _why_unranked(r: dict, meta: dict, abilities: list[dict]) -> str:
    gate = next((a["name"] for a in abilities if a["ability"] == meta["gate"]), meta["gate"])
    if r["vetoed"]:
        return (
            f"* {r['model']}: vetoed, {gate} {fmt(r['gate_score'])} < {meta['tau']:g} "
            f"(total 0; would-be score {fmt(r['raw_total'])})"
        )
    if r["vetoed"] is None:
        return f"* {r['model']}: not ranked, no data for the gate ability {gate}"
    return f"* {r['model']}: not ranked, no data for any ability in the total"


@dataclass
class Node:
    label: str
    score: float | None
    coverage: float | None
    detail: str = ""
    children: list[Node] = field(default_factory=list)


def drilldown(con: duckdb.DuckDBPyConnection, suite: tuple[str, str], model: str) -> tuple[str, Node]:
    """The model's hierarchy with scores, children sorted weakest first."""
    p = suite + (model,)
    board = _rows(con, "SELECT * FROM leaderboard WHERE suite = ? AND version = ? AND model = ?", p)
    if not board:
        models = [r[0] for r in con.execute(
            "SELECT model FROM leaderboard WHERE suite = ? AND version = ? ORDER BY model", suite).fetchall()]
        shown = ", ".join(models[:10]) + (" ..." if len(models) > 10 else "")
        raise ReportError(f"model {model!r} has no data in suite {suite[0]} {suite[1]} (models: {shown or 'none'})")
    b = board[0]
    meta = _rows(con, "SELECT gate, tau, missing_levels FROM suites WHERE suite = ? AND version = ?", suite)[0]

    def scored(view: str, key: str) -> dict:
        sql = f"SELECT * FROM {view} WHERE suite = ? AND version = ? AND model = ?"
        return {r[key]: r for r in _rows(con, sql, p)}

    ab, sub = scored("ability_scores", "ability"), scored("sub_ability_scores", "sub_ability")
    tasks, ds = scored("task_scores", "task"), scored("dataset_scores", "dataset")
    levels = {(r["sub_ability"], r["level"]): r for r in _rows(
        con, "SELECT * FROM level_scores WHERE suite = ? AND version = ? AND model = ?", p)}
    diff: dict[str, dict[str, float]] = {}
    for r in _rows(con, "SELECT levels, level, weight FROM suite_difficulty WHERE suite = ? AND version = ?", suite):
        diff.setdefault(r["levels"], {})[r["level"]] = r["weight"]
    plan = _rows(
        con,
        """SELECT a.ability, a.name AS a_name, a.weight AS a_w, s.sub_ability, s.name AS s_name, s.weight AS s_w,
                  t.task, t.name AS t_name, t.level, t.weight AS t_w, td.dataset, d.name AS d_name, td.weight AS d_w
           FROM suite_abilities a
           JOIN suite_sub_abilities s USING (suite, version, ability)
           JOIN suite_tasks t USING (suite, version, sub_ability)
           JOIN suite_task_datasets td USING (suite, version, task)
           JOIN suite_datasets d USING (suite, version, dataset)
           WHERE a.suite = ? AND a.version = ?
           ORDER BY a.position, s.position, t.position, td.position""",
        suite,
    )
    root = Node(f"{model}", b["total"], b["coverage"])
    idx: dict[tuple, Node] = {}
    for r in plan:
        a_key, s_key = (r["ability"],), (r["ability"], r["sub_ability"])
        l_key, t_key = s_key + (r["level"],), s_key + (r["level"], r["task"])
        if a_key not in idx:
            role = "gate" if r["ability"] == meta["gate"] else f"weight {r['a_w']:g}"
            a = ab.get(r["ability"], {})
            idx[a_key] = Node(r["a_name"], a.get("score"), a.get("coverage"), role)
            root.children.append(idx[a_key])
        if s_key not in idx:
            s = sub.get(r["sub_ability"], {})
            idx[s_key] = Node(r["s_name"], s.get("score"), s.get("coverage"), f"weight {r['s_w']:g}")
            idx[a_key].children.append(idx[s_key])
        if l_key not in idx:
            lv = levels.get((r["sub_ability"], r["level"]), {})
            w = _level_weight(diff, meta["missing_levels"], sub.get(r["sub_ability"], {}), r["level"], lv)
            idx[l_key] = Node(f"{LEVEL_NAMES[r['level']]} ({r['level']})", lv.get("score"), lv.get("coverage"), w)
            idx[s_key].children.append(idx[l_key])
        if t_key not in idx:
            t = tasks.get(r["task"], {})
            idx[t_key] = Node(r["t_name"], t.get("score"), t.get("coverage"), f"weight {r['t_w']:g}")
            idx[l_key].children.append(idx[t_key])
        d = ds.get(r["dataset"], {})
        idx[t_key].children.append(Node(r["d_name"], d.get("score"), d.get("coverage"), _dataset_detail(d, r["d_w"])))
    _sort(root)
    if b["vetoed"]:
        head = f"vetoed (gate {fmt(b['gate_score'])} < {meta['tau']:g}): total 0, would-be {fmt(b['raw_total'])}"
    elif b["rank"] is not None:
        head = f"rank {b['rank']}, total {fmt(b['total'])}"
    else:
        head = f"not ranked, would-be {fmt(b['raw_total'])}"
    return head, root


def _level_weight(diff: dict, mode: str, sub: dict, level: str, lv: dict) -> str:
    """The difficulty weight this level got (Algorithm 4), for the reader."""
    key = sub.get("levels_present") if mode == "table" else sub.get("levels_planned")
    row = diff.get(key or "", {})
    if lv.get("score") is None or level not in row:
        return "difficulty weight 0 (no data)"
    present = sub.get("levels_present") or ""
    total = sum(w for lvl, w in row.items() if lvl in present)
    return f"difficulty weight {row[level] / total:.3g}"


def _dataset_detail(d: dict, weight: float) -> str:
    if not d:
        return "no rows"
    if d["source"] == "external":
        return "imported score" + (" (overrides item rows)" if d["items_score"] is not None else "")
    if d["n_items"] is None:
        return "no rows"
    unread = f", {pct(d['unparsed_share'])} unread" if d.get("unparsed_share") else ""
    return f"{d['n_ok']}/{d['n_items']} ok{unread}" + (f", weight {weight:g}" if weight != 1 else "")


def _sort(node: Node) -> None:
    # Weakest first; nodes without data last, in plan order.
    node.children.sort(key=lambda n: (n.score is None, n.score if n.score is not None else 0))
    for c in node.children:
        _sort(c)


def render_tree(head: str, root: Node, suite: tuple[str, str]) -> Tree:
    title = f"{root.label} — {suite[0]} {suite[1]} — {head}, coverage {pct(root.coverage)}"
    tree = Tree(f"[bold]{escape(title)}[/]")

    def add(parent: Tree, n: Node) -> None:
        score = fmt(n.score) if n.score is not None else "[red]no data[/]"
        extra = f"  [dim]{escape(n.detail)}[/]" if n.detail else ""
        branch = parent.add(f"{score:>6}  {escape(n.label)}  [dim]cov {pct(n.coverage)}[/]{extra}")
        for c in n.children:
            add(branch, c)

    for c in root.children:
        add(tree, c)
    return tree


def report_main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m engine report", description=__doc__.splitlines()[0])
    ap.add_argument("db_pos", nargs="?", metavar="DB", help="DuckDB results file")
    ap.add_argument("--db", help="DuckDB results file (same as the positional DB)")
    ap.add_argument("--suite", help="suite name, name@version or .toml path (default: the only one loaded)")
    ap.add_argument("--model", help="drill down into one model")
    ap.add_argument("--reload", action="store_true", help="reload the suite file into the database first")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    db = args.db or args.db_pos
    if not db:
        print("error: give the results database (--db PATH)", file=sys.stderr)
        return 2
    if not Path(db).is_file():
        print(f"error: {db}: no such database", file=sys.stderr)
        return 2
    console = Console(width=max(shutil.get_terminal_size((120, 24)).columns, 100))
    try:
        con = connect(db)  # creates the views: the report needs write access
    except StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        suite = open_suite(con, args.suite, reload=args.reload)
        for p in _rows(con, "SELECT * FROM suite_method_problems WHERE suite = ? AND version = ?", suite):
            msg = f"{p['dataset']} method {p['method']}: {p['problem']}"
            console.print(f"[yellow]warning:[/] {escape(msg)}")
        if args.model:
            head, root = drilldown(con, suite, args.model)
            console.print(render_tree(head, root, suite))
            for w in unparsed_notes.warnings(con, suite, args.model):
                console.print(w, markup=False)
        else:
            table, notes = leaderboard_table(con, suite)
            if not table.rows:
                console.print(f"no results for suite {suite[0]} {suite[1]} yet")
                return 0
            console.print(table)
            for n in notes + unparsed_notes.warnings(con, suite):
                console.print(n, markup=False)
    except (ReportError, SuiteError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except duckdb.Error as e:
        print(f"error: {db}: {str(e).splitlines()[0]}", file=sys.stderr)
        return 2
    finally:
        con.close()
    return 0

"""The leaderboard (the MoodBench 1.0 paper's Table 4 layout) and a per-model drill-down.

    python -m engine report DB [--suite NAME] [--model NAME] [--format text|markdown|csv] [--html FILE]

Everything shown is read from the views (store/hierarchy/views.sql); this module only
arranges it. The drill-down walks ability -> sub-ability -> level -> task ->
dataset, weakest first, as section 5.3 of the MoodBench 1.0 paper does.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import msgspec

from benchmark.errors import UserError
from engine.report.baselines import chance_by_dataset
from engine.report.estimated import ESTIMATED_NOTE, marked, relation_exists, stale_notes
from engine.report.table import Column, Sheet, fmt, output_width, pct, render, span
from engine.report.episode_outcomes import episode_details
from engine.report.tree import Node, drilldown_sheet, tree_lines
from engine.report.batch_lines import report_lines as batch_lines
from engine.report import unparsed_notes
from engine.report.outfile import check_target
from engine.report.terminal import one_line
from store.db import connect
from store.hierarchy.bootstrap import compute_intervals
from store.snapshot import open_for_reading
from store.hierarchy.suite_tables import open_suite

LEVEL_NAMES = {"L": "Low", "M": "Medium", "H": "High"}
FORMATS = ("text", "markdown", "csv")


class ReportError(UserError):
    """A model, suite or database the report cannot show."""


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: tuple) -> list[dict]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def leaderboard(con: duckdb.DuckDBPyConnection, suite: tuple[str, str]) -> Sheet:
    """Table 4: rank, model, overall, main abilities, gate; intervals when the view has them; notes."""
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
    ab_rows = _rows(con, "SELECT * FROM ability_scores WHERE suite = ? AND version = ?", suite)
    scores: dict[tuple[str, str], float | None] = {(r["model"], r["ability"]): r["score"] for r in ab_rows}
    # `estimated`: an estimate from part of a dataset's items went in (store/hierarchy/views.sql); absent in old files
    estimated = {(r["model"], r["ability"]) for r in ab_rows if r.get("estimated")}
    any_estimated = any(r.get("estimated") for r in board)
    unparsed = dict(con.execute(  # of the answered items, over the suite's datasets
        """SELECT c.model, sum(c.n_unparsed) / nullif(sum(c.n_ok), 0) FROM dataset_coverage c
           JOIN suite_datasets d ON d.dataset = c.dataset WHERE d.suite = ? AND d.version = ? GROUP BY c.model""",
        suite).fetchall())
    ranked = [r for r in board if r["rank"] is not None]
    board = ranked + [r for r in board if r["rank"] is None]
    # interval columns show when the view has them and they hold values (the bootstrap has run)
    has = {k for k in (board[0] if board else ()) if any(r[k] is not None for r in board)}
    # A group shared by several abilities is a heading, as "Core Ability" is in Table 4.
    shared = {g for g in (a["grp"] for a in abilities) if g and sum(a["grp"] == g for a in abilities) > 1}
    shorts = _abbreviations([a["name"] for a in abilities])
    any_unparsed = any(unparsed.get(r["model"]) for r in board)
    # One spec per column: its text cell and the CSV values it stands for, so the formats cannot drift.
    specs = [Spec("#", ("rank",), lambda r: str(r["rank"]) if r["rank"] is not None else "*"),
             Spec("Model", ("model",), lambda r: r["model"], right=False),
             # Unranked rows show the would-be score (raw_total), as Table 4 does.
             Spec("Overall", ("total", "raw_total", "vetoed"),
                  lambda r: marked(r.get("estimated"), r["total"] if r["rank"] is not None else r["raw_total"]),
                  lambda r: [r["total"], r["raw_total"], r["vetoed"]])]
    def ability(name: str) -> Callable[[dict], float | None]:
        return lambda r: scores.get((r["model"], name))

    def ability_cell(name: str) -> Callable[[dict], str]:
        return lambda r: marked((r["model"], name) in estimated, scores.get((r["model"], name)))

    def interval(lo: str, hi: str, show: Callable[[Any, Any], str]) -> Callable[[dict], str]:
        return lambda r: show(r[lo], r[hi])

    for a, short in zip(abilities, shorts):
        score = ability(a["ability"])
        specs.append(Spec(a["name"] + (f" ({a['grp']})" if a["grp"] in shared else ""), (a["ability"],),
                          ability_cell(a["ability"]), _listed(score), short))
    for lo, hi, head, short, show in INTERVAL_COLUMNS:
        if {lo, hi} <= has:
            specs.append(Spec(head, (lo, hi), interval(lo, hi, show), short=short))
    if "p_veto" in has:
        specs.append(Spec("P(veto)", ("p_veto",), lambda r: "—" if r["p_veto"] is None else f"{r['p_veto']:.2f}",
                          short="Veto"))
    specs.append(Spec("Coverage", ("coverage",), lambda r: pct(r["coverage"]), short="Cov"))
    specs.append(Spec("Unparsed", ("unparsed",), lambda r: pct(unparsed.get(r["model"])),
                      lambda r: [unparsed.get(r["model"])], short="Unp", in_text=any_unparsed))
    if any_estimated:  # a CSV column only then: the CSV of complete sweeps stays as it was
        specs.append(Spec("Estimated", ("estimated",), lambda r: "", lambda r: [bool(r.get("estimated"))],
                          in_text=False))
    cols = [Column(s.header, tuple(s.cell(r) for r in board), s.short, s.right) for s in specs if s.in_text]
    csv_head = [name for s in specs for name in s.csv]
    csv_rows = [[v for s in specs for v in (s.values(r) if s.values else [r[k] for k in s.csv])] for r in board]
    notes = [_why_unranked(r, meta, abilities) for r in board if r["rank"] is None and not r["vetoed"]]
    if any(r["vetoed"] for r in board):  # one line, not one per model: the gate column shows each score
        gate = next((a["name"] for a in abilities if a["ability"] == meta["gate"]), meta["gate"])
        notes.insert(0, f"* vetoed: {gate} below {meta['tau']:g} makes the total 0; "
                        "Overall shows the would-be score")
    if {"ci_low", "rank_low", "p_veto"} & has:
        notes.append("95% CI, rank range and P(veto) (the share of replicates in which the gate vetoes) "
                     "come from bootstrap replicates of the items")
    if any_unparsed:
        notes.append("Unparsed: answered items whose answer could not be parsed (scored wrong), over the suite")
    if any_estimated:
        notes.append(ESTIMATED_NOTE + ("; the 95% CI, rank range and P(veto) include their uncertainty"
                                       if {"ci_low", "rank_low", "p_veto"} & has else ""))
    shown = {r["model"] for r in board}
    for name, how in con.execute("SELECT name, generation->>'answer_constraint' FROM models "
                                 "WHERE generation->>'answer_constraint' IS NOT NULL ORDER BY name").fetchall():
        if name in shown:  # a forced choice is not a free-form answer: say so where scores are compared
            notes.append(f"{name}: choice answers held to the options (answer_constraint = {how}); "
                         "compare with free-form models with care (docs/providers.md)")
    notes += stale_notes(con, shown)
    notes += _model_versions(con, shown)
    title = f"{meta['title']} — {suite[0]} {suite[1]}"
    return Sheet(title, cols, csv_head, csv_rows, notes, breaks=[len(ranked)] if ranked and len(ranked) < len(board) else [])


def _listed(value: Callable[[dict], Any]) -> Callable[[dict], list]:
    return lambda r: [value(r)]


class Spec(msgspec.Struct, frozen=True):
    """One leaderboard column: its text cell, and the CSV columns (named in `csv`) it stands for."""

    header: str
    csv: tuple[str, ...]
    cell: Callable[[dict], str]
    values: Callable[[dict], list] | None = None  # the CSV values; None: the row's own columns named in `csv`
    short: str = ""
    right: bool = True
    in_text: bool = True


# (low column, high column, header, abbreviation, cell) of the interval columns the leaderboard view may have.
INTERVAL_COLUMNS = (
    ("ci_low", "ci_high", "95% CI", "CI", span),
    ("rank_low", "rank_high", "Rank range", "Ranks", lambda lo, hi: span(lo, hi, 0)),
)


def _abbreviations(names: list[str]) -> list[str]:
    """Initials of the significant words ('Values & Safety' -> 'VS'), made unique."""
    out: list[str] = []
    for name in names:
        words = [w for w in re.findall(r"[A-Za-z0-9]+", name) if w.lower() not in ("ability", "abilities", "and")]
        short = "".join(w[0].upper() for w in words) or name[:3]
        if short in out:
            short = (words[0][:3].title() if words else name[:3]) + str(len(out))
        out.append(short)
    return out


def _model_versions(con: duckdb.DuckDBPyConnection, shown: set[str]) -> list[str]:
    """Which model the API said answered (model_version), per model: a silent upgrade shows here."""
    seen: dict[str, list[str]] = {}
    for model, version, n in con.execute(
            "SELECT model, coalesce(model_version, 'not reported'), count(*) FROM results WHERE status = 'ok' "
            "GROUP BY ALL ORDER BY 1, 3 DESC, 2").fetchall():
        if model in shown:
            seen.setdefault(model, []).append(f"{version} ({n} rows)")
    return [f"{m}: answered by {', '.join(v)} (model_version as the API reported it)" for m, v in seen.items()]


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


def drilldown(con: duckdb.DuckDBPyConnection, suite: tuple[str, str], model: str) -> tuple[str, Node]:
    """The model's hierarchy with scores, children sorted weakest first."""
    p = suite + (model,)
    board = _rows(con, "SELECT * FROM leaderboard WHERE suite = ? AND version = ? AND model = ?", p)
    if not board:
        models = [r[0] for r in con.execute(
            "SELECT model FROM leaderboard WHERE suite = ? AND version = ? ORDER BY model", suite).fetchall()]
        shown = one_line(", ".join(models[:10])) + (" ..." if len(models) > 10 else "")
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
    plan = _rows(con, "SELECT * FROM suite_plan WHERE suite = ? AND version = ? ORDER BY position", suite)
    chance = chance_by_dataset(con, suite)
    ci = _intervals(con, suite, model)
    estimates = _estimates(con, model)
    episodes = episode_details(con, model)  # interactive datasets only: {} for a plain suite
    root = Node(f"{model}", b["total"], b["coverage"], kind="overall", key=model, ci=ci.get(("overall", "overall")),
                estimated=bool(b.get("estimated")))
    idx: dict[tuple, Node] = {}
    for r in plan:
        a_key, s_key = (r["ability"],), (r["ability"], r["sub_ability"])
        l_key, t_key = s_key + (r["level"],), s_key + (r["level"], r["task"])
        if a_key not in idx:
            role = "gate" if r["ability"] == meta["gate"] else f"weight {r['a_w']:g}"
            a = ab.get(r["ability"], {})
            idx[a_key] = Node(r["a_name"], a.get("score"), a.get("coverage"), role, kind="ability", key=r["ability"],
                              ci=ci.get(("ability", r["ability"])), estimated=bool(a.get("estimated")))
            root.children.append(idx[a_key])
        if s_key not in idx:
            s = sub.get(r["sub_ability"], {})
            idx[s_key] = Node(r["s_name"], s.get("score"), s.get("coverage"), f"weight {r['s_w']:g}",
                              kind="sub_ability", key=r["sub_ability"], ci=ci.get(("sub_ability", r["sub_ability"])),
                              estimated=bool(s.get("estimated")))
            idx[a_key].children.append(idx[s_key])
        if l_key not in idx:
            lv = levels.get((r["sub_ability"], r["level"]), {})
            w = _level_weight(diff, meta["missing_levels"], sub.get(r["sub_ability"], {}), r["level"], lv)
            idx[l_key] = Node(f"{LEVEL_NAMES[r['level']]} ({r['level']})", lv.get("score"), lv.get("coverage"), w,
                              kind="level", key=r["level"], estimated=bool(lv.get("estimated")))
            idx[s_key].children.append(idx[l_key])
        if t_key not in idx:
            t = tasks.get(r["task"], {})
            idx[t_key] = Node(r["t_name"], t.get("score"), t.get("coverage"), f"weight {r['t_w']:g}",
                              kind="task", key=r["task"], ci=ci.get(("task", r["task"])),
                              estimated=bool(t.get("estimated")))
            idx[l_key].children.append(idx[t_key])
        d = ds.get(r["dataset"], {})
        detail = _dataset_detail(d, r["d_w"], chance.get(r["dataset"]), estimates.get(r["dataset"]))
        if r["dataset"] in episodes:
            detail = f"{detail}; {episodes[r['dataset']]}"
        idx[t_key].children.append(Node(r["d_name"], d.get("score"), d.get("coverage"), detail,
                                        kind="dataset", key=r["dataset"], ci=ci.get(("dataset", r["dataset"])),
                                        estimated=bool(d.get("estimated"))))
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


def _dataset_detail(d: dict, weight: float, chance: float | None = None, est: dict | None = None) -> str:
    base = "" if chance is None else f"chance {fmt(chance)}, "
    if d.get("source") == "estimate" and est:
        base += (f"estimated from {est['n']}/{est['n_total']} items ({est['method']}; answered mean "
                 f"{fmt(d['items_score'])}), ")
    return base + _rows_detail(d, weight)


def _estimates(con: duckdb.DuckDBPyConnection, model: str) -> dict[str, dict]:
    """dataset -> the model's fresh estimate (store/estimates/estimates.sql); empty in a file made before them."""
    if not relation_exists(con, "dataset_estimates"):
        return {}
    return {r["dataset"]: r for r in _rows(con, "SELECT * FROM dataset_estimates WHERE model = ?", (model,))}


def _rows_detail(d: dict, weight: float) -> str:
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


def _intervals(con: duckdb.DuckDBPyConnection, suite: tuple[str, str], model: str) -> dict:
    """(level, node) -> (ci_low, ci_high) from the intervals view; empty where it does not exist."""
    cols = {r[0] for r in con.execute("SELECT column_name FROM information_schema.columns "
                                      "WHERE table_name = 'intervals'").fetchall()}
    if not {"model", "level", "node", "ci_low", "ci_high"} <= cols:
        return {}
    sql, params = "SELECT level, node, ci_low, ci_high FROM intervals WHERE model = ?", [model]
    if {"suite", "version"} <= cols:
        sql, params = sql + " AND suite = ? AND version = ?", [model, *suite]
    return {(lv, node): (lo, hi) for lv, node, lo, hi in con.execute(sql, params).fetchall()
            if lo is not None and hi is not None}


def _warn(lines: list[str], fmt_: str) -> None:
    for line in lines:  # stdout stays a clean table for markdown and csv
        print(one_line(line), file=sys.stdout if fmt_ == "text" else sys.stderr)


class ReportOptions(msgspec.Struct, frozen=True, kw_only=True):
    """`report`'s options (engine/report/flags.py maps the flags onto them)."""

    db: Path
    suite: str | None = None  # name, name@version or .toml path; None: the only one loaded
    model: str | None = None  # drill down into this model
    reload: bool = False  # load the suite file into the database again first (writes)
    html: Path | None = None  # write the self-contained HTML report here instead
    format: str = "text"  # one of FORMATS


def report(opts: ReportOptions) -> int:
    """Print the leaderboard, a drill-down or write the HTML page; a UserError for bad input."""
    db = opts.db
    if not db.is_file():
        raise ReportError(f"{db}: no such database")
    if opts.html:  # before any work: a bad target is one line, and never one of the database's files
        check_target(opts.html, db, "the HTML report")
    width = output_width()
    # Read-only (works on read-only media, and beside a sweep via its snapshot); --reload writes.
    con, note = (connect(db), None) if opts.reload else open_for_reading(db)
    if note:  # stdout stays a clean table for markdown and csv
        print(note, file=sys.stdout if opts.format == "text" else sys.stderr)
    try:
        try:
            suite = open_suite(con, opts.suite, reload=opts.reload)
        except duckdb.InvalidInputException:
            if note is not None:  # the snapshot of a running sweep: its suite is loaded or never will be
                raise
            con.close()
            con = connect(db)  # the suite asked for must be loaded first, which writes
            suite = open_suite(con, opts.suite, reload=opts.reload)
        compute_intervals(con)  # bootstrap bounds for the leaderboard and `intervals` (only if results changed)
        for p in _rows(con, "SELECT * FROM suite_method_problems WHERE suite = ? AND version = ?", suite):
            msg = one_line(f"{p['dataset']} method {p['method']}: {p['problem']}")
            # stdout stays a clean table for markdown and csv
            print(f"warning: {msg}", file=sys.stdout if opts.format == "text" else sys.stderr)
        if opts.html:
            from engine.report.html.page import write_html

            size, what = write_html(con, suite, opts.html)
            print(f"wrote {opts.html} ({size / 1e6:.1f} MB; {what})", file=sys.stderr)
        elif opts.model:
            head, root = drilldown(con, suite, opts.model)
            if opts.format == "text":
                sys.stdout.write("\n".join(tree_lines(head, root, suite, width)) + "\n")  # cleaned there
            else:
                sys.stdout.write(render(drilldown_sheet(head, root, suite), opts.format, width))
            _warn(unparsed_notes.warnings(con, suite, opts.model), opts.format)
            _warn(batch_lines(con, opts.model), opts.format)
        else:
            sheet = leaderboard(con, suite)
            if not sheet.csv_rows:
                print(f"no results for suite {suite[0]} {suite[1]} yet",
                      file=sys.stderr if opts.format == "csv" else sys.stdout)
                return 0
            sys.stdout.write(render(sheet, opts.format, width))
            _warn(unparsed_notes.warnings(con, suite), opts.format)
            _warn(batch_lines(con), opts.format)
    except duckdb.Error as e:
        raise ReportError(f"{db}: {str(e).splitlines()[0]}") from None
    finally:
        con.close()
    return 0

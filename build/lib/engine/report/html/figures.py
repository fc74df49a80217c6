"""The papers' figures (001, section 5: Figs. 4-7) as Plotly figure JSON, from the report's data.

Each figure is {"id", "title", "caption", "figure"} or, when the scores or the
models' `metadata` it needs are missing, {"id", "title", "note"} saying what is
missing: the page shows the note where the figure would be. Model scores here are
the would-be totals (`raw_total`): a vetoed model's 0 would hide what the figure
compares.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

PALETTE = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d")
# template "none" plus a few settings of our own: a named template is copied and validated
# per figure (about 0.2 s each) and travels inside every figure's JSON.
LAYOUT = dict(template="none", margin=dict(l=60, r=20, t=40, b=60), height=420, colorway=PALETTE,
              font=dict(family="system-ui, sans-serif", size=12, color="#1d2430"),
              plot_bgcolor="white", paper_bgcolor="white", hoverlabel=dict(bgcolor="white"))
AXIS = dict(gridcolor="#e5e7eb", linecolor="#d0d5dd", zeroline=False, automargin=True)


def figures(data: dict, models: list[dict]) -> list[dict]:
    meta = {m["name"]: m.get("metadata") or {} for m in models}
    board = [r for r in data["leaderboard"] if r.get("raw_total") is not None or r.get("abilities")]
    return [fig4_abilities(data, board), fig4_tasks(data), fig5_open_closed(data, board, meta),
            fig6_family_size(board, meta), fig7_core_vs_foundational(data, board)]


def _json(fig: go.Figure) -> dict[str, Any]:
    return fig.to_plotly_json()


def _skip(fid: str, title: str, note: str) -> dict:
    return {"id": fid, "title": title, "note": note}


def fig4_abilities(data: dict, board: list[dict]) -> dict:
    title = "Fig. 4 (left): score distribution by ability"
    if len(board) < 1:
        return _skip("fig4-abilities", title, "no model has ability scores yet")
    fig = go.Figure(layout=dict(LAYOUT, xaxis=AXIS, yaxis=dict(AXIS, title="score (0-100)"), showlegend=False))
    for i, a in enumerate(data["abilities"]):
        ys = [r["abilities"].get(a["id"]) for r in board]
        names = [r["model"] for r in board if r["abilities"].get(a["id"]) is not None]
        fig.add_trace(go.Box(y=[y for y in ys if y is not None], name=a["name"], text=names, boxpoints="all",
                             jitter=0.4, pointpos=0, marker=dict(color=PALETTE[i % len(PALETTE)]),
                             hovertemplate="%{text}: %{y:.2f}<extra></extra>"))
    return {"id": "fig4-abilities", "title": title, "figure": _json(fig),
            "caption": f"Each point is one model ({len(board)} models); boxes span the quartiles."}


def fig4_tasks(data: dict) -> dict:
    title = "Fig. 4 (right): Companionship Ability by task"
    comp = next((a for a in data["abilities"] if "companion" in f"{a['id']} {a['name']}".lower()), None)
    if comp is None:
        return _skip("fig4-tasks", title, "this suite has no Companionship ability")
    tasks: dict[str, str] = {}
    for h in data["hierarchy"]:
        if h["ability"] == comp["id"]:
            tasks.setdefault(h["task"], f"{h['t_name']} ({h['level']})")
    per_model = data["scores"]["task"]
    fig = go.Figure(layout=dict(LAYOUT, xaxis=AXIS, yaxis=dict(AXIS, title="score (0-100)"), showlegend=False))
    shown = 0
    for i, (task, label) in enumerate(tasks.items()):
        pts = [(m, s[task][0]) for m, s in per_model.items() if task in s and s[task][0] is not None]
        if pts:
            shown += 1
            fig.add_trace(go.Box(y=[p[1] for p in pts], text=[p[0] for p in pts], name=label, boxpoints="all",
                                 jitter=0.4, pointpos=0, marker=dict(color=PALETTE[i % len(PALETTE)]),
                                 hovertemplate="%{text}: %{y:.2f}<extra></extra>"))
    if not shown:
        return _skip("fig4-tasks", title, f"no {comp['name']} task has scores yet")
    return {"id": "fig4-tasks", "title": title, "figure": _json(fig),
            "caption": f"{comp['name']}: each task's scores over the models; the lowest box is the bottleneck "
                       "(MoodBench 1.0 paper, 5.3)."}


def fig5_open_closed(data: dict, board: list[dict], meta: dict[str, dict]) -> dict:
    title = "Fig. 5: closed- vs open-source models, average score"
    groups: dict[str, list[dict]] = {"closed-source": [], "open-source": []}
    for r in board:
        flag = meta.get(r["model"], {}).get("open_source")
        if isinstance(flag, bool):
            groups["open-source" if flag else "closed-source"].append(r)
    missing = [g for g, rs in groups.items() if not rs]
    if missing:
        return _skip("fig5-open-closed", title, "needs models' metadata.open_source (true/false) for both kinds; "
                     f"no {' or '.join(missing)} model found")
    cats = [a["name"] for a in data["abilities"]] + ["Overall (would-be)"]
    fig = go.Figure(layout=dict(LAYOUT, barmode="group", xaxis=AXIS, yaxis=dict(AXIS, title="mean score (0-100)")))
    for i, (g, rs) in enumerate(groups.items()):
        ys = [_mean([r["abilities"].get(a["id"]) for r in rs]) for a in data["abilities"]]
        ys.append(_mean([r["raw_total"] for r in rs]))
        fig.add_trace(go.Bar(x=cats, y=ys, name=f"{g} ({len(rs)})", marker=dict(color=PALETTE[i])))
    unknown = len(board) - sum(len(v) for v in groups.values())
    note = f"; {unknown} model(s) without metadata.open_source left out" if unknown else ""
    return {"id": "fig5-open-closed", "title": title, "figure": _json(fig),
            "caption": "Mean over the models of each kind (metadata.open_source)" + note + "."}


def fig6_family_size(board: list[dict], meta: dict[str, dict]) -> dict:
    title = "Fig. 6: parameter size within a family"
    fams: dict[str, list[tuple[float, float, str]]] = {}
    for r in board:
        m = meta.get(r["model"], {})
        size, fam = m.get("params_b"), m.get("family")
        if fam and isinstance(size, (int, float)) and size > 0 and r.get("raw_total") is not None:
            fams.setdefault(str(fam), []).append((float(size), r["raw_total"], r["model"]))
    fams = {f: sorted(v) for f, v in fams.items() if len({s for s, _, _ in v}) >= 2}
    if not fams:
        return _skip("fig6-family-size", title, "needs at least one family (metadata.family) with two models of "
                     "different known sizes (metadata.params_b > 0)")
    fig = go.Figure(layout=dict(LAYOUT, xaxis=dict(AXIS, title="parameters (billions, log scale)", type="log"),
                                yaxis=dict(AXIS, title="overall score (would-be)")))
    for i, (fam, pts) in enumerate(sorted(fams.items())):
        fig.add_trace(go.Scatter(x=[p[0] for p in pts], y=[p[1] for p in pts], text=[p[2] for p in pts],
                                 mode="lines+markers", name=fam, marker=dict(color=PALETTE[i % len(PALETTE)]),
                                 hovertemplate="%{text}: %{x}B, %{y:.2f}<extra></extra>"))
    return {"id": "fig6-family-size", "title": title, "figure": _json(fig),
            "caption": "Families with two or more models of known size; params_b = 0 (unknown) is left out."}


def fig7_core_vs_foundational(data: dict, board: list[dict]) -> dict:
    title = "Fig. 7: core abilities vs foundational ability"
    found = [a for a in data["abilities"] if (a["grp"] or "").lower() == "foundational"]
    core = [a for a in data["abilities"] if (a["grp"] or "").lower() == "core"]
    if not found or not core:
        return _skip("fig7-core-foundational", title, "this suite has no Foundational and Core ability groups")
    pts = []
    for r in board:
        x = _weighted(r["abilities"], found)
        y = _weighted(r["abilities"], core)
        if x is not None and y is not None:
            pts.append((x, y, r["model"]))
    if len(pts) < 2:
        return _skip("fig7-core-foundational", title, "needs two or more models with both scores")
    fig = go.Figure(layout=dict(LAYOUT, xaxis=dict(AXIS, title="foundational"),
                                yaxis=dict(AXIS, title="core (weighted)")))
    fig.add_trace(go.Scatter(x=[p[0] for p in pts], y=[p[1] for p in pts], text=[p[2] for p in pts],
                             mode="markers", name="models", marker=dict(size=9, color=PALETTE[0]),
                             hovertemplate="%{text}: %{x:.2f}, %{y:.2f}<extra></extra>"))
    caption = f"{len(pts)} models; core = weighted mean of {', '.join(a['name'] for a in core)}."
    fit = _least_squares([p[0] for p in pts], [p[1] for p in pts])
    if fit:
        slope, icept, corr = fit
        x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
        fig.add_trace(go.Scatter(x=[x0, x1], y=[icept + slope * x0, icept + slope * x1], mode="lines",
                                 name=f"fit: y = {slope:.2f}x + {icept:.1f} (r = {corr:.2f})",
                                 line=dict(color=PALETTE[1], dash="dash")))
        caption += f" Fitted line (least squares): slope {slope:.2f}, Pearson r = {corr:.2f}."
    return {"id": "fig7-core-foundational", "title": title, "figure": _json(fig), "caption": caption}


def _mean(xs: list[float | None]) -> float | None:
    got = [x for x in xs if x is not None]
    return sum(got) / len(got) if got else None


def _weighted(scores: dict[str, float | None], abilities: list[dict]) -> float | None:
    got = [(float(a["weight"] or 1.0), s) for a in abilities if (s := scores.get(a["id"])) is not None]
    total = sum(w for w, _ in got)
    return sum(w * s for w, s in got) / total if got and total else None


def _least_squares(xs: list[float], ys: list[float]) -> tuple[float, float, float] | None:
    """Slope, intercept and Pearson r of y on x; None when x or y does not vary."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    if sxx == 0 or syy == 0:
        return None
    slope = sxy / sxx
    return slope, my - slope * mx, sxy / (sxx * syy) ** 0.5

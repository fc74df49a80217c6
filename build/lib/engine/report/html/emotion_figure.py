"""Per interactive dataset, each model's mean seeker emotion by turn: Plotly figure JSON like figures.py's.

x is the seeker's message number over the whole episode (0: the opening, then one per exchange, sessions
one after another); y the mean emotion (0-100) over the episodes still going at that point, so an
episode that ended early leaves the later means (the hover says how many episodes each mean has).
Nothing without stored turns: a plain suite's page has no such figure.
"""

from __future__ import annotations

import duckdb
import plotly.graph_objects as go

from engine.report.estimated import relation_exists
from engine.report.html.figures import AXIS, LAYOUT, PALETTE, _json

_SQL = """
WITH said AS (
    SELECT model, dataset, emotion,
           row_number() OVER (PARTITION BY model, dataset, item_id, sample ORDER BY session, turn) - 1 AS k
    FROM turns WHERE role = 'seeker' AND status = 'ok' AND emotion IS NOT NULL
)
SELECT dataset, model, k, avg(emotion), count(*) FROM said GROUP BY ALL ORDER BY dataset, model, k
"""


def emotion_figures(con: duckdb.DuckDBPyConnection) -> list[dict]:
    if not relation_exists(con, "turns"):
        return []
    by_ds: dict[str, dict[str, list[tuple[int, float, int]]]] = {}
    for ds, model, k, mean, n in con.execute(_SQL).fetchall():
        by_ds.setdefault(ds, {}).setdefault(model, []).append((k, mean, n))
    out = []
    for ds, per_model in by_ds.items():
        fig = go.Figure(layout=dict(LAYOUT, xaxis=dict(AXIS, title="seeker message (0: opening)", dtick=1),
                                    yaxis=dict(AXIS, title="mean seeker emotion (0-100)", range=[0, 100])))
        for i, (model, pts) in enumerate(per_model.items()):
            fig.add_trace(go.Scatter(x=[p[0] for p in pts], y=[p[1] for p in pts], customdata=[p[2] for p in pts],
                                     mode="lines+markers", name=model, line=dict(color=PALETTE[i % len(PALETTE)]),
                                     hovertemplate=f"{model}: %{{y:.1f}} (%{{customdata}} episodes)<extra></extra>"))
        out.append({"id": f"emotion-{ds}", "title": f"{ds}: mean seeker emotion by turn", "figure": _json(fig),
                    "caption": "The simulated seeker's emotion after each companion reply, averaged over the "
                               "episodes still going at that message (ours, after SAGE; not a figure of the paper)."})
    return out

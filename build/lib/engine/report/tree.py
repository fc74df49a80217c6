"""The drill-down's nodes, rendered as an indented text tree or one row per node (Markdown, CSV)."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

from engine.report.estimated import ESTIMATED_MARK, marked
from engine.report.table import Column, Sheet, pct, span, wrap
from engine.report.terminal import one_line


@dataclass
class Node:
    label: str
    score: float | None
    coverage: float | None
    detail: str = ""
    children: list[Node] = field(default_factory=list)
    kind: str = ""  # ability, sub_ability, level, task, dataset (the intervals view's levels, plus level)
    key: str = ""  # the node's id in the suite
    ci: tuple[float, float] | None = None  # the 95% interval, when the intervals view has it
    estimated: bool = False  # an estimate from part of a dataset's items went into the score


def tree_lines(head: str, root: Node, suite: tuple[str, str], width: int) -> list[str]:
    """The drill-down as an indented tree; what does not fit after a label goes on the next line."""
    ci = f" [{span(*root.ci)}]" if root.ci else ""
    est = f", {ESTIMATED_MARK} estimated" if root.estimated else ""
    lines = wrap(one_line(f"{root.label} — {suite[0]} {suite[1]} — {head}{ci}, coverage {pct(root.coverage)}{est}"),
                 width)

    def add(n: Node, lead: str, last: bool) -> None:
        score = "no data" if n.score is None else marked(n.estimated, n.score)
        start = f"{lead}{'└── ' if last else '├── '}{score:>7}" + (f" [{span(*n.ci)}]" if n.ci else "")
        start += f"  {one_line(n.label)}"
        extra = f"cov {pct(n.coverage)}" + (f"  {one_line(n.detail)}" if n.detail else "")
        inner = lead + ("    " if last else "│   ")
        if len(start) + 2 + len(extra) <= width:
            lines.append(f"{start}  {extra}")
        else:
            lines.append(start)
            pad = inner + ("│   " if n.children else "    ") + " " * 5
            lines.extend(textwrap.wrap(extra, width, initial_indent=pad, subsequent_indent=pad,
                                       break_long_words=False, break_on_hyphens=False))
        for i, c in enumerate(n.children):
            add(c, inner, i == len(n.children) - 1)

    for i, c in enumerate(root.children):
        add(c, "", i == len(root.children) - 1)
    return lines


def drilldown_sheet(head: str, root: Node, suite: tuple[str, str]) -> Sheet:
    """The drill-down flattened depth first, one row per node, for Markdown and CSV."""
    rows: list[tuple[int, Node]] = []

    def walk(n: Node, depth: int) -> None:
        rows.append((depth, n))
        for c in n.children:
            walk(c, depth + 1)

    walk(root, 0)
    cols = [Column("Level", tuple(n.kind for _, n in rows), right=False),
            Column("Node", tuple("· " * d + n.label for d, n in rows), right=False),
            Column("Score", tuple(marked(n.estimated, n.score) for _, n in rows)),
            Column("Coverage", tuple(pct(n.coverage) for _, n in rows)),
            Column("Detail", tuple(n.detail for _, n in rows), right=False)]
    if any(n.ci for _, n in rows):
        cols.insert(3, Column("95% CI", tuple(span(*n.ci) if n.ci else "—" for _, n in rows)))
    header = ["depth", "level", "id", "name", "score", "ci_low", "ci_high", "coverage", "detail"]
    data = [[d, n.kind, n.key, n.label, n.score, *(n.ci or (None, None)), n.coverage, n.detail] for d, n in rows]
    return Sheet(f"{root.label} — {suite[0]} {suite[1]} — {head}", cols, header, data)

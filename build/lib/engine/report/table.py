"""Report tables as terminal text, GitHub Markdown and CSV.

Text fits a width (80 on a pipe): one table when it fits; otherwise the
columns after the key columns (rank, model) go into stacked tables that each
repeat the keys; when even one column beside the keys does not fit, one
record per row. A cell is never cut or wrapped: a long model name widens its
column, and a header wider than its cells gives way to its abbreviation,
explained in a legend line.
"""

from __future__ import annotations

import csv
import io
import os
import sys
import textwrap
from collections.abc import Iterable
from typing import Any, TextIO

import msgspec

from engine.report.terminal import one_line, printable


class Column(msgspec.Struct, frozen=True):
    header: str
    cells: tuple[str, ...]
    short: str = ""  # the terminal's header when `header` is wider than the cells
    right: bool = True


def fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def pct(x: float | None) -> str:
    return "0%" if not x else ("100%" if x >= 0.9995 else f"{100 * x:.1f}%")


def span(lo: float | None, hi: float | None, digits: int = 2) -> str:
    """'71.20–80.30' (an en dash: a bound may be negative); a rank range that is one rank is that rank."""
    if lo is None or hi is None:
        return "—"
    if not digits and lo == hi:
        return f"{lo:.0f}"
    return f"{lo:.{digits}f}–{hi:.{digits}f}"


def output_width(stream: TextIO | None = None) -> int:
    """The terminal's width; 80 on a pipe or file, unless COLUMNS says otherwise."""
    stream = stream or sys.stdout
    cols = os.environ.get("COLUMNS", "")
    if cols.isdigit() and int(cols) > 0:
        return int(cols)
    if stream.isatty():
        from rich.console import Console

        return Console(file=stream).width
    return 80


def _cleaned(columns: list[Column]) -> list[Column]:
    """Headers and cells without control characters (engine/report/terminal.py): widths count what shows."""
    return [msgspec.structs.replace(c, header=one_line(c.header), short=one_line(c.short),
                                    cells=tuple(one_line(x) for x in c.cells)) for c in columns]


def _abbreviated(columns: list[Column]) -> list[Column]:
    """Each header wider than its cells replaced by its abbreviation, if it has one."""
    return [msgspec.structs.replace(c, header=c.short) if c.short and len(c.header) > max(map(len, c.cells)) else c
            for c in columns]


def _block(cols: list[Column], sep: str, breaks: set[int]) -> list[str]:
    heads = [c.header for c in cols]
    widths = [max(len(h), *(len(x) for x in c.cells)) for h, c in zip(heads, cols)]

    def line(cells: list[str]) -> str:
        return sep.join(x.rjust(w) if c.right else x.ljust(w) for x, w, c in zip(cells, widths, cols)).rstrip()

    rule = sep.join("-" * w for w in widths)
    out = [line(heads), rule]
    for i in range(len(cols[0].cells)):
        if i in breaks:
            out.append(rule)
        out.append(line([c.cells[i] for c in cols]))
    return out


def _width(cols: list[Column], sep: str) -> int:
    return sum(max(len(c.header), *(len(x) for x in c.cells)) for c in cols) + len(sep) * (len(cols) - 1)


def text_table(columns: list[Column], width: int, keys: int = 2,
               breaks: Iterable[int] = ()) -> tuple[list[str], list[str]]:
    """Lines no wider than `width` (unless one cell is), and the legend of the abbreviations used.

    `breaks`: row indices a rule precedes.
    """
    breaks = set(breaks)
    if not columns or not columns[0].cells:
        return [], []
    columns = _cleaned(columns)
    if _width(columns, "  ") <= width:
        return _block(columns, "  ", breaks), []
    short = _abbreviated(columns)
    used = [f"{s.header} = {c.header}" for s, c in zip(short, columns) if s.header != c.header]
    for sep in ("  ", " "):
        if _width(short, sep) <= width:
            return _block(short, sep, breaks), used
    key, rest = short[:keys], short[keys:]
    if not rest or any(_width(key + [c], " ") > width for c in rest):
        return _records(columns, width, keys), []
    blocks: list[list[Column]] = [[]]
    for c in rest:  # greedy: as many columns as fit beside the keys, in order
        if blocks[-1] and _width(key + blocks[-1] + [c], "  ") > width:
            blocks.append([])
        blocks[-1].append(c)
    out: list[str] = []
    for b in blocks:
        out += ([""] if out else []) + _block(key + b, "  ", breaks)
    return out, used


def _records(columns: list[Column], width: int, keys: int) -> list[str]:
    """One record per row: the keys on a line, then 'header value' pairs wrapped to the width."""
    out: list[str] = []
    for i in range(len(columns[0].cells)):
        out.append("  ".join(c.cells[i] for c in columns[:keys]))
        pairs = [f"{c.header} {c.cells[i]}" for c in columns[keys:]]
        out += textwrap.wrap("   ".join(pairs), width, initial_indent="    ", subsequent_indent="    ",
                             break_long_words=False, break_on_hyphens=False)
    return out


def wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)


def markdown_table(columns: list[Column]) -> list[str]:
    """A GitHub table with the full headers."""

    def row(cells: Iterable[str]) -> str:
        return "| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |"

    columns = _cleaned(columns)
    out = [row(c.header for c in columns), "|" + "|".join("---:" if c.right else ":---" for c in columns) + "|"]
    out += [row(c.cells[i] for c in columns) for i in range(len(columns[0].cells) if columns else 0)]
    return out


def write_csv(out: TextIO, header: list[str], rows: Iterable[Iterable[Any]]) -> None:
    """Header and rows; None is empty, floats keep full precision (repr round-trips)."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow([_cell(v) for v in r])


class Sheet(msgspec.Struct):
    """One report in every format: columns for text and Markdown, raw rows for CSV."""

    title: str
    columns: list[Column]
    csv_header: list[str]
    csv_rows: list[list[Any]]
    notes: list[str] = []
    breaks: list[int] = []  # row indices a rule precedes (text)


def render(sheet: Sheet, form: str, width: int) -> str:
    if form == "csv":
        buf = io.StringIO()
        write_csv(buf, sheet.csv_header, sheet.csv_rows)
        return buf.getvalue()
    title, notes = one_line(sheet.title), [one_line(n) for n in sheet.notes]
    if form == "markdown":
        lines = [f"**{title}**", "", *markdown_table(sheet.columns)]
        # a note's leading '*' (the unranked marker) stays a character, not a bullet
        lines += [""] * bool(notes) + ["- " + n.replace("*", "\\*", 1) for n in notes]
        return printable("\n".join(lines) + "\n")
    table, keys = text_table(sheet.columns, width, 2, sheet.breaks)
    lines = [*wrap(title, width), "", *table]
    if keys:
        lines += wrap("Legend: " + ", ".join(keys), width)
    for n in notes:
        lines += wrap(n, width)
    return printable("\n".join(lines) + "\n")


def _cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v) if isinstance(v, float) else v

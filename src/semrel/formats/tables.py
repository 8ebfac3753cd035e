"""Rendering rows of results as text, Markdown, CSV/TSV, JSON, LaTeX or trec_eval lines."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from typing import Sequence

from ..terminal import safe

Cell = str | float | int | None
FORMATS = ("table", "markdown", "csv", "tsv", "json", "jsonl", "latex", "trec")


class Latex(str):
    """Cell text already written in LaTeX (e.g. a value with `$^{ab}$` marks): not escaped."""


@dataclass(frozen=True)
class Table:
    """A header and rows of cells; numbers are formatted only when rendered."""

    header: Sequence[str]
    rows: Sequence[Sequence[Cell]]


def cell_text(value: Cell, places: int) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value) and abs(value) >= 1 and places == 0:
            return str(int(value))
        return f"{value:.{places}f}"
    return str(value)


def _is_number(value: Cell) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def render(table: Table, fmt: str, places: int = 4) -> str:
    """`table` in one of the tabular formats (table, markdown, csv, tsv, latex)."""
    # text for people: made terminal-safe before widths are measured, so columns stay aligned
    texts = [[safe(cell_text(v, places)) for v in row] for row in table.rows]
    table = Table([safe(h) for h in table.header], table.rows)
    if fmt in ("csv", "tsv"):
        out = io.StringIO()
        writer = csv.writer(out, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
        writer.writerow(table.header)
        writer.writerows(texts)
        return out.getvalue()
    numeric = [any(_is_number(row[i]) for row in table.rows) for i in range(len(table.header))]
    if fmt == "latex":
        # ~ ^ and \ are no characters in LaTeX text (a non-breaking space, an error, a command): named instead
        escape = str.maketrans({c: "\\" + c for c in "&%$#_{}"}
                               | {"\\": r"\textbackslash{}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"})
        spec = "".join("r" if n else "l" for n in numeric)
        lines = [f"\\begin{{tabular}}{{{spec}}}", "\\toprule"]
        lines.append(" & ".join(h.translate(escape) for h in table.header) + " \\\\")
        lines.append("\\midrule")
        lines += [" & ".join(t if isinstance(v, Latex) else t.translate(escape) for v, t in zip(cells, row)) + " \\\\"
                  for cells, row in zip(table.rows, texts)]
        lines += ["\\bottomrule", "\\end{tabular}"]
        return "\n".join(lines) + "\n"
    widths = [max([len(h)] + [len(row[i]) for row in texts]) for i, h in enumerate(table.header)]

    def line(cells: Sequence[str]) -> list[str]:
        return [c.rjust(w) if n else c.ljust(w) for c, w, n in zip(cells, widths, numeric)]

    if fmt == "markdown":
        rule = [("-" * (w - 1) + ":") if n else "-" * w for w, n in zip(widths, numeric)]
        rows = [line(table.header), rule] + [line(r) for r in texts]
        return "\n".join("| " + " | ".join(r) + " |" for r in rows) + "\n"
    rows = [line(table.header), ["-" * w for w in widths]] + [line(r) for r in texts]
    return "\n".join("  ".join(r).rstrip() for r in rows) + "\n"

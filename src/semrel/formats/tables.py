"""Rendering rows of results as text, Markdown, CSV/TSV, JSON, LaTeX or trec_eval lines."""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from typing import Sequence

from ..evaluation.metrics import Evaluation

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
    texts = [[cell_text(v, places) for v in row] for row in table.rows]
    if fmt in ("csv", "tsv"):
        out = io.StringIO()
        writer = csv.writer(out, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
        writer.writerow(table.header)
        writer.writerows(texts)
        return out.getvalue()
    numeric = [any(_is_number(row[i]) for row in table.rows) for i in range(len(table.header))]
    if fmt == "latex":
        escape = str.maketrans({c: "\\" + c for c in "&%$#_{}"})
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


def evaluation_table(results: Sequence[Evaluation], per_query: bool) -> Table:
    """One column per run; a row per measure (and per query and measure with per_query)."""
    measures = list(results[0].values)
    header = (["query", "measure"] if per_query else ["measure"]) + [r.run_name for r in results]
    rows: list[list[Cell]] = []
    if per_query:
        for i, q in enumerate(results[0].query_ids):
            rows += [[q, m.name] + [_value(m, r.values[m][i]) for r in results] for m in measures]
        rows += [["all", m.name] + [_value(m, r.aggregate(m)) for r in results] for m in measures]
    else:
        rows = [[m.name] + [_value(m, r.aggregate(m)) for r in results] for m in measures]
    return Table(header, rows)


def _value(measure, value: float) -> float | int:
    return int(value) if measure.summed else float(value)


def evaluation_records(results: Sequence[Evaluation], per_query: bool) -> list[dict]:
    """{"run", "query_id", "measure", "value"} for each value, per-query rows before 'all'."""
    records = []
    for r in results:
        if per_query:
            for i, q in enumerate(r.query_ids):
                records += [{"run": r.run_name, "query_id": q, "measure": m.name, "value": _value(m, v[i])} for m, v in r.values.items()]
        records += [{"run": r.run_name, "query_id": "all", "measure": m.name, "value": _value(m, r.aggregate(m))} for m in r.values]
    return records


def render_evaluations(results: Sequence[Evaluation], fmt: str, per_query: bool = False, places: int = 4) -> str:
    if fmt == "jsonl":
        return "".join(json.dumps(rec) + "\n" for rec in evaluation_records(results, per_query))
    if fmt == "json":
        nested: dict = {}
        for rec in evaluation_records(results, per_query):
            nested.setdefault(rec["run"], {}).setdefault(rec["query_id"], {})[rec["measure"]] = rec["value"]
        return json.dumps(nested, indent=2) + "\n"
    if fmt == "trec":
        lines, named = [], set()
        for rec in evaluation_records(results, per_query):
            if rec["query_id"] == "all" and rec["run"] not in named:  # trec_eval opens each summary with its run
                named.add(rec["run"])
                lines.append(f"{'runid':<22}\tall\t{rec['run']}")
            measure = next(m for m in results[0].values if m.name == rec["measure"])
            value = rec["value"]
            text = str(value) if isinstance(value, int) else f"{value:.{places}f}"
            lines.append(f"{measure.trec_name:<22}\t{rec['query_id']}\t{text}")
        return "\n".join(lines) + "\n"
    return render(evaluation_table(results, per_query), fmt, places)

"""Evaluations as text: the tables of `semrel eval` in every output format, trec_eval's lines included."""

from __future__ import annotations

import math
from typing import Any, Sequence

from ..formats.jsonl import json_text
from ..formats.tables import Cell, Table, render
from .measures import Kind, Measure, trec_order
from .metrics import Evaluation


def _scored_ids(results: Sequence[Evaluation]) -> list[str]:
    """The queries with a per-query row: every run's scored queries, in the qrels' (sorted) order."""
    wanted = set().union(*(r.scored_ids for r in results))
    return [q for q in results[0].query_ids if q in wanted]


def evaluation_table(results: Sequence[Evaluation], per_query: bool, summary: bool = True) -> Table:
    """One column per run; a row per measure (and per query and measure with per_query; only those without summary)."""
    measures = list(results[0].values)
    header = (["query", "measure"] if per_query else ["measure"]) + [r.run_name for r in results]
    rows: list[list[Cell]] = []
    if per_query:
        columns = [r.per_query_values() for r in results]
        for q in _scored_ids(results):
            rows += [[q, results[0].label(m), *(cell_value(m, column[m].get(q), r.zscored) for r, column in zip(results, columns))]
                     for m in measures]
        if summary:
            rows += [["all", results[0].label(m), *(cell_value(m, r.aggregate(m), r.zscored) for r in results)] for m in measures]
    else:
        rows = [[results[0].label(m), *(cell_value(m, r.aggregate(m), r.zscored) for r in results)] for m in measures]
    return Table(header, rows)


def cell_value(measure: Measure, value: Any, zscored: bool = False) -> Cell:
    """A value as its table shows it: counts (NumRet, NumRelRet) as whole numbers, text as text."""
    if value is None:
        return None
    if measure.kind is Kind.TEXT:
        return str(value)
    return int(value) if (measure.summed or measure.kind is Kind.COUNT) and not zscored else float(value)


def evaluation_records(results: Sequence[Evaluation], per_query: bool, summary: bool = True) -> list[dict]:
    """{"run", "query_id", "measure", "value"} for each value, per-query rows before 'all' (relstring,
    which has no 'all' value, only per query; no 'all' rows without summary)."""
    records = []
    for r in results:
        if per_query:
            for q, values in r.per_query_rows():
                records += [{"run": r.run_name, "query_id": q, "measure": r.label(m), "value": cell_value(m, v, r.zscored)}
                            for m, v in values]
        if summary:
            records += [{"run": r.run_name, "query_id": "all", "measure": r.label(m), "value": cell_value(m, value, r.zscored)}
                        for m in r.values if (value := r.aggregate(m)) is not None]
    return records


def _trec_value(m: Measure, value: Any, places: int, zscored: bool = False) -> str:
    if m.kind is Kind.TEXT:
        return f"'{value}'" if m.family == "relstring" else str(value)
    if m.kind is Kind.COUNT and not zscored:
        return str(int(value))
    text = f"{float(value):.{places}f}"
    return text if math.isfinite(value) else text.rjust(6)  # as trec_eval's %6.4f pads an inf: '   inf'


def _trec_label(result: Evaluation, m: Measure) -> str:
    """trec_eval's name padded to 22 characters (a Z goes before the padded name, as trec_eval -Z prints it)."""
    padded = f"{m.trec_name:<22}"
    return "Z" + padded if result.label(m) != m.name else padded


def trec_lines(results: Sequence[Evaluation], per_query: bool = False, places: int = 4, summary: bool = True) -> str:
    """trec_eval's output: `name<TAB>query<TAB>value` lines, names padded to 22 characters, measures in
    trec_eval's order, per-query lines (with -q) before each run's summary (none without summary, trec_eval -n).
    trec_eval scores one run; with several, each summary opens with its `runid` line so the blocks can be told apart."""
    lines = []
    for result in results:
        measures = trec_order(result.values)
        if per_query:
            for q, values in result.per_query_rows(measures):
                lines += [f"{_trec_label(result, m)}\t{q}\t{_trec_value(m, v, places, result.zscored)}"
                          for m, v in values if m.entry.per_query_line]
        if not summary:
            continue
        if len(results) > 1 and not any(m.family == "runid" for m in measures):
            lines.append(f"{'runid':<22}\tall\t{result.run_tag or result.run_name}")
        for m in measures:
            if m.entry.summary_line:
                value = _trec_value(m, result.aggregate(m), places, result.zscored)
                lines.append(f"{_trec_label(result, m)}\tall\t{value}")
    return "\n".join(lines) + "\n" if lines else ""


def render_evaluations(results: Sequence[Evaluation], fmt: str, per_query: bool = False, places: int = 4,
                       summary: bool = True) -> str:
    if fmt == "jsonl":
        return "".join(json_text(rec, None) + "\n" for rec in evaluation_records(results, per_query, summary))
    if fmt == "json":
        nested: dict = {}
        for rec in evaluation_records(results, per_query, summary):
            nested.setdefault(rec["run"], {}).setdefault(rec["query_id"], {})[rec["measure"]] = rec["value"]
        return json_text(nested) + "\n"  # a -Z mean of nan is null: JSON has no NaN
    if fmt == "trec":
        return trec_lines(results, per_query, places, summary)
    return render(evaluation_table(results, per_query, summary), fmt, places)

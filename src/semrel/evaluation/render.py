"""Evaluations as text: the tables of `semrel eval` in every output format, trec_eval's lines included."""

from __future__ import annotations

import json
from typing import Sequence

from ..formats.tables import Cell, Table, render
from .metrics import Evaluation


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

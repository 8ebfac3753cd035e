"""The HTML report: one self-contained page (templates/report.html.j2) with tables and inline SVG plots.

Every section is optional and appears when its inputs are given: golden-set stats, the
judge's score distributions, the metric table with significance marks, per-query lift,
threshold sensitivity curves and agreement figures. All text from data is escaped by Jinja2.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from .. import __version__
from ..analysis.compare import compare_evaluations, legend, tests_table
from ..analysis.lift import changes_table, lift, lift_table
from ..analysis.significance import StatSettings
from ..errors import FormatError, UsageError
from ..evaluation.files import evaluate_files
from ..evaluation.measures import Measure, numeric_measures, parse_measures
from ..formats import read_qrels, read_run
from ..formats.corpus import read_corpus, read_golden
from ..formats.files import atomic_writer, display_name, read_text
from ..formats.jsonl import read_jsonl, require
from ..formats.judgments import COMPONENTS, read_judgments
from ..formats.manifest import read_params, write_manifest
from ..formats.tables import Table, cell_text
from ..golden.validate import golden_stats, stats_tables
from ..progress import Steps, no_progress
from ..records import GoldenItem, Judgment
from ..resources import template_dir

SECTIONS = ("golden", "scores", "metrics", "lift", "sensitivity", "agreement")


@dataclass(frozen=True)
class SensitivityPoint:
    """A run's value of a measure when the qrels are labelled at `threshold`."""

    threshold: float
    run: str
    measure: str
    value: float


@dataclass(frozen=True)
class ReportInputs:
    """What the report is made from; each section needs only its own inputs."""

    qrels: str | None = None
    runs: Sequence[str] = ()
    measures: Sequence[Measure] = ()
    settings: StatSettings = StatSettings()
    baseline: str | None = None
    all_pairs: bool = False
    rel_level: int = 1
    golden: str | None = None
    corpus: str | None = None
    judgments: str | None = None
    on: str | None = None  # None: as the qrels' manifest says, else R
    thresholds: Sequence[float] = ()  # empty: as the qrels' manifest says
    base: str | None = None
    reranked: str | None = None
    depth: int | None = None
    top: int = 10
    sensitivity: Sequence[SensitivityPoint] = ()
    agreement: Mapping[str, Any] | None = None
    title: str = "semrel report"
    places: int = 4

    def chosen_measures(self) -> list[Measure]:
        return numeric_measures(parse_measures(self.measures), "report")

    def files(self) -> list[str]:
        """Every input file, for the manifest."""
        named = [self.qrels, *self.runs, self.golden, self.corpus, self.judgments, self.base, self.reranked]
        return [p for p in dict.fromkeys(named) if p]


@dataclass
class _Page:
    """The template's context, filled section by section."""

    title: str
    created: str
    signature: list[tuple[str, str]] = field(default_factory=list)
    judge_params: str | None = None
    warnings: list[str] = field(default_factory=list)
    sections: dict[str, Any] = field(default_factory=lambda: dict.fromkeys(SECTIONS))


def _plots():
    """semrel.report.plots, imported on first use: matplotlib costs half a second at every start of the CLI."""
    from . import plots

    return plots


def _html_table(table: Table, places: int) -> dict[str, Any]:
    numeric = [any(isinstance(row[i], (int, float)) and not isinstance(row[i], bool) for row in table.rows)
               for i in range(len(table.header))]
    rows = [[cell_text(v, places) for v in row] for row in table.rows]
    return {"header": list(table.header), "rows": rows, "numeric": numeric}


def _signature(inputs: ReportInputs, qrels_params: Mapping[str, Any] | None) -> tuple[list[tuple[str, str]], dict | None, str, list[float]]:
    """(signature lines, the judge's params, component, thresholds). The component and thresholds come
    from the options, else the qrels' manifest (written by `semrel label`); the judge's settings from
    the judgments' manifest (written by `semrel judge`), else the `judge` entry of the qrels' manifest."""
    labelled = qrels_params or {}
    judge = (read_params(inputs.judgments) if inputs.judgments else None) or labelled.get("judge")
    judge = judge if isinstance(judge, dict) else None
    component = inputs.on or (labelled.get("on") if labelled.get("on") in COMPONENTS else "R")
    recorded = labelled.get("thresholds")
    numbers = isinstance(recorded, list) and all(isinstance(t, (int, float)) for t in recorded)
    thresholds = [float(t) for t in inputs.thresholds or (recorded if numbers else [])]
    unknown = "not recorded"

    def get(key: str) -> str:
        value = (judge or {}).get(key)
        return unknown if value is None else str(value)

    baseline = (judge or {}).get("baseline")
    rescaling = get("rescale")
    if isinstance(baseline, dict) and baseline.get("source"):
        rescaling += f" (baseline: {baseline['source']})"
    lines = [("model", get("model")), ("layer", get("layer")), ("idf", get("idf")), ("rescaling", rescaling),
             ("component", component), ("thresholds", ", ".join(f"{t:g}" for t in thresholds) or "none given")]
    return lines, judge, component, thresholds


def _score_section(judgments: list[Judgment], golden: list[GoldenItem] | None, component: str,
                   thresholds: list[float]) -> dict[str, Any]:
    """Score distributions of gold and other judged pairs, and how many of each reach each threshold."""
    scores = [(j.query_id, j.chunk_id, getattr(j, component)) for j in judgments]
    if golden is not None:
        gold = {(item.query_id, c) for item in golden for c in item.gold_chunk_ids}
        groups = {"gold": [s for q, c, s in scores if (q, c) in gold],
                  "not gold": [s for q, c, s in scores if (q, c) not in gold]}
    else:
        groups = {"judged pairs": [s for _, _, s in scores]}
    rows = [[t] + [sum(s >= t for s in values) / len(values) if values else None for values in groups.values()]
            for t in thresholds]
    table = Table(["threshold"] + [f"{name}: share at or above" for name in groups], rows)
    return {"plot": Markup(_plots().score_histogram(groups, thresholds, component)),
            "counts": {name: len(values) for name, values in groups.items()}, "table": _html_table(table, 3)}


def _metric_section(inputs: ReportInputs, warn: Callable[[str], None]) -> dict[str, Any]:
    results = evaluate_files(inputs.qrels, inputs.runs, inputs.chosen_measures(), inputs.rel_level, warn=warn)
    c = compare_evaluations(results, inputs.settings, baseline=inputs.baseline, all_pairs=inputs.all_pairs)
    rows = [{"key": c.letter(run), "run": run,
             "cells": [{"text": cell_text(c.value(run, m), inputs.places), "marks": c.marks(run, m)} for m in c.measures]}
            for run in c.runs]
    return {"measures": [m.name for m in c.measures], "rows": rows, "legend": legend(c),
            "queries": len(results[0].query_ids), "tests": _html_table(tests_table(c), inputs.places)}


def _lift_section(inputs: ReportInputs) -> tuple[dict[str, Any], list[str]]:
    qrels = read_qrels(inputs.qrels)
    result = lift(qrels, read_run(inputs.base), read_run(inputs.reranked), inputs.chosen_measures(), inputs.settings,
                  inputs.depth, None, inputs.top, inputs.rel_level)
    section = {
        "base": display_name(inputs.base), "reranked": display_name(inputs.reranked), "by": result.by.name,
        "table": _html_table(lift_table(result, inputs.places), inputs.places),
        "changes": _html_table(changes_table(result), inputs.places),
        "plot": Markup(_plots().change_bars([c.change for c in result.changes], result.by.name)),
        "queries": result.queries,
    }
    return section, result.warnings()


def _sensitivity_section(points: Sequence[SensitivityPoint], chosen: list[float]) -> dict[str, Any]:
    curves: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for p in points:
        curves.setdefault(p.measure, {}).setdefault(p.run, []).append((p.threshold, p.value))
    thresholds = sorted({p.threshold for p in points})
    return {"plot": Markup(_plots().sensitivity_curves(curves, chosen)), "points": len(points),
            "range": f"{thresholds[0]:g} to {thresholds[-1]:g}", "steps": len(thresholds)}


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """Nested key/values as ('a.b', text) rows (lists of objects numbered from 1), numbers shown to 4 decimals."""
    if isinstance(value, Mapping):
        return [row for k, v in value.items() for row in _flatten(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):  # e.g. agree's rankings
        return [row for i, v in enumerate(value, start=1) for row in _flatten(v, f"{prefix}.{i}")]
    if isinstance(value, float):
        return [(prefix, f"{value:.4f}")]
    if isinstance(value, (list, dict)):
        return [(prefix, json.dumps(value))]
    return [(prefix, str(value))]


def build_report(inputs: ReportInputs, warn: Callable[[str], None], steps: Steps = no_progress) -> str:
    """The report's HTML text."""
    if (inputs.base is None) != (inputs.reranked is None):
        raise UsageError("--base and --reranked go together")
    if (inputs.runs or inputs.base) and not inputs.qrels:
        raise UsageError("runs need qrels: give QRELS first")
    if inputs.on is not None and inputs.on not in COMPONENTS:
        raise UsageError(f"--on {inputs.on!r}: choose one of P, R, F")
    qrels_params = read_params(inputs.qrels) if inputs.qrels else None
    lines, judge, component, thresholds = _signature(inputs, qrels_params)
    page = _Page(inputs.title, _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), lines,
                 json.dumps(judge, indent=2, sort_keys=True, default=str) if judge else None)

    def note(message: str) -> None:
        page.warnings.append(message)
        warn(message)

    golden = read_golden(inputs.golden) if inputs.golden else None
    if golden is not None:
        with steps("report: golden set statistics", 0):
            counts, lengths = stats_tables(golden_stats(golden, read_corpus(inputs.corpus) if inputs.corpus else None))
            page.sections["golden"] = {"counts": _html_table(counts, 0), "lengths": _html_table(lengths, 1)}
    if inputs.judgments:
        with steps("report: judge score distributions", 0):
            page.sections["scores"] = _score_section(read_judgments(inputs.judgments), golden, component, thresholds)
    if inputs.runs:
        with steps(f"report: evaluating and testing {len(inputs.runs)} runs", 0):
            page.sections["metrics"] = _metric_section(inputs, note)
    if inputs.base:
        with steps("report: reranking lift", 0):
            page.sections["lift"], problems = _lift_section(inputs)
        for problem in problems:
            note(problem)
    if inputs.sensitivity:
        with steps("report: threshold sensitivity", 0):
            page.sections["sensitivity"] = _sensitivity_section(inputs.sensitivity, thresholds)
    if inputs.agreement is not None:
        page.sections["agreement"] = _flatten(inputs.agreement)
    if not any(page.sections.values()):
        raise UsageError("nothing to report: give QRELS and runs, --golden, --judgments, --base/--reranked, "
                         "--sensitivity or --agreement")
    environment = Environment(loader=FileSystemLoader(str(template_dir())), autoescape=True,
                              undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return environment.get_template("report.html.j2").render(page=page, version=__version__)


def write_report(inputs: ReportInputs, output: str | os.PathLike, warn: Callable[[str], None], steps: Steps = no_progress,
                 extra_inputs: Sequence[str | os.PathLike] = ()) -> None:
    """The report written to `output` with its manifest (`extra_inputs`: files read before, e.g. curves)."""
    html = build_report(inputs, warn, steps)
    with atomic_writer(output) as out:
        out.write(html)
    write_manifest(output, inputs=[*inputs.files(), *extra_inputs], params={
        "title": inputs.title, "measures": [m.name for m in inputs.measures], "test": inputs.settings.test,
        "correction": inputs.settings.correction, "seed": inputs.settings.seed})


def read_sensitivity(path: str | os.PathLike) -> list[SensitivityPoint]:
    """Rows of threshold, run, measure, value: JSON Lines objects, or CSV/TSV with that header."""
    text = read_text(path)
    name = display_name(path)
    if text.lstrip().startswith("{"):
        points = [SensitivityPoint(float(require(o, "threshold", path, n, (int, float))), str(require(o, "run", path, n)),
                                   str(require(o, "measure", path, n)), float(require(o, "value", path, n, (int, float))))
                  for n, o in read_jsonl(path)]
    else:
        dialect = "excel-tab" if "\t" in text.split("\n", 1)[0] else "excel"
        reader = csv.DictReader(io.StringIO(text), dialect=dialect)
        wanted = ("threshold", "run", "measure", "value")
        if not reader.fieldnames or not set(wanted) <= set(reader.fieldnames):
            raise FormatError(name, f"expected a header with {', '.join(wanted)}", line=1,
                              hint="or JSON Lines objects with those keys")
        points = []
        for n, row in enumerate(reader, start=2):
            try:
                points.append(SensitivityPoint(float(row["threshold"]), row["run"], row["measure"], float(row["value"])))
            except (TypeError, ValueError):
                raise FormatError(name, "threshold and value must be numbers", line=n) from None
    if not points or not all(math.isfinite(p.threshold) and math.isfinite(p.value) for p in points):
        raise FormatError(name, "no rows, or a threshold or value that is not a finite number")
    return points


def read_agreement(path: str | os.PathLike) -> dict[str, Any]:
    """A JSON object of agreement figures (free-form keys and values)."""
    try:
        value = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise FormatError(display_name(path), f"invalid JSON ({exc.msg})", line=exc.lineno) from None
    if not isinstance(value, dict):
        raise FormatError(display_name(path), f"expected a JSON object, found {type(value).__name__}")
    return value

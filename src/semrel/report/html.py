"""The HTML report: one self-contained page (templates/report.html.j2) with tables and inline SVG plots.

Every section is optional and appears when its inputs are given: golden-set stats, the
judge's score distributions, the metric table with significance marks, per-query lift,
threshold sensitivity curves and agreement figures. All text from data is escaped by Jinja2.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import itertools
import json
import math
import os
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pyarrow.compute as pc
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from ..analysis.agreement import tau_undefined
from ..analysis.compare import Reversal, compare_evaluations, legend, reversals, tests_table
from ..analysis.lift import TOP_QUERIES, changes_table, lift, lift_table
from ..analysis.ppi import ReviewedSample, corrected_estimates, estimable, estimates_table, sampled_pairs
from ..analysis.sensitivity import cliff_warnings
from ..analysis.significance import StatSettings, level_text
from ..errors import FormatError, UsageError, ValidationError
from ..evaluation.doclevel import CorpusMapping, Listed
from ..evaluation.files import evaluate_files, read_runs
from ..evaluation.measures import Measure, numeric_measures, parse_measures
from ..formats import read_qrels, read_run
from ..formats.corpus import read_golden, unique_chunks
from ..formats.files import STDIO, atomic_writer, check_input_file, display_name, read_text
from ..formats.jsonl import loads, read_jsonl, require
from ..formats.judgments import PROBABILITY, SCORES, JudgmentColumns, no_judgments, read_judgment_columns
from ..formats.manifest import manifest_is_stale, manifest_path, outputs_with_manifests, read_params, with_manifests, write_manifest
from ..formats.tables import Table, cell_text
from ..golden.validate import golden_stats, stats_tables
from ..judging.labels import (
    DEFAULT_COMPONENT,
    IN_SAMPLE,
    ProbabilityRule,
    Rule,
    ThresholdRule,
    fitted_pairs,
    has_features,
    label_warnings,
    recorded_rule,
)
from ..progress import Steps, counted, no_progress
from ..records import GoldenItem, Qrels, is_number, is_whole
from ..resources import semrel_version, template_dir
from ..review.adjudicate import reviewed_sample
from ..terminal import agreeing, quantity

SECTIONS = ("golden", "scores", "metrics", "estimates", "lift", "sensitivity", "agreement")


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
    gold_qrels: str | None = None  # a second qrels (the gold chunks) whose metrics sit beside those of `qrels`
    measures: Sequence[Measure] = ()
    settings: StatSettings = StatSettings()
    baseline: str | None = None
    all_pairs: bool = False
    rel_level: int = 1
    golden: str | None = None
    corpus: str | None = None
    judgments: str | None = None
    on: str | None = None  # the score the judge-score plots show; None: the labels' rule's (their manifest), else R
    thresholds: Sequence[float] = ()  # the thresholds drawn there and on the curves; empty: the labels' rule's
    base: str | None = None
    reranked: str | None = None
    depth: int | None = None
    top: int = TOP_QUERIES
    sensitivity: Sequence[SensitivityPoint] = ()
    sensitivity_on: str | None = None  # the score the curves swept and the threshold they chose (their manifest)
    sensitivity_at: float | None = None
    agreement: Mapping[str, Any] | None = None
    reviewed: str | None = None  # a review database: the runs' measures corrected by its random sample (semrel estimate)
    adjudicate: str = "majority"  # how its reviewers' conflicting grades are settled
    title: str = "semrel report"
    places: int = 4

    def chosen_measures(self) -> list[Measure]:
        return numeric_measures(parse_measures(self.measures), "report")

    def files(self) -> list[str]:
        """Every input file, for the manifest."""
        named = [self.qrels, self.gold_qrels, *self.runs, self.golden, self.corpus, self.judgments, self.base, self.reranked,
                 self.reviewed]
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


def made_at() -> _dt.datetime:
    """When the report says it was made: now, or SOURCE_DATE_EPOCH where set (the reproducible-builds convention),
    so the same inputs make the same bytes; its manifest's created_utc still records when it was written."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        return _dt.datetime.now(_dt.timezone.utc)
    try:
        return _dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc)
    except (ValueError, OverflowError, OSError):
        raise UsageError(f"SOURCE_DATE_EPOCH={epoch!r}: give the report's date as whole seconds since 1970-01-01 UTC, "
                         "or unset it") from None


def _plots():
    """semrel.report.plots, imported on first use: matplotlib costs half a second at every start of the CLI."""
    from . import plots

    return plots


def _html_table(table: Table, places: int) -> dict[str, Any]:
    numeric = [any(isinstance(row[i], (int, float)) and not isinstance(row[i], bool) for row in table.rows)
               for i in range(len(table.header))]
    rows = [[cell_text(v, places) for v in row] for row in table.rows]
    return {"header": list(table.header), "rows": rows, "numeric": numeric}


def _judge_settings(inputs: ReportInputs, qrels_params: Mapping[str, Any] | None) -> dict | None:
    """The judge's settings: from the judgments' manifest (written by `semrel judge`), else the `judge` entry
    of the qrels' manifest (written by `semrel label`)."""
    judge = (read_params(inputs.judgments) if inputs.judgments else None) or (qrels_params or {}).get("judge")
    return judge if isinstance(judge, dict) else None


def _signature(judge: Mapping[str, Any] | None, label_rule: str, drawn: str | None) -> list[tuple[str, str]]:
    """The judge's settings, the rule that made the labels and, where --on/--threshold/--grades are given, what
    the plots draw instead (`drawn`)."""
    unknown = "not recorded"

    def get(key: str) -> str:
        value = (judge or {}).get(key)
        return unknown if value is None else str(value)

    baseline = (judge or {}).get("baseline")
    rescaling = get("rescale")
    if isinstance(baseline, dict) and baseline.get("source"):
        rescaling += f" (baseline: {baseline['source']})"
    lines = [("model", get("model")), ("layer", get("layer")), ("idf", get("idf")), ("rescaling", rescaling),
             ("label rule", label_rule)]
    return lines + [("plots drawn at", f"{drawn} (--on/--threshold/--grades)")] if drawn else lines


def _label_rule_text(qrels: str | None, rule: Rule | None, qrels_params: Mapping[str, Any] | None) -> str:
    """How QRELS' labels were made, as their manifest records it; where none records it, that is said: no
    default stands in for a rule nobody recorded."""
    if qrels is None:
        return "no qrels given"
    name = display_name(qrels)
    if rule is not None:
        fallback = (qrels_params or {}).get("fallback")
        pairs = fallback.get("pairs") if isinstance(fallback, dict) else None
        if isinstance(rule, ProbabilityRule) and is_whole(pairs) and pairs:
            return (f"{rule.describe()}; {quantity(pairs, 'pair')} without {'p' if rule.cuts_on_p else 'features'}: "
                    f"{rule.fallback.describe()}")
        return rule.describe()
    if describe_qrels(qrels).key == "gold":
        return f"none: {name} holds the golden set's gold chunks"
    if manifest_is_stale(qrels):
        return f"not recorded: {name} changed since its manifest was written"
    return f"not recorded: {name} has no manifest from `semrel label`"


def _cuts_on_judge_score(rule: Rule) -> bool:
    """Whether the labels are cuts on a score the judge wrote (all but a refit of every coefficient, whose p is
    recomputed from the features)."""
    return not isinstance(rule, ProbabilityRule) or rule.cuts_on_p


def _drawn(inputs: ReportInputs, rule: Rule | None) -> tuple[str, list[float]]:
    """The score the judge-score plots show and the thresholds drawn there and on the sensitivity curves:
    --on and --threshold/--grades, else the labels' rule on the judge's own score, else R and none."""
    component = inputs.on or (rule.on if rule is not None else DEFAULT_COMPONENT)
    if inputs.thresholds:
        return component, list(ThresholdRule(component, tuple(inputs.thresholds)).thresholds)  # checked as `label` checks them
    if rule is not None and component == rule.on and _cuts_on_judge_score(rule):
        return component, list(rule.judge_thresholds)
    return component, []


def _drawn_text(component: str, thresholds: Sequence[float]) -> str:
    return ThresholdRule(component, tuple(thresholds)).describe() if thresholds else f"{component}, no thresholds"


def _made_by(rule: Rule | None, component: str, thresholds: Sequence[float]) -> bool:
    """Whether `thresholds` on `component` are the ones the labels' rule cut the judge's score at."""
    if rule is None or not _cuts_on_judge_score(rule):  # a refit's p is not the judge's, which the plots show
        return False
    made = rule.judge_thresholds
    return component == rule.on and len(made) == len(thresholds) and all(map(math.isclose, made, thresholds))


def _options_differ(inputs: ReportInputs, rule: Rule | None, component: str, thresholds: Sequence[float]) -> str | None:
    """The warning when --on/--threshold/--grades are not the rule that made QRELS' labels: the metrics are
    on the labels as they were made, only the plots take the options."""
    if rule is None or inputs.qrels is None or not (inputs.on or inputs.thresholds) or _made_by(rule, component, thresholds):
        return None
    drawn = _drawn_text(component, thresholds) + ("" if _cuts_on_judge_score(rule) else " on the judge's own p")
    return (f"{display_name(inputs.qrels)}: its labels were made by {rule.describe()}, as {manifest_path(inputs.qrels)} records, "
            f"not by {drawn} (--on/--threshold/--grades): the metrics are on its labels, only the judge-score plots and "
            f"sensitivity marks at {drawn}; to score at {drawn}, label again with those options (`semrel label`)")


def _score_section(judgments: JudgmentColumns, golden: list[GoldenItem] | None, component: str,
                   thresholds: list[float], lines: str, values: np.ndarray | None = None) -> dict[str, Any]:
    """Score distributions of gold and other judged pairs, and how many of each reach each threshold
    (`values`: the scores themselves, where they are not a judgment's field, e.g. a refit's p; `lines`: what
    the thresholds drawn are, for the caption)."""
    found = judgments.score(component) if values is None else values
    groups: dict[str, np.ndarray]
    if golden is not None:
        gold = {(item.query_id, c) for item in golden for c in item.gold_chunk_ids}
        is_gold = judgments.among(gold)
        groups = {"gold": found[is_gold], "not gold": found[~is_gold]}
    else:
        groups = {"judged pairs": found}
    rows: list[list[float | None]] = [[t, *(int(np.count_nonzero(values >= t)) / len(values) if len(values) else None
                                            for values in groups.values())] for t in thresholds]
    table = Table(["threshold"] + [f"{name}: share at or above" for name in groups], rows)
    return {"plot": Markup(_plots().score_histogram(groups, thresholds, component)), "lines": lines,
            "counts": {name: len(values) for name, values in groups.items()}, "table": _html_table(table, 3)}


@dataclass(frozen=True)
class QrelsKind:
    """What a qrels file holds, as the report names it: `key` derived, gold or qrels."""

    key: str
    label: str  # "derived labels", "gold chunks"
    description: str


def describe_qrels(path: str | None) -> QrelsKind:
    """Derived labels (a `semrel label` manifest, whose rule is named), gold chunks (a `golden qrels` manifest,
    or a golden.jsonl given as qrels), or qrels of unknown origin."""
    if path is None:
        return QrelsKind("qrels", "qrels", "")
    name = os.path.basename(display_name(path))
    params = read_params(path) or {}
    rule = recorded_rule(params, manifest_path(path))
    if rule is not None:
        return QrelsKind("derived", "derived labels", f"{name}: labels derived from {rule.describe()} on the judged pool")
    if params.get("from") == "golden set" or name.endswith((".jsonl", ".jsonl.gz")):
        return QrelsKind("gold", "gold chunks", f"{name}: the golden set's gold chunks")
    return QrelsKind("qrels", os.path.basename(name), f"{name}: qrels")


def _metric_section(inputs: ReportInputs, judged: Qrels, warn: Callable[[str], None], judge_model: Any = None,
                    corpus: str | os.PathLike | CorpusMapping | None = None) -> dict[str, Any]:
    """The runs on QRELS (`judged`, read already) and, with gold_qrels, on the gold chunks too: one column per
    measure and qrels. A run from stdin is read once and scored on both (stdin cannot be read again; it is
    held whole anyway, within SEMREL_MAX_DOCUMENT_MB); the other runs are read one at a time for each qrels.
    `judge_model`: the model that judged QRELS' pairs, to name the runs that retrieved with it (_own_model)."""
    assert inputs.qrels is not None  # build_report checks it
    named: list[tuple[str, QrelsKind, Qrels | None]] = [(inputs.qrels, describe_qrels(inputs.qrels), judged)]
    if inputs.gold_qrels:
        gold = describe_qrels(inputs.gold_qrels)
        named.append((inputs.gold_qrels, gold if gold.key != "qrels" else QrelsKind("gold", "gold chunks", gold.description), None))
    if len(named) == 2 and named[0][1].key == "qrels":
        named[0] = (inputs.qrels, QrelsKind("derived", "derived labels", named[0][1].description), judged)
    runs = [read_run(path) if str(path) == STDIO else None for path in inputs.runs]
    comparisons, qrels = [], []
    # the runs' chunk ids checked against `corpus` (its path, or its ids as the golden set's stats read them), and their
    # depth against the measures' cutoffs, once, with the first qrels
    for i, (path, kind, given) in enumerate(named):
        results = evaluate_files(path, inputs.runs, inputs.chosen_measures(), inputs.rel_level, warn=warn, qrels=given, runs=runs,
                                 corpus=None if i else corpus, cutoffs=not i)  # R@100 of runs of 20 is said, as by compare
        c = compare_evaluations(results, inputs.settings, baseline=inputs.baseline, all_pairs=inputs.all_pairs, warn=warn)
        comparisons.append(c)
        qrels.append({"key": kind.key, "label": kind.label, "description": kind.description,
                      "queries": len(results[0].query_ids), "legend": legend(c),
                      "tests": _html_table(tests_table(c), inputs.places)})
    if len(comparisons) == 2:
        reversed_ = reversals(comparisons[0], comparisons[1])
        if reversed_:
            warn(_reversal_warning(reversed_, named[0][1].label, named[1][1].label, inputs.places))
    first = comparisons[0]
    rows = [{"key": first.letter(run), "run": run,
             "cells": [{"text": cell_text(c.value(run, m), inputs.places), "marks": c.marks(run, m)}
                       for m in first.measures for c in comparisons]}
            for run in first.runs]
    own = [run for run, path in zip(first.runs, inputs.runs) if _own_model(path, judge_model)]
    return {"measures": [m.name for m in first.measures], "rows": rows, "qrels": qrels,
            "own_model": f"{', '.join(own)} retrieved with the judge's own model ({judge_model}): labels it derives can favour "
                         "such runs over lexical ones (docs/judge.md, 'Generated answers'); judge with another model where that "
                         "comparison matters (p held its kappa with all-mpnet-base-v2: docs/judge.md, 'Another judge model')"
                         if own else None}


def _own_model(run: str | os.PathLike, judge_model: Any) -> bool:
    """Whether the run's manifest says it retrieved (or reranked) by vectors of `judge_model`."""
    params = (read_params(run) if judge_model and str(run) != STDIO else None) or {}
    by_vectors = params.get("method") in ("dense", "hybrid") or params.get("rerank") == "dense"
    return by_vectors and params.get("model") == judge_model


REVERSALS_SHOWN = 3


def _reversal_warning(found: list[Reversal], test: str, ref: str, places: int) -> str:
    """One line for the pairs of runs QRELS and the gold chunks order oppositely (analysis.compare.reversals)."""
    def pair(r: Reversal) -> str:
        significant = "both" if len(r.significant) == 2 else f"the {ref if r.significant == ('ref',) else test}"
        return (f"on {r.measure.name} the {ref} rank {r.ahead} above {r.behind} ({r.ref[0]:.{places}f} against "
                f"{r.ref[1]:.{places}f}), the {test} {r.behind} above {r.ahead} ({r.test[1]:.{places}f} against "
                f"{r.test[0]:.{places}f}; significant on {significant})")

    more = len(found) - REVERSALS_SHOWN
    return (f"the {test} and the {ref} order runs oppositely where one of them finds the difference significant: "
            + "; ".join(pair(r) for r in found[:REVERSALS_SHOWN]) + (f"; and {more} more" if more > 0 else "")
            + f". A comparison on the {test} may be reversed: they can favour what the judge's own model retrieves (dense "
            "retrieval with the same model) and miss chunks that differ from the answer only in names or numbers, and gold "
            "chunks may not list every relevant chunk. Review the pairs where they disagree (`semrel review start`, most "
            "uncertain first) and refit with `semrel calibrate` before trusting this comparison")


def _estimates_section(inputs: ReportInputs, qrels: Qrels, sample: ReviewedSample, warn: Callable[[str], None]) -> dict[str, Any]:
    """The runs' measures on the derived qrels corrected by the review's random sample, as `semrel estimate` gives them,
    at the report's significance level (its warnings at the top of the page)."""
    confidence = 1.0 - inputs.settings.alpha
    chosen = inputs.chosen_measures()
    measures = [m for m in chosen if not m.geometric]
    if geometric := [m.name for m in chosen if m.geometric]:  # the metric table shows them; only their correction cannot be had
        warn(f"{', '.join(geometric)}: left out of the metrics corrected by the review, which corrects means and sums, and "
             f"{'it is a geometric mean' if len(geometric) == 1 else 'they are geometric means'} (AP and bpref are corrected)")
    estimates = corrected_estimates(qrels, read_runs(inputs.runs), measures, sample, confidence, inputs.rel_level, warn)
    return {"table": _html_table(estimates_table(estimates, confidence), inputs.places), "level": level_text(confidence),
            "whole_queries": estimates[0].sampled_queries is not None}


def _lift_section(inputs: ReportInputs, qrels: Qrels, base: str, reranked: str) -> tuple[dict[str, Any], list[str]]:
    result = lift(qrels, read_run(base), read_run(reranked), inputs.chosen_measures(), inputs.settings,
                  inputs.depth, None, inputs.top, inputs.rel_level)
    section = {
        "base": display_name(base), "reranked": display_name(reranked), "by": result.by.name,
        "table": _html_table(lift_table(result), inputs.places),
        "changes": _html_table(changes_table(result), inputs.places),
        "plot": Markup(_plots().change_bars([c.change for c in result.changes], result.by.name)),
        "queries": result.queries,
    }
    return section, result.warnings()


def _sensitivity_section(points: Sequence[SensitivityPoint], chosen: list[float], warn: Callable[[str], None],
                         labels: bool = True) -> dict[str, Any]:
    curves: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for p in points:
        curves.setdefault(p.measure, {}).setdefault(p.run, []).append((p.threshold, p.value))
    thresholds = sorted({p.threshold for p in points})
    # several marks are grade cuts: the curves label relevant or not at one threshold, so graded metrics lie on none of them
    named = "label threshold" if labels else "threshold given"  # a --threshold other than the labels' is none of theirs
    return {"plot": Markup(_plots().sensitivity_curves(curves, chosen, warn, named)), "points": len(points),
            "range": f"{thresholds[0]:g} to {thresholds[-1]:g}", "thresholds": len(thresholds), "graded": len(chosen) > 1}


def _check_judgments(inputs: ReportInputs, judged: JudgmentColumns, qrels: Qrels | None, warn: Callable[[str], None]) -> None:
    """Judgments that cannot be those QRELS were labelled from are refused: an empty file drew an empty plot (exit 0), and
    judgments of other queries warned that the label rule missed every gold chunk, sending the user to review and refit.
    Judgments that share only some queries with QRELS are warned of (qrels filtered to fewer queries are plausible): the
    page computed on the mismatch in silence, its label warnings counting a judged query the qrels lack as one with no
    relevant pair."""
    name = display_name(inputs.judgments or "the judgments")
    if not len(judged):
        raise no_judgments(name)
    if qrels is None:
        return
    qrels_name = display_name(inputs.qrels or "the qrels")
    labelled = pc.unique(qrels.query_ids).to_pylist()  # in order of first row
    judged_queries = list(dict.fromkeys(judged.query_ids))

    def examples(ids: Sequence[str]) -> str:
        return ", ".join(map(repr, ids[:3])) or "no rows"

    in_qrels, in_judgments = set(labelled), set(judged_queries)
    if in_qrels.isdisjoint(in_judgments):
        raise ValidationError(f"{name} shares no query id with {qrels_name}: the judgments have {examples(judged_queries)}, the "
                              f"qrels have {examples(labelled)}; give the judgments its labels were made from")
    unjudged = [q for q in labelled if q not in in_judgments]
    unlabelled = [q for q in judged_queries if q not in in_qrels]
    differ = []
    if unjudged:
        differ.append(f"{len(unjudged):,} of the {quantity(len(labelled), 'query')} in {qrels_name} {agreeing(len(unjudged), 'have')} "
                      f"no judgment ({examples(unjudged)})")
    if unlabelled:
        differ.append(f"{len(unlabelled):,} of the {quantity(len(judged_queries), 'judged query')} {agreeing(len(unlabelled), 'are')} "
                      f"not in {qrels_name} ({examples(unlabelled)})")
    if differ:
        warn(f"{name} and {qrels_name} hold different queries: {'; '.join(differ)}. The metrics are of the qrels' queries, the "
             "judge-score plots and label warnings of the judged ones, a judged pair the qrels lack counting as not relevant; give "
             f"the judgments {qrels_name}'s labels were made from (where the qrels were filtered to fewer queries, filter the "
             "judgments alike)")


def _label_warnings(inputs: ReportInputs, qrels: Qrels | None, rule: Rule | None, qrels_params: Mapping[str, Any] | None,
                    judged: JudgmentColumns | None, golden: list[GoldenItem] | None, judge: Mapping[str, Any] | None) -> list[str]:
    """Signs the labels look wrong (semrel.judging.labels.label_warnings, as `semrel label` says them): from the judgments
    and the qrels' grades of them when both are given (`judge`: the judge's settings, _judge_settings), else as `semrel label`
    recorded them in the manifest."""
    if judged is not None and qrels is not None:
        grades = qrels.to_dict()
        gold = {(g.query_id, c) for g in golden for c in g.gold_chunk_ids} if golden is not None else None
        calibrated = bool((qrels_params or {}).get("calibrated"))  # a threshold rule from calibrate looks like any other
        return label_warnings(judged, [grades.get(q, {}).get(c, 0) for q, c in zip(judged.query_ids, judged.chunk_ids)], rule,
                              inputs.judgments, gold, calibrated=calibrated, judge=judge)
    recorded = (qrels_params or {}).get("warnings")
    return [str(m) for m in recorded] if isinstance(recorded, list) else []


def _cliffs(inputs: ReportInputs, component: str, thresholds: list[float], labels: bool = True) -> list[str]:
    """Warnings where the chosen threshold sits on a cliff of the sensitivity curves: the page's drawn threshold where
    it has one on the score the curves swept (the one the page draws), else the one the curves were judged at (`semrel
    sensitivity --at 0.9` beside labels at 0.38 warned of 0.9, a threshold no label on the page came from). `labels`:
    whether the drawn thresholds are the labels' own, not a --threshold that differs (0.07 was called the label threshold)."""
    swept = inputs.sensitivity_on or component
    drawn = len(thresholds) == 1 and swept == component
    at = thresholds[0] if drawn else inputs.sensitivity_at
    if at is None:
        return []
    named = ("the label threshold" if labels else "the threshold given (--threshold)") if drawn else \
        "the curves' chosen threshold (sensitivity --at)"
    grid = sorted({p.threshold for p in inputs.sensitivity})
    runs = list(dict.fromkeys(p.run for p in inputs.sensitivity))
    measures = list(dict.fromkeys(p.measure for p in inputs.sensitivity))
    values = np.full((len(grid), len(runs), len(measures)), np.nan)
    where = {t: k for k, t in enumerate(grid)}
    for p in inputs.sensitivity:
        values[where[p.threshold], runs.index(p.run), measures.index(p.measure)] = p.value
    if not np.isfinite(values).all():  # curves with holes: no judgement
        return []
    return cliff_warnings(grid, runs, measures, values, at, swept, named=named)


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """Nested key/values as ('a.b', text) rows (lists of objects numbered from 1), numbers shown to 4 decimals."""
    if isinstance(value, Mapping):
        return [row for k, v in value.items() for row in _flatten(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        return [row for i, v in enumerate(value, start=1) for row in _flatten(v, f"{prefix}.{i}")]
    if isinstance(value, float):
        return [(prefix, f"{value:.4f}")]
    if isinstance(value, (list, dict)):
        return [(prefix, json.dumps(value))]
    return [(prefix, str(value))]


def _number(value: Any, places: int = 3) -> str:
    return f"{value:.{places}f}" if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
        else "n/a"


def _grade_name(label: Any, graded: bool) -> str:
    if graded:
        return str(label)
    return {0: "0 (not relevant)", 1: "1 (relevant)"}.get(label, str(label))


def _review_section(stats: Mapping[str, Any]) -> dict[str, Any]:
    """`semrel review stats -f json` as two tables: each reviewer's counts and speed, and the kappa of each two labellings
    (reviewers, and each reviewer with the judge) on the pairs both labelled."""
    def count(value: Any) -> str:
        return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "n/a"

    reviewers = [{"reviewer": str(r.get("reviewer", "")), "graded": count(r.get("graded")), "skipped": count(r.get("skipped")),
                  "flags": count(r.get("flags")), "stale": count(r.get("stale")), "seconds": _number(r.get("median_seconds"), 1),
                  "per_hour": _number(r.get("per_hour"), 0)} for r in stats["reviewers"] if isinstance(r, Mapping)]
    pairs = [{"first": str(a.get("first", "")), "second": str(a.get("second", "")), "n": count(a.get("n")),
              "percent": f"{_number(a.get('percent_agreement'), 1)}%", "kappa": _number(a.get("kappa")),
              "interval": f"{_number(a.get('kappa_low'))} to {_number(a.get('kappa_high'))}",
              "weights": str(a.get("weights") or "none")} for a in stats["agreement"] if isinstance(a, Mapping)]
    return {"kind": "review", "title": "Review: reviewers and their agreement",
            "summary": [("pairs in the queue", count(stats.get("tasks"))), ("pairs reviewed", count(stats.get("reviewed")))],
            "reviewers": reviewers, "pairs": pairs}


def _agreement_section(agreement: Mapping[str, Any], gold_qrels: str | None, warn: Callable[[str], None]) -> dict[str, Any]:
    """`semrel agree -f json` as tables: kappa with its interval, the confusion matrix with its axes named,
    and per measure the runs' values and ranks on each qrels with the pairs whose order flips. Any other
    JSON object is shown as flat key/value rows. `warn` hears that the kappa may be in-sample (labels fitted to
    reviewed pairs), which the top of the page says too: in the section alone it was missed."""
    labels = agreement.get("labels")
    if isinstance(agreement.get("reviewers"), list) and isinstance(agreement.get("agreement"), list):
        return _review_section(agreement)
    if not isinstance(labels, Mapping) or not isinstance(labels.get("confusion"), list):
        return {"kind": "flat", "title": "Agreement figures", "rows": _flatten(agreement)}
    problem = agreement_problem(agreement)
    if problem:
        raise UsageError(f"agreement: {problem}")
    ref = describe_qrels(agreement.get("ref")) if agreement.get("ref") else None
    test = describe_qrels(agreement.get("test")) if agreement.get("test") else None
    ref_label = ref.label if ref and ref.key != "qrels" else "gold chunks" if gold_qrels and agreement.get("ref") == gold_qrels \
        else f"reference ({ref.label})" if ref else "reference qrels"
    test_label = test.label if test and test.key != "qrels" else f"test ({test.label})" if test else "test qrels"
    names = labels.get("labels") or []
    graded = len(names) > 2
    confusion = [[int(n) for n in row] for row in labels["confusion"]]
    columns = [sum(col) for col in zip(*confusion)] if confusion else []
    kappa = labels.get("kappa")
    summary = [
        ("pairs compared", f"{labels.get('n', 0):,}" + (" (a pair one side does not list counts as grade 0)"
                                                        if agreement.get("unlisted_as_zero") else "")),
        ("agreement", f"{_number(labels.get('percent_agreement'), 1)}%"),
        (f"Cohen's kappa ({labels.get('weights', 'none')} weights)" if labels.get("weights") not in (None, "none")
         else "Cohen's kappa", f"{_number(kappa)} (95% bootstrap interval {_number(labels.get('kappa_low'))} "
                               f"to {_number(labels.get('kappa_high'))})"),
    ]
    fitted = fitted_pairs(agreement)
    if fitted:
        caveat = f"{quantity(fitted, 'reviewed pair')}: {IN_SAMPLE}"
        summary.append(("labels fitted to", caveat))
        warn(f"the agreement of the {test_label} with the {ref_label} may be optimistic, as the labels were fitted to {caveat}")

    def rank(values: Mapping[str, Any], run: str) -> int | str:
        """1 + the runs strictly better (tied runs share a rank)."""
        if not isinstance(values.get(run), (int, float)):
            return "n/a"
        return 1 + sum(isinstance(v, (int, float)) and v > values[run] for v in values.values())

    def ordered(values: Mapping[str, Any], a: str, b: str) -> tuple[str, str]:
        """a and b, the one `values` puts higher first."""
        return (a, b) if values[a] > values[b] else (b, a)

    rankings = []
    for r in agreement.get("rankings") or []:  # their shape checked by agreement_problem: a swapped pair has values on ref
        on_ref, on_test = dict(r["ref"]), dict(r["test"])
        ranked = {run: rank(on_ref, run) for run in on_ref}  # best first; a run without a number ('n/a') last
        order_ref = sorted(on_ref, key=lambda run: (isinstance(ranked[run], str), ranked[run] if isinstance(ranked[run], int) else 0, run))
        runs = [{"run": run, "ref": _number(on_ref[run], 4), "ref_rank": ranked[run],
                 "test": _number(on_test.get(run), 4), "test_rank": rank(on_test, run)} for run in order_ref]
        flips = [f"{ref_label} rank {high} above {low}; {test_label} rank {low} above {high}"
                 for high, low in (ordered(on_ref, a, b) for a, b in r.get("swapped") or [])]
        numbered = [run for run in order_ref if isinstance(on_ref.get(run), (int, float)) and isinstance(on_test.get(run), (int, float))]
        # a difference one side's labels erase is no swap, yet the page said nothing changed
        sides = ((on_ref, on_test, ref_label, test_label), (on_test, on_ref, test_label, ref_label))
        for (a, b), (values, other, label, tying) in itertools.product(itertools.combinations(numbered, 2), sides):
            if values[a] != values[b] and other[a] == other[b]:
                high, low = ordered(values, a, b)
                flips.append(f"{label} rank {high} above {low}; {tying} tie them")
        why = tau_undefined(on_ref, on_test, f"the {ref_label}", f"the {test_label}")  # agree's words, not a bare n/a
        rankings.append({"measure": str(r.get("measure", "")), "tau": f"n/a ({why})" if why else _number(r.get("tau")),
                         "runs": runs, "flips": flips})
    return {
        "kind": "labels", "title": f"Agreement of the {test_label} with the {ref_label}", "ref": ref_label, "test": test_label,
        "summary": summary,
        "confusion": {"labels": [_grade_name(n, graded) for n in names],
                      "rows": [{"label": _grade_name(n, graded), "counts": row, "total": sum(row)}
                               for n, row in zip(names, confusion)],
                      "totals": columns, "n": sum(columns)},
        "rankings": rankings,
    }


def build_report(inputs: ReportInputs, warn: Callable[[str], None], steps: Steps = no_progress) -> tuple[str, Rule | None]:
    """The report's HTML text, and the rule that made QRELS' labels as their manifest records it (None: not
    recorded), for the report's manifest."""
    if (inputs.base is None) != (inputs.reranked is None):
        raise UsageError("--base and --reranked go together")
    if inputs.depth is not None and inputs.base is None:  # this and the next were ignored in silence
        raise UsageError("--depth is the lift's reorder depth: give --base and --reranked too")
    if (inputs.baseline or inputs.all_pairs) and len(inputs.runs) < 2:
        raise UsageError(f"--{'baseline' if inputs.baseline else 'all-pairs'} chooses the pairs of runs compared: give two runs or more")
    if (inputs.runs or inputs.base) and not inputs.qrels:
        raise UsageError("runs need qrels: give QRELS first")
    if inputs.gold_qrels and not inputs.runs:
        raise UsageError("--gold-qrels scores the runs a second time: give QRELS and runs")
    if inputs.reviewed and not inputs.runs:
        raise UsageError("--reviewed corrects the runs' metrics on QRELS by the review: give QRELS and runs")
    if inputs.reviewed and not 0.001 <= inputs.settings.alpha <= 0.5:  # estimate's --confidence range: no '10% intervals'
        raise UsageError(f"--alpha {inputs.settings.alpha:g} with --reviewed gives {level_text(1 - inputs.settings.alpha)} intervals: "
                         "give an --alpha from 0.001 to 0.5 (0.05: 95%)")
    if inputs.reviewed and STDIO in map(str, inputs.runs):
        raise UsageError("--reviewed reads the runs a second time: give them as files, not '-'")
    if inputs.corpus and not (inputs.golden or inputs.runs):
        raise UsageError("--corpus gives its stats beside the golden set's, and checks the runs' chunk ids: give --golden or runs")
    if inputs.on is not None and inputs.on not in SCORES:
        raise UsageError(f"--on {inputs.on!r}: choose one of {', '.join(SCORES)}")
    for path in inputs.files():  # a missing one is said before any section's progress, not after
        if str(path) != STDIO:
            check_input_file(path)
    # before any section's work: a measure estimate refuses (gm_map), a file that is no review database or one with no
    # sample yet were said after the runs' tests
    sample = None
    if inputs.reviewed:
        if all(m.geometric for m in inputs.chosen_measures()):  # none to correct: the section would be empty
            estimable(inputs.measures)
        sample = reviewed_sample(inputs.reviewed, inputs.adjudicate)
    qrels_params = read_params(inputs.qrels) if inputs.qrels else None
    rule = recorded_rule(qrels_params, manifest_path(inputs.qrels)) if inputs.qrels else None
    component, thresholds = _drawn(inputs, rule)
    judge = _judge_settings(inputs, qrels_params)
    drawn = _drawn_text(component, thresholds) if inputs.on or inputs.thresholds else None
    page = _Page(inputs.title, made_at().strftime("%Y-%m-%d %H:%M UTC"),
                 _signature(judge, _label_rule_text(inputs.qrels, rule, qrels_params), drawn),
                 json.dumps(judge, indent=2, sort_keys=True, default=str) if judge else None)

    def note(message: str) -> None:
        if message not in page.warnings:  # once, where both qrels give the same (runs compared on few queries)
            page.warnings.append(message)
            warn(message)

    differ = _options_differ(inputs, rule, component, thresholds)
    if differ:
        note(differ)

    golden = read_golden(inputs.golden) if inputs.golden else None
    listed: Listed | str | os.PathLike | None = inputs.corpus  # what the runs' chunk ids are checked against
    if golden is not None:
        with steps("report: golden set statistics", 0):
            # one pass over the corpus: the stats, and the ids the runs are checked against (a second read was as long)
            chunks = listed = Listed(counted(unique_chunks(inputs.corpus), steps, f"report: reading {display_name(inputs.corpus)}"),
                                     keep=bool(inputs.runs)) if inputs.corpus else None
            stats = golden_stats(golden, chunks)
            counts, lengths = stats_tables(stats)
            page.sections["golden"] = {"counts": _html_table(counts, 0), "lengths": _html_table(lengths, 1),
                                       "notes": stats.get("notes", [])}
    judged = read_judgment_columns(inputs.judgments) if inputs.judgments else None
    # read once for every section that needs them: from stdin they could not be read again
    qrels = read_qrels(inputs.qrels) if inputs.qrels and (inputs.runs or inputs.base or judged is not None) else None
    if sample is not None and qrels is not None:  # too small a sample of these qrels: said before the runs are scored
        sampled_pairs(sample, set(qrels.query_ids.to_pylist()))
    if judged is not None:
        _check_judgments(inputs, judged, qrels, note)
    refitted = rule if isinstance(rule, ProbabilityRule) and not rule.cuts_on_p else None
    for message in _label_warnings(inputs, qrels, rule, qrels_params, judged, golden, judge):
        note(message)
    if judged is not None:
        if component == PROBABILITY and np.isnan(judged.p).any():  # judgments from an older semrel
            component, thresholds = "R", []
        refit = refitted if not (inputs.on or inputs.thresholds) and has_features(judged) else None
        lines = ("the thresholds of --on/--threshold/--grades" if inputs.thresholds and thresholds else
                 "the label thresholds" if thresholds or refit else "none drawn (no label thresholds on this score)")
        with steps("report: judge score distributions", 0):
            page.sections["scores"] = (_score_section(judged, golden, component, thresholds, lines) if refit is None else
                                       _score_section(judged, golden, "p, refitted", list(refit.thresholds), lines,
                                                      refit.scores(judged)))
    if inputs.runs and qrels is not None:  # runs without qrels were refused above
        with steps(f"report: evaluating and testing {quantity(len(inputs.runs), 'run')}", 0):
            page.sections["metrics"] = _metric_section(inputs, qrels, note, (judge or {}).get("model"),
                                                       listed.mapping() if isinstance(listed, Listed) else listed)
    if sample is not None and qrels is not None:  # runs and qrels: checked above
        with steps("report: metrics corrected by the review", 0):
            page.sections["estimates"] = _estimates_section(inputs, qrels, sample, note)
    if inputs.base and inputs.reranked is not None and qrels is not None:  # both given, with qrels: checked above
        with steps("report: reranking lift", 0):
            page.sections["lift"], problems = _lift_section(inputs, qrels, inputs.base, inputs.reranked)
        for problem in problems:
            note(problem)
    if inputs.sensitivity:
        marks = thresholds or (list(refitted.thresholds) if refitted else [])
        labels = not inputs.thresholds or _made_by(rule, component, thresholds)  # else marks the labels did not come from
        with steps("report: threshold sensitivity", 0):
            page.sections["sensitivity"] = _sensitivity_section(inputs.sensitivity, marks, note, labels)
        for message in _cliffs(inputs, component, marks, labels):
            note(message)
    if inputs.agreement is not None:
        page.sections["agreement"] = _agreement_section(inputs.agreement, inputs.gold_qrels, note)
    if not any(page.sections.values()):
        given = (f"{display_name(inputs.qrels)} is QRELS, which scores runs: give runs after it, or" if inputs.qrels
                 else "give QRELS and runs,")
        raise UsageError(f"nothing to report: {given} --golden, --judgments, --base/--reranked, --sensitivity or --agreement")
    environment = Environment(loader=FileSystemLoader(str(template_dir())), autoescape=True,
                              undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    environment.filters["quantity"] = quantity  # '1 query', '3 queries', as every other message says it
    return environment.get_template("report.html.j2").render(page=page, version=semrel_version()), rule


def write_report(inputs: ReportInputs, output: str | os.PathLike, warn: Callable[[str], None], steps: Steps = no_progress,
                 extra_inputs: Sequence[str | os.PathLike] = ()) -> None:
    """The report written to `output` with its manifest (`extra_inputs`: files read before, e.g. curves), whose inputs list
    each input's manifest too: the page shows what they record."""
    html, label_rule = build_report(inputs, warn, steps)
    with outputs_with_manifests([output]) as staged:
        with atomic_writer(staged[output]) as out:
            out.write(html)
        write_manifest(output, inputs=with_manifests([*inputs.files(), *extra_inputs]), staged=staged, params={
            "title": inputs.title, "measures": [m.name for m in inputs.measures], **asdict(inputs.settings),
            # every option that changes the page: the tests' alpha and draws, the thresholds drawn (on, thresholds), lift's
            # depth and top; and the rule that made QRELS' labels (their manifest), which the options do not change
            "baseline": inputs.baseline, "all_pairs": inputs.all_pairs, "rel_level": inputs.rel_level, "on": inputs.on,
            "thresholds": list(inputs.thresholds), "depth": inputs.depth, "top": inputs.top, "places": inputs.places,
            "label_rule": label_rule.describe() if label_rule is not None else None})


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
    """A JSON object of agreement figures (free-form keys and values; shaped as `semrel agree -f json`
    writes it where it holds labels.confusion)."""
    value = loads(read_text(path), path)
    if not isinstance(value, dict):
        raise FormatError(display_name(path), f"expected a JSON object, found {type(value).__name__}")
    problem = agreement_problem(value)
    if problem:
        raise FormatError(display_name(path), problem, hint="give the output of `semrel agree -f json`")
    return value


def agreement_problem(agreement: Mapping[str, Any]) -> str | None:
    """What keeps an object holding labels.confusion from being read as `semrel agree -f json`'s, or None."""
    labels = agreement.get("labels")
    if not isinstance(labels, Mapping) or not isinstance(labels.get("confusion"), list):
        return None  # free-form figures
    confusion = labels["confusion"]
    size = len(confusion)
    if not size or not all(isinstance(row, list) and len(row) == size and all(is_whole(n) and n >= 0 for n in row)
                           for row in confusion):
        return "labels.confusion must be a square table of counts (equal-length lists of whole numbers, 0 or more)"
    names = labels.get("labels")
    if names is not None and (not isinstance(names, list) or len(names) != size):
        return f"labels.labels must list the {size} grades of labels.confusion"
    for key in ("n", "percent_agreement", "kappa", "kappa_low", "kappa_high"):
        if labels.get(key) is not None and not is_number(labels[key]):
            return f"labels.{key} must be a number"
    rankings = agreement.get("rankings") or []
    if not isinstance(rankings, list):
        return "rankings must be a list, one object a measure"
    for n, ranking in enumerate(rankings, start=1):
        if not isinstance(ranking, Mapping) or not all(
                isinstance(ranking.get(side), Mapping) and all(v is None or is_number(v) for v in ranking[side].values())
                for side in ("ref", "test")):
            return f"rankings.{n} must hold ref and test objects of each run's value (a number, or null)"
        swapped = ranking.get("swapped") or []
        if not isinstance(swapped, list) or not all(  # each pair is ordered by its values, so both must have one
                isinstance(pair, list) and len(pair) == 2 and all(isinstance(run, str) and is_number(ranking["ref"].get(run))
                                                                  for run in pair) for pair in swapped):
            return f"rankings.{n}.swapped must list pairs of runs, each with a value in rankings.{n}.ref"
    return None

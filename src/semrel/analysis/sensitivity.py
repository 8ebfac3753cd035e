"""How far conclusions depend on the label threshold (the cut on the judge's probability p, or a
threshold on P, R or F).

Judgments are relabelled in memory at each threshold of a grid (no model, no file per
threshold), every run is evaluated on each labelling, and three things are followed across the
grid: each run's value of each measure, the system ranking (Kendall's tau-b against the ranking
at a chosen threshold) and, for each pair of runs, where one beats the other significantly.
"""

from __future__ import annotations

import contextlib
import csv
import itertools
import json
import math
import os
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pyarrow as pa

from ..errors import UsageError
from ..evaluation.doclevel import require_overlap
from ..evaluation.files import coverage_warnings, require_distinct_names
from ..evaluation.measures import Measure, numeric_measures, paired_values, parse_measures
from ..evaluation.metrics import Evaluation, evaluate_gradings
from ..formats.files import atomic_writer
from ..formats.judgments import PROBABILITY, SCORES, JudgmentColumns
from ..formats.manifest import outputs_with_manifests, write_manifest
from ..formats.tables import Table, render
from ..judging.labels import (
    CUT,
    DEFAULT_COMPONENT,
    DEFAULT_THRESHOLD,
    Judged,
    ProbabilityRule,
    Rule,
    check_thresholds,
    fallback_note,
    has_probability,
    reached,
    read_calibration,
    score_values,
)
from ..progress import Steps, no_progress
from ..records import Qrels, Run
from ..terminal import quantity
from .agreement import kendall_tau_b, settled
from .significance import StatSettings, adjust, chosen_p, few_queries

SENSITIVITY_FORMATS = ("table", "markdown", "csv", "json")
MAX_THRESHOLDS = 2001
CURVE_HEADER = ("threshold", "run", "measure", "value")
DEFAULT_STEP = 0.01
P_RANGE = (0.05, 0.95)  # the default grid's ends on p
RAW_RANGE = (0.5, 0.9)  # and on P, R, F


def threshold_grid(start: float, stop: float, step: float) -> list[float]:
    """start, start + step, ... up to stop (included when the steps reach it), rounded to 10 places
    so that 0.5 + 7 * 0.01 reads 0.57."""
    if not all(math.isfinite(v) for v in (start, stop, step)):
        raise UsageError("start=, stop= and step= must be finite numbers")
    if step <= 0:
        raise UsageError(f"step= must be greater than 0, got {step:g}")
    if stop < start:
        raise UsageError(f"start={start:g} is above stop={stop:g}: give the lower threshold first")
    count = int(math.floor((stop - start) / step + 1e-9)) + 1
    if count > MAX_THRESHOLDS:
        raise UsageError(f"{count} thresholds from {start:g} to {stop:g} by {step:g}; at most {MAX_THRESHOLDS}: "
                         "give a larger step=")
    return [round(start + k * step, 10) for k in range(count)]


@dataclass(frozen=True)
class Sweep:
    """What a sensitivity sweep labels on: the score `on`, the grid, the chosen threshold `at`, and the refit
    (`calibrate --fit features`) whose p, recomputed from the features, is swept instead of the judge's."""

    on: str
    thresholds: list[float]
    at: float
    refit: ProbabilityRule | None = None


def choose_sweep(judgments: Judged, on: str | None = None, at: float | None = None,
                 calibration: str | os.PathLike | Rule | None = None, thresholds: Sequence[float] | None = None,
                 start: float | None = None, stop: float | None = None, step: float = DEFAULT_STEP,
                 source: str | os.PathLike | None = None) -> Sweep:
    """The sweep `semrel sensitivity` and `semrel.sensitivity` make of what was given, the rest defaulted:
    on: p where the judgments hold it (the score `label` labels them on), else R; with a refit of every
    coefficient as `calibration` (a file `calibrate -o` wrote, or the rule), p recomputed from each pair's
    features, `at` defaulting to the refit's cut. The grid: `thresholds`, else start..stop by step
    (start, stop default 0.05..0.95 on p, 0.5..0.9 on P, R, F). at: CUT on p, DEFAULT_THRESHOLD on P, R, F.
    `source`: the judgments' file, whose judge a calibration file must have been fitted to (read_calibration)."""
    if on is not None and on not in SCORES:
        raise UsageError(f"on={on!r}: choose one of {', '.join(SCORES)}")
    refit = read_calibration(calibration, source) if isinstance(calibration, (str, os.PathLike)) else calibration
    if refit is not None:
        if not isinstance(refit, ProbabilityRule) or refit.cuts_on_p or on not in (None, PROBABILITY):
            shown = repr(str(calibration)) if isinstance(calibration, (str, os.PathLike)) else repr(calibration)
            raise UsageError(f"calibration={shown}: give a refit of every coefficient (`calibrate --fit features`) without on= "
                             "(other calibrations are cuts on a score: give on= and at=)")
        on, at = PROBABILITY, refit.cut if at is None else at
    if on is None:
        on = PROBABILITY if has_probability(judgments) else DEFAULT_COMPONENT  # as `label` labels them
    on_p = on == PROBABILITY
    if thresholds is not None:
        if start is not None or stop is not None:
            raise UsageError("give thresholds= or start= and stop=, not both")
        grid = list(check_thresholds(thresholds))
    else:
        low, high = P_RANGE if on_p else RAW_RANGE
        grid = threshold_grid(low if start is None else start, high if stop is None else stop, step)
    return Sweep(on, grid, (CUT if on_p else DEFAULT_THRESHOLD) if at is None else at,
                 refit if isinstance(refit, ProbabilityRule) else None)


def check_range(on: str, thresholds: Sequence[float]) -> None:
    """A cut of p beyond 0..1 labels all pairs or none: refused on p."""
    outside = [t for t in thresholds if not 0.0 <= t <= 1.0]
    if on == PROBABILITY and outside:
        raise UsageError(f"on='p' sweeps a probability: thresholds and at= must lie in 0..1, and these reach {outside[0]:g} "
                         f"(they run from {min(thresholds):g} to {max(thresholds):g}); give on='R' (or P, F) for raw scores")


def ranges(thresholds: Sequence[float], holds: Sequence[bool]) -> list[tuple[float, float]]:
    """The (first, last) thresholds of each unbroken stretch of the grid where `holds` is true."""
    spans: list[tuple[float, float]] = []
    for key, group in itertools.groupby(zip(thresholds, holds), key=lambda pair: pair[1]):
        if key:
            members = [t for t, _ in group]
            spans.append((members[0], members[-1]))
    return spans


def ranges_text(spans: Sequence[tuple[float, float]]) -> str:
    return ", ".join(f"{a:g}" if a == b else f"{a:g}-{b:g}" for a, b in spans) or "never"


@dataclass(frozen=True)
class Conclusion:
    """Where `first` beats `second` significantly on `measure`, and where the reverse holds."""

    measure: Measure
    first: str
    second: str
    first_wins: list[tuple[float, float]]
    second_wins: list[tuple[float, float]]
    at: str | None  # the significant winner at the chosen threshold, None when neither


@dataclass(frozen=True)
class Sensitivity:
    """Values, ranking agreement and significant conclusions across a grid of thresholds."""

    on: str
    thresholds: list[float]
    at: float
    runs: list[str]
    measures: list[Measure]
    values: np.ndarray  # (thresholds, runs, measures): mean (or sum) over queries
    reference: np.ndarray  # (runs, measures) at `at`
    taus: np.ndarray  # (thresholds, measures): Kendall's tau-b with the ranking at `at`; nan if undefined
    conclusions: list[Conclusion]
    settings: StatSettings
    queries: int
    rel_level: int = 1
    warnings: list[str] = field(default_factory=list)

    def __repr__(self) -> str:  # a notebook shows the object, not its arrays
        return (f"Sensitivity(on {self.on} at {self.at:g}: {quantity(len(self.thresholds), 'threshold')} from "
                f"{self.thresholds[0]:g} to {self.thresholds[-1]:g}; runs {', '.join(map(repr, self.runs))} "
                f"on {', '.join(m.name for m in self.measures)}; {quantity(self.queries, 'query')})")

    def ranking(self, values: np.ndarray) -> str:
        """Run names from best to worst, '=' between equal values (or values a sum's rounding apart)."""
        values = settled(values)
        order = sorted(range(len(self.runs)), key=lambda i: -values[i])
        text = self.runs[order[0]]
        for before, i in zip(order, order[1:]):
            text += (" = " if values[i] == values[before] else " > ") + self.runs[i]
        return text


def _labelled(judgments: Judged, on: str, refit: ProbabilityRule | None
              ) -> tuple[pa.Array, pa.Array, np.ndarray, np.ndarray, str | None]:
    """Ids, the swept scores, and the grade of each pair p cannot be swept for (-1 elsewhere): as `label`
    labels them, by the probability rule's fallback (no null sample left p unwritten), with the note saying so."""
    columns = JudgmentColumns.of(judgments)
    rule = refit or ProbabilityRule()
    missing = rule.unscored(columns) if on == PROBABILITY else np.zeros(len(columns), dtype=bool)
    fixed = np.full(len(columns), -1, dtype=np.int64)
    scores = np.zeros(len(columns), dtype=np.float64)
    if missing.any() and not missing.all():
        fixed[missing] = np.minimum(rule.fallback.grades(columns.where(missing)), 1)  # binary as the sweep
        swept = columns.where(~missing)
        scores[~missing] = score_values(swept, on) if refit is None else refit.scores(swept)
    else:  # all swept, or none can be: score_values says what is missing
        scores = score_values(columns, on) if refit is None else refit.scores(columns)
    query_ids = pa.array(columns.query_ids, type=pa.string())
    chunk_ids = pa.array(columns.chunk_ids, type=pa.string())
    return query_ids, chunk_ids, scores, fixed, fallback_note(rule, columns) if on == PROBABILITY else None


def sensitivity(
    judgments: Judged,
    runs: Sequence[Run],
    measures: Sequence[Measure | str],
    thresholds: Sequence[float],
    at: float,
    on: str = "R",
    settings: StatSettings = StatSettings(),
    rel_level: int = 1,
    steps: Steps = no_progress,
    refit: ProbabilityRule | None = None,
) -> Sensitivity:
    """Label `judgments` on `on` at each threshold (binary: score >= threshold) and at `at`,
    evaluate `runs` on each labelling, and test every pair of runs at every threshold (the p-values
    of `settings.test`, corrected within each threshold and measure across the pairs). `refit`: a
    rule refitted on every coefficient (`calibrate --fit features`), whose p, recomputed from the
    features, is swept instead of the judge's."""
    names = [r.name for r in runs]
    require_distinct_names(names)
    if not math.isfinite(at):
        raise UsageError("at= must be a finite number")
    if rel_level > 1:  # the measures had read 0 at every threshold, P@10 0.0000 for every run, with no word of why
        raise UsageError(f"rel_level={rel_level}: a sweep labels pairs 0 or 1 (score >= threshold), so grade {rel_level} or more "
                         "counts no pair relevant at any threshold; leave rel_level= at 1")
    measures = numeric_measures(parse_measures(measures), "sensitivity")
    grid = list(check_thresholds(thresholds))
    check_range(on, [*grid, at])
    query_ids, chunk_ids, scores, fixed, fallback = _labelled(judgments, on, refit)
    matches = [k for k, t in enumerate(grid) if abs(t - at) < 1e-9]
    points = grid if matches else grid + [at]
    ref = matches[0] if matches else len(grid)
    qrels = Qrels.from_columns(query_ids, chunk_ids, np.zeros(len(scores), dtype=np.int64))

    def shares_ids(run: Run, result: Evaluation) -> None:  # a run of other ids scored 0 at every threshold, as eval refuses it
        require_overlap(result, qrels, run, "the judgments", f"run {run.name!r}")  # judged chunks only

    with steps(f"sensitivity: labelling at {quantity(len(points), 'threshold')}, evaluating {quantity(len(runs), 'run')} on each", 0):
        graded = evaluate_gradings(qrels, [np.where(fixed >= 0, fixed, reached(scores, (t,))) for t in points], runs, measures,
                                   rel_level, checked=shares_ids)
    per_query = [[[paired_values(m, e.values[m]) for m in measures] for e in result] for result in graded]
    aggregates = [[[e.aggregate(m) for m in measures] for e in result] for result in graded]
    swept = scores[fixed < 0]
    beyond = len(swept) and (min(grid) > swept.max() or max(grid) <= swept.min())  # every threshold labels all pairs alike
    notes = [*([fallback] if fallback else []),
             *coverage_warnings([(e, f"run {run.name!r}") for run, e in zip(runs, graded[ref])], "the judgments"),
             *([f"every threshold ({min(grid):g} to {max(grid):g}) lies beyond the judgments' {on} ({swept.min():g} to "
                f"{swept.max():g}), so each labels every pair alike: sweep within that range"] if beyond else []),
             # as compare and lift warn: on 2 queries a constant difference was 'significantly better' at every threshold
             *([few] if len(runs) > 1 and (few := few_queries(len(graded[ref][0].query_ids))) else [])]
    per_query_values = np.asarray(per_query, dtype=np.float64)  # (points, runs, measures, queries), as tested
    values = np.asarray(aggregates, dtype=np.float64)  # eval's figures, to the last bit
    tied = np.apply_along_axis(settled, 1, values)  # for the order: runs a sum's rounding apart tie
    taus = np.array([[kendall_tau_b(tied[k, :, m], tied[ref, :, m]) for m in range(len(measures))]
                     for k in range(len(grid))]).reshape(len(grid), len(measures))
    pairs = list(itertools.combinations(range(len(names)), 2))
    first, second = [i for i, _ in pairs], [j for _, j in pairs]
    diffs = per_query_values[:, first] - per_query_values[:, second]  # (points, pairs, measures, queries)
    with steps(f"sensitivity: testing every pair of runs ({len(pairs)}) at each threshold ({settings.test} test)", 0) if pairs \
            else contextlib.nullcontext():  # one run: its curve alone, and the cliff check on it
        p = chosen_p(diffs.reshape(-1, diffs.shape[-1]).T, settings).reshape(diffs.shape[:-1])
    corrected = np.apply_along_axis(adjust, 1, p, settings.correction)  # each threshold and measure: one family
    mean = diffs.mean(axis=-1)
    significant = corrected < settings.alpha
    conclusions = []
    for m, measure in enumerate(measures):
        for k, (i, j) in enumerate(pairs):
            wins, losses = significant[:, k, m] & (mean[:, k, m] > 0), significant[:, k, m] & (mean[:, k, m] < 0)
            winner = names[i] if wins[ref] else names[j] if losses[ref] else None
            conclusions.append(Conclusion(measure, names[i], names[j], ranges(grid, wins[: len(grid)]),
                                          ranges(grid, losses[: len(grid)]), winner))
    return Sensitivity(on, grid, at, names, measures, values[: len(grid)], values[ref], taus, conclusions, settings,
                       per_query_values.shape[-1], rel_level, notes)


def values_table(s: Sensitivity) -> Table:
    """One row per threshold and measure: each run's value, tau with the ranking at `at`, the ranking (of
    two runs or more)."""
    ranked = len(s.runs) > 1
    header = ["threshold", "measure", *s.runs, *([f"tau vs {s.at:g}", "ranking"] if ranked else [])]
    rows = []
    for k, t in enumerate(s.thresholds):
        for m, measure in enumerate(s.measures):
            tau = float(s.taus[k, m])
            rows.append([t, measure.name, *map(float, s.values[k, :, m]),
                         *([tau if math.isfinite(tau) else None, s.ranking(s.values[k, :, m])] if ranked else [])])
    return Table(header, rows)


def conclusions_table(s: Sensitivity) -> Table:
    """One row per measure and pair of runs: the threshold ranges where each beats the other."""
    header = ["measure", "run", "vs", "run significantly better at", "vs significantly better at", f"better at {s.at:g}"]
    rows = [[c.measure.name, c.first, c.second, ranges_text(c.first_wins), ranges_text(c.second_wins), c.at or "neither"]
            for c in s.conclusions]
    return Table(header, rows)


def legend(s: Sensitivity) -> str:
    st = s.settings
    labels = f"Labels: {s.on} >= threshold, over {s.queries} judged queries."
    if len(s.runs) == 1:
        return labels + " One run: no ranking or significance to show; give more runs to compare them."
    return (f"{labels} tau: Kendall's tau-b of the runs' order at "
            f"each threshold with their order at {s.at:g} (blank when all runs tie). Significance: {st.test} test, "
            f"{st.correction} correction within each threshold and measure across the pairs of runs "
            f"({len(s.runs) * (len(s.runs) - 1) // 2}), p < {st.alpha:g}, seed {st.seed}.")


def sensitivity_json(s: Sensitivity) -> dict:
    st = s.settings
    return {
        "on": s.on, "at": s.at, "thresholds": s.thresholds, "runs": s.runs, "queries": s.queries,
        "settings": {"test": st.test, "correction": st.correction, "alpha": st.alpha, "permutations": st.permutations,
                     "bootstrap": st.bootstrap, "seed": st.seed},
        "values": [{"threshold": t, "measure": m.name, "run": r, "value": float(s.values[k, i, j])}
                   for k, t in enumerate(s.thresholds) for j, m in enumerate(s.measures) for i, r in enumerate(s.runs)],
        "at_values": {r: {m.name: float(s.reference[i, j]) for j, m in enumerate(s.measures)} for i, r in enumerate(s.runs)},
        "tau": [{"threshold": t, "measure": m.name, "tau": float(s.taus[k, j]) if math.isfinite(s.taus[k, j]) else None}
                for k, t in enumerate(s.thresholds) for j, m in enumerate(s.measures)],
        "conclusions": [{"measure": c.measure.name, "run": c.first, "vs": c.second,
                         "run_better": [list(r) for r in c.first_wins], "vs_better": [list(r) for r in c.second_wins],
                         "better_at": c.at} for c in s.conclusions],
    }


def render_sensitivity(s: Sensitivity, fmt: str, places: int = 4) -> str:
    """Both tables (CSV: separated by a blank line), with the legend under table and markdown."""
    if fmt == "json":
        return json.dumps(sensitivity_json(s), indent=2) + "\n"
    text = render(values_table(s), fmt, places) + ("\n" + render(conclusions_table(s), fmt, places) if s.conclusions else "")
    return text + ("\n" + legend(s) + "\n" if fmt in ("table", "markdown") else "")


def write_curves(s: Sensitivity, path: str | os.PathLike, inputs: Sequence[str | os.PathLike] = ()) -> int:
    """Rows threshold,run,measure,value (as `semrel report --sensitivity` reads them) with a manifest
    naming `inputs`; returns the row count."""
    rows = [(t, r, m.name, float(s.values[k, i, j]))
            for k, t in enumerate(s.thresholds) for j, m in enumerate(s.measures) for i, r in enumerate(s.runs)]
    with outputs_with_manifests([path]) as staged:
        with atomic_writer(staged[path]) as out:
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(CURVE_HEADER)
            writer.writerows((repr(t), r, m, repr(v)) for t, r, m, v in rows)
        write_manifest(path, inputs=inputs, rows=len(rows), staged=staged, params={
            "on": s.on, "thresholds": [float(t) for t in s.thresholds], "at": s.at, "rel_level": s.rel_level,
            "measures": [m.name for m in s.measures], "labels": "binary: score >= threshold"})
    return len(rows)


def sensitivity_warnings(s: Sensitivity) -> list[str]:
    """What a sweep warns about: pairs labelled by the rule's fallback, queries on one side only, and a chosen
    threshold on a cliff of the curves."""
    return s.warnings + cliff_warnings(s.thresholds, s.runs, [m.name for m in s.measures], s.values, s.at, s.on)


# ---------------------------------------------------------------- is the chosen threshold on a cliff?

CLIFF_WINDOW = {"p": 0.05}  # how far either side of the chosen threshold to look, by score; others: CLIFF_WINDOW_RAW
CLIFF_WINDOW_RAW = 0.02
CLIFF_CHANGE = 0.20  # a measure moving by more than this share of its value within the window is a cliff


def cliff_warnings(thresholds: Sequence[float], runs: Sequence[str], measures: Sequence[str], values: np.ndarray, at: float,
                   on: str = "p", window: float | None = None, named: str = "the label threshold") -> list[str]:
    """Warnings where the chosen threshold `at` sits on a cliff of the curves: within `window` of
    it (default by `on`), some run's value of a measure moves by more than CLIFF_CHANGE of its
    value at `at`, or the runs' order changes (Kendall's tau-b under 0.5). `values`: (thresholds,
    runs, measures). `named`: what `at` is, as the warning calls it."""
    grid = np.asarray(thresholds, dtype=np.float64)
    if not len(grid) or not grid.min() <= at <= grid.max():
        return []
    width = window if window is not None else CLIFF_WINDOW.get(on, CLIFF_WINDOW_RAW)
    here = int(np.argmin(np.abs(grid - at)))
    near = np.flatnonzero(np.abs(grid - grid[here]) <= width + 1e-9)
    notes = []
    for m, measure in enumerate(measures):
        base = values[here, :, m]
        moves = np.abs(values[near, :, m] - base[None, :])  # (near thresholds, runs)
        scale = np.maximum(np.abs(base), 1e-9)
        share = (moves / scale[None, :]).max(axis=0)
        taus = [kendall_tau_b(settled(values[k, :, m]), settled(base)) for k in near]
        worst_tau = min((t for t in taus if math.isfinite(t)), default=1.0)
        r = int(np.argmax(share))
        if share[r] > CLIFF_CHANGE or worst_tau < 0.5:
            k = near[int(np.argmax(moves[:, r]))]
            notes.append(f"{named} {at:g} on {on} sits on a cliff of the sensitivity curve: {measure} of run {runs[r]!r} "
                         f"moves from {base[r]:.3f} to {values[k, r, m]:.3f} between {on} {grid[here]:g} and {grid[k]:g}"
                         + (f", and the runs' order changes (tau {worst_tau:.2f})" if worst_tau < 0.5 else "")
                         + "; conclusions depend on where the cut lies: review about 100 pairs and refit with `semrel calibrate` "
                           "(docs/review.md) before relying on them")
    return notes

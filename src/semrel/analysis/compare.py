"""Comparing runs on the same qrels: aggregate values, paired tests and significance marks.

A comparison tests each run against a baseline (or every pair of runs) on every measure,
over the per-query values of `semrel.evaluation.metrics.evaluate` (only the qrels' queries count; a
query a run lacks scores 0). p-values are corrected within each measure, across the pairs
compared; a cell is marked with the letters of the runs it beats significantly.
"""

from __future__ import annotations

import dataclasses
import json
import os
import string
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..errors import UsageError, check_flags, check_kind, tell
from ..evaluation.api import Measures, QrelsLike, as_runs, evaluate_runs
from ..evaluation.files import require_distinct_names
from ..evaluation.measures import Measure, aggregate_change, numeric_measures, paired_values, parse_measure
from ..evaluation.metrics import Evaluation
from ..evaluation.render import cell_value
from ..formats.tables import Cell, Latex, Table, cell_text, render
from ..terminal import quantity
from .significance import DEFAULT_STATS, StatSettings, adjust, few_queries, level_text, no_spread, paired_stats

COMPARE_FORMATS = ("table", "markdown", "latex", "csv", "tsv", "json")


@dataclass(frozen=True)
class PairTest:
    """`run` against `other` on one measure; `difference` is run minus other (mean over queries)."""

    measure: Measure
    run: str
    other: str
    difference: float
    ci_low: float
    ci_high: float
    t_p: float
    randomization_p: float
    bootstrap_p: float
    p: float  # the chosen test's p-value after correction
    significant: bool


@dataclass(frozen=True)
class Comparison:
    """Runs' aggregates on each measure and the paired tests between them."""

    evaluations: list[Evaluation]
    measures: list[Measure]
    tests: list[PairTest]
    settings: StatSettings
    baseline: str | None  # None when every pair was tested

    def __repr__(self) -> str:  # a notebook shows the object, not every Evaluation and PairTest
        against = "every pair" if self.baseline is None else f"baseline {self.baseline!r}"
        significant = sum(t.significant for t in self.tests)
        return (f"Comparison(runs {', '.join(map(repr, self.runs))} on {', '.join(m.name for m in self.measures)}; "
                f"{quantity(len(self.tests), 'paired test')} against {against}, {significant} significant "
                f"({self.settings.test}, {self.settings.correction}, alpha {self.settings.alpha:g}))")

    @property
    def runs(self) -> list[str]:
        return [e.run_name for e in self.evaluations]

    def letter(self, run: str) -> str:
        return run_letter(self._index(run))

    def value(self, run: str, measure: Measure | str) -> float:
        return self.evaluations[self._index(run)].aggregate(self._compared(measure))

    def beaten(self, run: str, measure: Measure | str) -> list[str]:
        """Runs that `run` beats significantly on `measure`, in table order."""
        self._index(run)
        measure = self._compared(measure)
        losers = set()
        for t in self.tests:
            if t.measure == measure and t.significant and run in (t.run, t.other):
                winner, loser = (t.run, t.other) if t.difference > 0 else (t.other, t.run)
                if winner == run:
                    losers.add(loser)
        return [r for r in self.runs if r in losers]

    def marks(self, run: str, measure: Measure | str) -> str:
        return "".join(self.letter(r) for r in self.beaten(run, measure))

    def _index(self, run: str) -> int:
        if run not in self.runs:
            raise UsageError(f"run {run!r} was not compared; the runs are {', '.join(map(repr, self.runs))}")
        return self.runs.index(run)

    def _compared(self, measure: Measure | str) -> Measure:
        found = parse_measure(measure)
        if found not in self.measures:
            raise UsageError(f"{found.name} was not compared; the measures are {', '.join(m.name for m in self.measures)}")
        return found


@dataclass(frozen=True)
class Reversal:
    """Two runs that one qrels orders one way and another the other way, a difference one of them calls significant."""

    measure: Measure
    ahead: str  # the run `ref` puts first
    behind: str
    ref: tuple[float, float]  # (ahead, behind) under ref
    test: tuple[float, float]  # the same runs under test, where `behind` leads
    significant: tuple[str, ...]  # which of "ref" and "test" call their difference significant


def reversals(test: Comparison, ref: Comparison) -> list[Reversal]:
    """The tested pairs of runs that `test` and `ref` (the same runs and measures on two qrels: derived labels and
    gold chunks) order oppositely where either comparison's paired test finds the difference significant: there
    the two qrels lead to opposite conclusions, not to a tie read two ways."""
    found = []
    against = {(t.measure, t.run, t.other): t for t in ref.tests}
    for t in test.tests:
        r = against.get((t.measure, t.run, t.other))
        if r is None or t.difference * r.difference >= 0 or not (t.significant or r.significant):
            continue
        ahead, behind = (t.run, t.other) if r.difference > 0 else (t.other, t.run)
        found.append(Reversal(t.measure, ahead, behind, (ref.value(ahead, t.measure), ref.value(behind, t.measure)),
                              (test.value(ahead, t.measure), test.value(behind, t.measure)),
                              tuple(name for name, s in (("ref", r.significant), ("test", t.significant)) if s)))
    return found


def run_letter(index: int) -> str:
    """a, b, ..., z, then aa, ab, ...: the key by which marks name runs."""
    letters = string.ascii_lowercase
    return letters[index] if index < 26 else run_letter(index // 26 - 1) + letters[index % 26]


def compare(
    qrels: QrelsLike,
    runs,
    measures: Measures = None,
    *,
    rel_level: int = 1,
    baseline: str | None = None,
    all_pairs: bool = False,
    test: str = DEFAULT_STATS.test,
    correction: str = DEFAULT_STATS.correction,
    alpha: float = DEFAULT_STATS.alpha,
    permutations: int = DEFAULT_STATS.permutations,
    bootstrap: int = DEFAULT_STATS.bootstrap,
    confidence: float = DEFAULT_STATS.confidence,
    seed: int = DEFAULT_STATS.seed,
    judged_only: bool = False,
    depth: int | None = None,
    corpus: str | os.PathLike | None = None,
) -> Comparison:
    """`semrel.compare`: evaluate two or more runs on the qrels and test each against `baseline` (default:
    the first), or every pair with `all_pairs=True`; as `semrel compare` does, with its defaults.

    qrels and runs take what `semrel.evaluate` takes (several runs: a list, or a dict {name: run});
    measures are names or Measure objects. `test` ('t', 'randomization', 'bootstrap') decides
    significance at `alpha` after `correction` ('holm', 'bonferroni', 'none') within each measure.
    The Comparison answers `value(run, measure)`, `marks(run, measure)` (letters of the runs beaten
    significantly) and holds every PairTest in `tests`; render_comparison(c, "markdown") is its table.
    judged_only, depth, corpus: as `evaluate`'s (`semrel compare -J`, `-M`, `--corpus`); the tests are on the values scored.
    """
    check_flags(all_pairs=all_pairs, judged_only=judged_only)
    check_kind("corpus", corpus, (str, os.PathLike), "a corpus.jsonl path")
    check_kind("baseline", baseline, (str,), "a run's name")
    settings = StatSettings(test=test, permutations=permutations, bootstrap=bootstrap, seed=seed, alpha=alpha,
                            confidence=confidence, correction=correction)
    if all_pairs and baseline is not None:
        raise UsageError("give baseline= or all_pairs=True, not both")
    if isinstance(runs, Iterator):
        runs = list(runs)  # counted here, then read
    names, _, several = as_runs(runs)
    if not several or len(names) < 2:  # before the evaluation, whose warnings would come first
        raise UsageError("runs: give two or more runs to compare (a list, or a dict {name: run})")
    evaluations, _ = evaluate_runs(qrels, runs, measures, rel_level, stacklevel=2, corpus=corpus, judged_only=judged_only, depth=depth)
    notes: list[str] = []
    result = compare_evaluations(evaluations, settings, baseline=baseline, all_pairs=all_pairs, warn=notes.append)
    tell(notes, None)  # from the caller's line, as the evaluation's warnings (it came from this file's)
    return result


def compare_evaluations(
    evaluations: Sequence[Evaluation],
    settings: StatSettings = StatSettings(),
    baseline: str | None = None,
    all_pairs: bool = False,
    warn: Callable[[str], None] | None = None,
) -> Comparison:
    """Test each run against `baseline` (default: the first), or every pair with `all_pairs`. Text
    measures (runid, relstring) are left out. `warn` hears when two runs or more share fewer than significance.FEW_QUERIES queries, and of
    differences the chosen test cannot weigh (significance.no_spread)."""
    evaluations = list(evaluations)
    if evaluations:
        kept = numeric_measures(evaluations[0].values, "compare")
        evaluations = [dataclasses.replace(e, values={m: e.values[m] for m in kept}) for e in evaluations]
    names = [e.run_name for e in evaluations]
    require_distinct_names(names)
    if all_pairs and baseline is not None:
        raise UsageError("give baseline= or all_pairs=True, not both")
    if baseline is not None and baseline not in names:
        raise UsageError(f"baseline={baseline!r} is none of the runs ({', '.join(names)})")
    queries = len(evaluations[0].query_ids) if evaluations else 0
    few = few_queries(queries)
    if few and len(evaluations) > 1:  # a lone run (a report's) has no test
        tell([few], warn)
    measures = list(evaluations[0].values) if evaluations else []
    if all_pairs:
        pairs = [(j, i) for i in range(len(names)) for j in range(i + 1, len(names))]
        baseline_name = None
    else:
        base = names.index(baseline) if baseline is not None else 0
        pairs = [(i, base) for i in range(len(names)) if i != base]
        baseline_name = names[base] if names else None
    columns = [(m, i, j) for m in measures for i, j in pairs]
    diffs = np.column_stack([paired_values(m, evaluations[i].values[m]) - paired_values(m, evaluations[j].values[m])
                             for m, i, j in columns]) if columns else None
    tests: list[PairTest] = []
    if diffs is not None:
        found = paired_stats(diffs, settings)
        if flat := no_spread(diffs, settings, [f"{m.name} {names[i]} vs {names[j]}" for m, i, j in columns]):
            tell([flat], warn)
        chosen = found.p_values(settings.test)
        corrected = np.empty(len(columns))
        for m in measures:  # each measure is its own family of hypotheses
            at = [k for k, (mm, _, _) in enumerate(columns) if mm == m]
            corrected[at] = adjust(chosen[at], settings.correction)
        for k, (m, i, j) in enumerate(columns):
            # on the scale of the 'all' row: a sum's total, a geometric mean's change
            low, difference, high = (aggregate_change(m, evaluations[j].aggregate(m), len(diffs), float(v))
                                     for v in (found.ci_low[k], found.mean[k], found.ci_high[k]))
            tests.append(PairTest(
                measure=m, run=names[i], other=names[j], difference=difference,
                ci_low=low, ci_high=high, t_p=float(found.t_p[k]),
                randomization_p=float(found.randomization_p[k]), bootstrap_p=float(found.bootstrap_p[k]),
                p=float(corrected[k]), significant=bool(corrected[k] < settings.alpha and found.mean[k] != 0),
            ))
    return Comparison(evaluations, measures, tests, settings, baseline_name)


def _marked(value: Cell, marks: str, fmt: str, places: int) -> str:
    text = cell_text(value, places)
    if not marks:
        return text
    if fmt == "latex":
        return Latex(f"{text}$^{{{marks}}}$")
    if fmt == "markdown":
        return f"{text}<sup>{marks}</sup>"
    return f"{text} {marks}"


def summary_table(c: Comparison, fmt: str, places: int) -> Table:
    """One row per run (its letter, its name), one column per measure; marks attached per format."""
    header = ["#", "run"] + [m.name for m in c.measures]
    rows: list[list[Cell]] = []
    for run in c.runs:
        cells: list[Cell] = [cell_value(m, c.value(run, m)) for m in c.measures]  # counts whole, as eval prints them (1063)
        if fmt not in ("csv", "tsv"):  # for people the marks beside the values; for programs in columns of their own
            cells = [_marked(cell, c.marks(run, m), fmt, places) for cell, m in zip(cells, c.measures)]
        rows.append([c.letter(run), run, *cells])
    if fmt in ("csv", "tsv"):
        header += [f"{m.name} beats" for m in c.measures]
        rows = [row + [c.marks(run, m) for m in c.measures] for row, run in zip(rows, c.runs)]
    return Table(header, rows)


def tests_table(c: Comparison) -> Table:
    """One row per paired test: the difference, its interval and every p-value."""
    level = level_text(c.settings.confidence)
    header = ["measure", "run", "vs", "difference", f"{level} low", f"{level} high", "p t", "p randomization",
              "p bootstrap", f"p {c.settings.test} ({c.settings.correction})", "significant"]
    rows = [[t.measure.name, t.run, t.other, t.difference, t.ci_low, t.ci_high, t.t_p, t.randomization_p,
             t.bootstrap_p, t.p, "yes" if t.significant else "no"] for t in c.tests]
    return Table(header, rows)


def legend(c: Comparison) -> str:
    """The sentence that says what the marks mean."""
    s = c.settings
    against = "every other run" if c.baseline is None else f"the baseline {c.baseline!r}"
    return (f"Marks: the letters of the runs a value is significantly better than (tested against {against}; "
            f"{s.test} test, {s.correction} correction within each measure, p < {s.alpha:g}; "
            f"{s.permutations} permutations, {s.bootstrap} bootstrap resamples, seed {s.seed}). The paired tests' "
            f"{level_text(s.confidence)} intervals are the bootstrap's percentiles of the mean difference, uncorrected: near "
            "the threshold one can leave out 0 where the test is not significant.")


def comparison_json(c: Comparison) -> dict[str, Any]:
    s = c.settings
    return {
        "settings": {"test": s.test, "correction": s.correction, "alpha": s.alpha, "permutations": s.permutations,
                     "bootstrap": s.bootstrap, "confidence": s.confidence, "seed": s.seed, "baseline": c.baseline,
                     "all_pairs": c.baseline is None},
        "queries": len(c.evaluations[0].query_ids) if c.evaluations else 0,
        "runs": [{"key": c.letter(r), "run": r, "values": {m.name: c.value(r, m) for m in c.measures},
                  "beats": {m.name: c.beaten(r, m) for m in c.measures}} for r in c.runs],
        "tests": [{"measure": t.measure.name, "run": t.run, "vs": t.other, "difference": t.difference,
                   "ci": [t.ci_low, t.ci_high], "p_t": t.t_p, "p_randomization": t.randomization_p,
                   "p_bootstrap": t.bootstrap_p, "p": t.p, "significant": t.significant} for t in c.tests],
    }


def render_comparison(c: Comparison, fmt: str, places: int = 4, detail: bool = False) -> str:
    """The run table (or, with `detail`, the table of paired tests) in one of COMPARE_FORMATS."""
    check_kind("c", c, (Comparison,), "the Comparison semrel.compare returns", required=True)
    if fmt not in COMPARE_FORMATS:
        raise UsageError(f"format {fmt!r}: choose one of {', '.join(COMPARE_FORMATS)}")
    if fmt == "json":
        return json.dumps(comparison_json(c), indent=2) + "\n"
    if detail:
        return render(tests_table(c), fmt, places)
    text = render(summary_table(c, fmt, places), fmt, places)
    if fmt in ("table", "markdown"):
        text += "\n" + legend(c) + "\n"
    return text

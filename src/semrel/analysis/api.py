"""`semrel.sensitivity`, `semrel.calibrate` and `semrel.agree`: the Python side of `semrel sensitivity`, `semrel
calibrate` and `semrel agree`.

Thin over sensitivity.py, calibrate.py and agreement.py, which the commands call too: the same defaults (choose_sweep,
calibrate_labels), the same checks and messages, the same numbers and files. Judgments come as a
judgments.jsonl or a list of Judgment (as `semrel.label` takes them), runs in any form `semrel.evaluate`
takes several; each returns the library's own result object.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Callable, Union, cast

import pyarrow.compute as pc

from ..errors import UsageError, check_flags, check_kind, check_list, check_seed, check_warn, tell
from ..evaluation.api import Measures, QrelsLike, RunLike, as_qrels, as_run, as_runs
from ..evaluation.files import require_judgments, shallow_cutoffs
from ..evaluation.measures import parse_measures
from ..formats.files import display_name, guarded
from ..formats.judgments import given_judgment_columns
from ..judging.labels import ProbabilityRule, Rule, ThresholdRule
from ..records import Judgment
from .agreement import AGREE_MEASURES, Agreed, Weights, assessor_groups, majority_qrels
from .agreement import agree as agree_labels
from .calibrate import Calibration, Human, ProbabilityCalibration, calibrate_labels, write_fitted
from .lift import TOP_QUERIES, Lift, choose_latency, require_two_runs
from .lift import lift as lift_runs
from .sensitivity import Sensitivity, choose_sweep, sensitivity_warnings, write_curves
from .sensitivity import sensitivity as sweep_runs
from .significance import DEFAULT_STATS, StatSettings

PathLike = Union[str, os.PathLike]
Warn = Callable[[str], None]


def _assessors(given: Any, name: str) -> list[tuple[str, Any]]:
    """Several assessors' labels (groups=True): a qrels_jg file, or {assessor: qrels} in any form `evaluate` takes."""
    if isinstance(given, (str, os.PathLike)):
        return assessor_groups(given)
    check_kind(name, given, (Mapping,), "{assessor: qrels} or a qrels_jg file path, with groups=True", required=True)
    return [(str(assessor), as_qrels(q, f"{name}[{assessor!r}]")) for assessor, q in cast(Mapping, given).items()]


def _human(given: Any, name: str, groups: bool) -> Human:
    """Human labels for calibrate_labels: a file stays a file (its name in messages and the manifest), Python's forms are
    read here; several assessors' become their majority."""
    if groups:
        return majority_qrels(_assessors(given, name), f"{name} [majority]") if not isinstance(given, (str, os.PathLike)) else given
    return given if isinstance(given, (str, os.PathLike)) else as_qrels(given, name)


def _run_paths(runs: Any) -> list[PathLike]:
    """The files among the runs given (a manifest names the inputs that are files)."""
    given = runs.values() if isinstance(runs, Mapping) else runs if isinstance(runs, (list, tuple)) else [runs]
    return [r for r in given if isinstance(r, (str, os.PathLike))]


@guarded
def sensitivity(
    judgments: PathLike | Iterable[Judgment],
    runs: Iterable[RunLike] | Mapping[str, RunLike],
    measures: Measures = None,
    *,
    on: str | None = None,
    thresholds: Sequence[float] | None = None,
    at: float | None = None,
    calibration: PathLike | Rule | None = None,
    rel_level: int = 1,
    test: str = DEFAULT_STATS.test,
    correction: str = DEFAULT_STATS.correction,
    alpha: float = DEFAULT_STATS.alpha,
    permutations: int = DEFAULT_STATS.permutations,
    bootstrap: int = DEFAULT_STATS.bootstrap,
    seed: int = DEFAULT_STATS.seed,
    curves: PathLike | None = None,
    warn: Warn | None = None,
) -> Sensitivity:
    """How runs' values, their ranking and significant wins move with the label threshold (the Python side of
    `semrel sensitivity`, with its defaults): the judgments relabelled in memory at each threshold (binary: score
    >= threshold), every run evaluated on each labelling, every pair of runs tested at each threshold.

    judgments: a judgments.jsonl or a list of Judgment. runs: as `evaluate` takes them (one run: its curve and the cliff check, no ranking).
    measures: default `DEFAULT_MEASURES`. on: the score swept, p (the default where the judgments hold it)
    or P, R, F (default R without p). thresholds: the grid (default 0.05..0.95 by 0.01 on p, 0.5..0.9 on
    P, R, F; `semrel.analysis.sensitivity.threshold_grid` makes others). at: the chosen threshold, rankings
    compared with the ranking there (default the shipped cut on p, 0.7 on P, R, F). calibration: a refit of every
    coefficient (`semrel calibrate --fit features -o FILE`, or its rule): its p is swept, at its cut.
    test, correction, alpha, permutations, bootstrap, seed: the paired tests, as `compare`'s.
    curves: write rows threshold,run,measure,value there (CSV, for `semrel report --sensitivity`) with a
    manifest. Pairs labelled by the rule's fallback, queries on one side only and a chosen threshold on a
    cliff of the curves are reported to `warn`, else as Python warnings.
    Returns the Sensitivity (`render_sensitivity(s, "table")` prints the command's tables).
    """
    check_warn(warn)
    check_kind("on", on, (str,), "a score name (p, P, R, F)")
    check_kind("at", at, (numbers.Real,), "a number")
    check_kind("calibration", calibration, (str, os.PathLike, ThresholdRule, ProbabilityRule),
               "the file `semrel calibrate -o` wrote, or a rule")
    check_kind("rel_level", rel_level, (numbers.Integral,), "a whole number", required=True)
    check_kind("curves", curves, (str, os.PathLike), "a file path")
    for name, value in (("test", test), ("correction", correction)):
        check_kind(name, value, (str,), "a name")
    thresholds = check_list("thresholds", thresholds, (numbers.Real,), "a list of numbers, e.g. [0.3, 0.4, 0.5]", "numbers")
    chosen = parse_measures(measures)
    settings = StatSettings(test=test, permutations=permutations, bootstrap=bootstrap, seed=seed, alpha=alpha, correction=correction)
    judged, source = given_judgment_columns(judgments, empty_ok=False)
    sweep = choose_sweep(judged, on, None if at is None else float(at), calibration,
                         None if thresholds is None else [float(t) for t in thresholds], source=source)
    if isinstance(runs, Iterator):  # read twice: as runs, and for the files the curves' manifest names
        runs = list(runs)
    _, read, _ = as_runs(runs)
    loaded = list(read)  # a run of the wrong kind altogether is a TypeError first
    result = sweep_runs(judged, loaded, chosen, sweep.thresholds, sweep.at, sweep.on, settings, int(rel_level),
                        refit=sweep.refit)
    tell(sensitivity_warnings(result), warn, stacklevel=3)  # past @guarded's wrapper, to the caller's line
    if curves is not None:
        write_curves(result, curves, inputs=[p for p in (source, *_run_paths(runs)) if p is not None])
    return result


@guarded
def calibrate(
    judgments: PathLike | Iterable[Judgment],
    reviewed: QrelsLike | Mapping[str, QrelsLike],
    *,
    on: str | None = None,
    fit: str | None = None,
    graded: bool = False,
    grades: int | None = None,
    weights: str | None = None,
    unlisted_as_zero: bool = False,
    test: QrelsLike | Mapping[str, QrelsLike] | None = None,
    test_unlisted_as_zero: bool = False,
    seed: int = 0,
    output: PathLike | None = None,
    groups: bool = False,
    test_groups: bool = False,
    warn: Warn | None = None,
) -> ProbabilityCalibration | Calibration:
    """The labels fitted to human labels (the Python side of `semrel calibrate`, with its defaults).

    judgments: a judgments.jsonl or a list of Judgment. reviewed: the human labels, a qrels file (e.g. from
    `semrel review export --only-reviewed`), a golden.jsonl or any qrels `evaluate` takes; grade > 0 is relevant.
    By default (on='p', where the judgments hold p) the judge's probability is refitted on the reviewed pairs
    (fit: features, every coefficient, where the judgments keep them, else anchored; or shift, platt;
    graded=True: grades 0-3) and the cut moves to the highest expected kappa over every judged pair's refitted
    p: a ProbabilityCalibration (`.rule`, `.before`, `.after`). With on= P, R or F: the thresholds on that
    score maximizing kappa (grades=: their number, default the human labels' top grade; weights: none,
    linear, quadratic), a Calibration (`.thresholds`, `.agreement`). unlisted_as_zero: a judged pair of a
    query the human file holds but does not list is grade 0. test: human labels to measure the result on,
    the calibration pairs left out (`.held_out`). output: write the fitted rule there, the file `semrel label
    --calibration` (and `semrel.label(calibration=...)`) reads, with its manifest. groups=True: `reviewed` holds
    several assessors' labels, its second column naming the assessor (trec_eval's qrels_jg), or `{assessor: qrels}`,
    fitted to by their majority grade of each pair (ties to the lower); test_groups=True: `test` too. What the command warns of goes to
    `warn`, else to Python warnings.
    """
    check_warn(warn)
    check_kind("output", output, (str, os.PathLike), "a file path")
    for name, value in (("on", on), ("fit", fit), ("weights", weights)):
        check_kind(name, value, (str,), "a name")
    check_kind("grades", grades, (numbers.Integral,), "a whole number of thresholds")
    check_seed(seed)
    check_flags(graded=graded, unlisted_as_zero=unlisted_as_zero, test_unlisted_as_zero=test_unlisted_as_zero, groups=groups,
                test_groups=test_groups)
    judged, source = given_judgment_columns(judgments, empty_ok=False)
    human = _human(reviewed, "reviewed", groups)
    tested = None if test is None else _human(test, "test", test_groups)
    notes: list[str] = []
    result = calibrate_labels(judged, human, on, fit, graded, None if grades is None else int(grades), cast(Weights, weights),
                              unlisted_as_zero, tested, test_unlisted_as_zero, int(seed), notes.append, groups=groups,
                              test_groups=test_groups)
    tell(notes, warn, stacklevel=3)
    if output is not None:  # the manifest hashes the inputs that are files
        files = [p for p in (source, reviewed) if isinstance(p, (str, os.PathLike))]
        write_fitted(result, output, files, unlisted_as_zero, int(seed), source, groups)
    return result


@guarded
def agree(
    ref: QrelsLike | Mapping[str, QrelsLike],
    test: QrelsLike,
    runs: Iterable[RunLike] | Mapping[str, RunLike] | None = None,
    measures: Measures = None,
    *,
    groups: bool = False,
    unlisted_as_zero: bool = False,
    seed: int = 0,
    rel_level: int = 1,
    warn: Warn | None = None,
) -> Agreed:
    """How far `test`'s labels agree with `ref`'s (the Python side of `semrel agree`, with its defaults): Cohen's kappa on
    the pairs both judge (unlisted_as_zero: every pair either lists, a missing grade 0), on the smaller of the two
    scales, with a bootstrap interval; with runs (two or more, as `evaluate` takes several), Kendall's tau between the
    orders each qrels gives them, per measure (default nDCG@10, AP, RR, P@10; a grade of rel_level or more counts as
    relevant, as in `evaluate`). Qrels as `evaluate` takes them.

    groups=True: `ref` holds several assessors' labels, a qrels file whose second column names the assessor (trec_eval's
    qrels_jg) or `{assessor: qrels}`: test is compared with each, with their majority (ties to the lower grade; the
    rankings use it) and the assessors with each other, whose mean kappa is the yardstick.
    Returns `semrel.analysis.agreement.Agreed`: `.labels` (an Agreement: `.kappa`, `.low`, `.high`, `.confusion`),
    `.rankings`, `.groups` (`.each`, `.majority`, `.between`, `.between_mean`). Warnings go to `warn`, else to Python
    warnings."""
    check_warn(warn)
    check_flags(groups=groups, unlisted_as_zero=unlisted_as_zero)
    check_seed(seed)
    check_kind("rel_level", rel_level, (numbers.Integral,), "a whole number", required=True)
    given = _assessors(ref, "ref") if groups else as_qrels(ref, "ref")
    if measures is not None and runs is None:  # ignored in silence before: there were no rankings to measure
        raise UsageError("measures= score the rankings of runs=: give runs= too")
    if rel_level != 1 and runs is None:
        raise UsageError("rel_level= sets what the rankings of runs= count as relevant: give runs= too")
    loaded = list(as_runs(runs)[1]) if runs is not None else []
    notes: list[str] = []
    chosen = parse_measures(measures or AGREE_MEASURES)
    result = agree_labels(given, as_qrels(test, "test"), loaded, chosen, unlisted_as_zero, int(seed), notes.append, int(rel_level))
    tell(notes, warn, stacklevel=3)
    return result


@guarded
def lift(
    qrels: QrelsLike,
    base: RunLike,
    reranked: RunLike,
    measures: Measures = None,
    *,
    depth: int | None = None,
    latency: PathLike | None = None,
    base_ms: float | None = None,
    reranked_ms: float | None = None,
    top: int = TOP_QUERIES,
    rel_level: int = 1,
    test: str = DEFAULT_STATS.test,
    alpha: float = DEFAULT_STATS.alpha,
    permutations: int = DEFAULT_STATS.permutations,
    bootstrap: int = DEFAULT_STATS.bootstrap,
    seed: int = DEFAULT_STATS.seed,
    warn: Warn | None = None,
) -> Lift:
    """The lift of `reranked` over `base` on the qrels (the Python side of `semrel lift`, with its defaults): per measure
    both values, the change, its interval, p-value and wins/ties/losses over queries, the `top` queries that gained and
    lost most, and with timings (`latency`: a file of qid, base_ms, reranked_ms; or the two means `base_ms`, `reranked_ms`)
    the change per millisecond. depth: reranked documents must come from the base run's top `depth`.
    qrels and runs take what `evaluate` takes. Returns the Lift (`render_lift(l, "table")` prints the command's table);
    a reranked run that is no reordering of the base, shallow cutoffs and one-sided queries go to `warn`."""
    check_warn(warn)
    check_kind("depth", depth, (numbers.Integral,), "a whole number of documents, at least 1")
    check_kind("top", top, (numbers.Integral,), "a number of queries, 0 or more", required=True)
    check_kind("rel_level", rel_level, (numbers.Integral,), "a whole number", required=True)
    check_kind("latency", latency, (str, os.PathLike), "a file path")
    check_kind("base_ms", base_ms, (numbers.Real,), "a number of milliseconds")
    check_kind("reranked_ms", reranked_ms, (numbers.Real,), "a number of milliseconds")
    if depth is not None and depth < 1 or top < 0:
        raise UsageError(f"depth={depth!r}, top={top!r}: give a depth of 1 or more (or None) and a top of 0 or more")
    settings = StatSettings(test=test, permutations=permutations, bootstrap=bootstrap, seed=seed, alpha=alpha)
    if isinstance(base, (str, os.PathLike)) and isinstance(reranked, (str, os.PathLike)):
        require_two_runs(base, reranked, ("base", "reranked"))
    judged = as_qrels(qrels)
    require_judgments(judged, display_name(judged.source) if judged.source else "qrels")
    notes: list[str] = []
    timings = choose_latency(latency, base_ms, reranked_ms, pc.unique(judged.query_ids).to_pylist(), notes.append,
                             ("latency=", "base_ms=", "reranked_ms="))
    first, second = as_run(base, "base", "base"), as_run(reranked, "reranked", "reranked")
    chosen = parse_measures(measures)
    notes += shallow_cutoffs(chosen, [first, second])
    result = lift_runs(judged, first, second, chosen, settings, depth, timings, top, rel_level)
    tell([*notes, *result.warnings()], warn, stacklevel=3)  # past @guarded's wrapper, to the caller's line
    return result

"""Fitting the labels to human labels: the judge's probability refitted on reviewed pairs, or
thresholds on a judge score that agree best with them.

The probability (the default rule, semrel.judging.labels) is refitted by maximum likelihood on
the reviewed pairs. `features` (the default) refits the model itself: every coefficient, with a
Gaussian prior of sd FEATURES_SD on its move off the shipped one, from the features judgments keep
beside p; where the user's idea of relevance weighs the features differently a few dozen pairs
reorder the pairs, so its labels are computed from the features, not cut on the judge's p. The
others refit logit(p) as sigmoid(slope * logit(p) + shift): `anchored` with a Gaussian prior of sd
ANCHOR_SD on slope - 1, `shift` the offset alone, `platt` slope and offset (the slope lightly
penalised toward 0 as scikit-learn's C=10 does). Given every judged pair's p, the cut then moves
to where labels agree best, in expectation, with labels drawn from the refitted p
(`expected_kappa_cut`): once p is fitted to the user's own data its cut can follow that data's
share of relevant pairs, which the shipped cut, chosen on the development sets, cannot.
bench/labels.py measured what each gains against the number of pairs reviewed (docs/review.md).

Thresholds:

Cut points are the distinct scores' midpoints (plus one below and one above all scores), so
every way of splitting the sorted scores is a candidate. One threshold (binary labels) is
searched exhaustively. N thresholds are searched exhaustively over every combination of
cut points when there are few enough, else over combinations of a quantile grid followed by
coordinate ascent over all cut points (each threshold in turn, between its neighbours) until
no step improves kappa. Each candidate's confusion matrix comes from cumulative counts, so
thousands of kappas cost one vectorized call.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
from dataclasses import dataclass
from typing import Callable, Sequence, Union

import numpy as np

from ..errors import UsageError, ValidationError, tell
from ..formats import read_qrels
from ..formats.files import atomic_writer, display_name
from ..formats.judgments import PROBABILITY, SCORES, JudgmentColumns
from ..formats.manifest import outputs_with_manifests, read_params, with_manifests, write_manifest
from ..formats.trec import graded_pairs
from ..judging import labels
from ..judging.labels import CUT, DEFAULT_COMPONENT, GET_P, WITHOUT_P, Judged, ProbabilityRule, has_features, logit, reached
from ..records import Qrels
from ..terminal import agreeing, quantity
from .agreement import WEIGHTS, Agreement, Weights, agreement, assessor_groups, kappa_from_confusion, majority_qrels, on_scale

PROBABILITY_FITS = ("features", "anchored", "shift", "platt")
DEFAULT_FIT = "features"  # "anchored" where the judgments hold p without its features (an older semrel judge)
PLATT_C = 10.0  # inverse penalty on the slope, as scikit-learn's LogisticRegression(C=10)
ANCHOR_SD = 0.25  # the anchored fit's prior on the slope: 1 (the judge's spread of p is right) give or take this
FEATURES_SD = 1.0  # --fit features: the prior on each coefficient's move off the shipped one (0, give or take this)

EXHAUSTIVE_COMBINATIONS = 200_000


@dataclass(frozen=True)
class Calibration:
    on: str
    thresholds: list[float]
    agreement: Agreement  # of the calibrated labels (rows: human, columns: judge) on the calibration pairs
    held_out: Agreement | None = None  # on the test file's other pairs (calibrate_labels' `test`)

    def to_json(self) -> dict:
        return {"on": self.on, "thresholds": self.thresholds, **self.agreement.to_json(),
                **({"test": self.held_out.to_json()} if self.held_out else {})}


def _confusions(cum: np.ndarray, combos: np.ndarray, size: int) -> np.ndarray:
    """(B, size, size) confusion matrices, rows human grade, columns predicted grade, for cut
    point index combinations `combos` (B, N) into cum (cum[k, h] = items below cut k with grade h)."""
    bounds = np.concatenate([np.zeros((len(combos), 1), np.int64), combos, np.full((len(combos), 1), len(cum) - 1)], axis=1)
    per_grade = cum[bounds[:, 1:]] - cum[bounds[:, :-1]]  # (B, N+1, H): predicted grade g, human grade h
    out = np.zeros((len(combos), size, size))
    out[:, : cum.shape[1], : per_grade.shape[1]] = per_grade.transpose(0, 2, 1)
    return out


def best_thresholds(scores: np.ndarray, human: np.ndarray, count: int, weights: Weights) -> list[float]:
    """The `count` increasing thresholds whose grades (thresholds reached) maximize kappa with `human`."""
    values, index = np.unique(np.asarray(scores, dtype=np.float64), return_inverse=True)
    human = np.maximum(np.asarray(human, dtype=np.int64), 0)
    cuts = np.concatenate([[values[0]], (values[1:] + values[:-1]) / 2.0, [values[-1] + 1.0]])
    if count > len(cuts):
        raise ValidationError(f"{count} thresholds need at least {count - 1} distinct scores; found {len(values)}")
    grades = int(human.max()) + 1
    cum = np.zeros((len(cuts), grades))
    np.add.at(cum, (index + 1, human), 1)
    cum = np.cumsum(cum, axis=0)
    size = max(grades, count + 1)

    def score(combos: np.ndarray) -> np.ndarray:
        kappa = kappa_from_confusion(_confusions(cum, combos, size), weights)
        return np.where(np.isfinite(kappa), kappa, -np.inf)

    everything = np.arange(len(cuts))
    if math.comb(len(cuts), count) <= EXHAUSTIVE_COMBINATIONS:
        grid = everything
    else:
        width = len(cuts)
        while math.comb(width, count) > EXHAUSTIVE_COMBINATIONS:
            width = int(width * 0.9)
        grid = np.unique(np.linspace(0, len(cuts) - 1, width).round().astype(np.int64))
    combos = np.array(list(itertools.combinations(grid.tolist(), count)), dtype=np.int64)
    kappas = score(combos)
    best, best_kappa = combos[int(np.argmax(kappas))].copy(), float(kappas.max())
    improved = len(grid) < len(cuts)
    while improved:
        improved = False
        for j in range(count):
            low = best[j - 1] + 1 if j else 0
            high = best[j + 1] if j + 1 < count else len(cuts)
            trial = np.repeat(best[None, :], high - low, axis=0)
            trial[:, j] = np.arange(low, high)
            values_j = score(trial)
            at = int(np.argmax(values_j))
            if values_j[at] > best_kappa + 1e-12:
                best, best_kappa, improved = trial[at].copy(), float(values_j[at]), True
    return [float(cuts[k]) for k in best]


def calibrate(scores: np.ndarray, human: np.ndarray, count: int, weights: Weights | None = None, on: str = "R",
              resamples: int = 1000, seed: int = 0) -> Calibration:
    """Thresholds maximizing kappa (quadratic-weighted for several, plain for one unless
    `weights` says otherwise), with the kappa reached, its bootstrap interval (at the chosen
    thresholds: an in-sample, optimistic figure) and the confusion matrix."""
    if len(scores) == 0:
        raise ValidationError("no pairs have both a judge score and a human label; check that the ids match")
    require_two_classes(human, "a fit of thresholds", binary=count == 1)
    top = int(np.max(human))
    if count > top:  # a threshold for a grade no pair has would sit above every score: a made-up number
        raise ValidationError(f"{count} thresholds asked for, but the human labels' top grade is {top}: ask for {top} at most "
                              "(grades=), one per grade they use")
    chosen: Weights = weights or ("quadratic" if count > 1 else "none")
    thresholds = [round(t, 6) for t in best_thresholds(scores, on_scale(human, count), count, chosen)]
    return Calibration(on, thresholds, graded_agreement(scores, human, thresholds, chosen, resamples, seed))


def graded_agreement(scores: np.ndarray, human: np.ndarray, thresholds: list[float], weights: Weights,
                     resamples: int = 1000, seed: int = 0) -> Agreement:
    """Agreement of human grades (rows; negative ones count as 0) with the grades the thresholds give (columns), on the
    smaller of the two scales, as `semrel agree` compares: one threshold against grades 0-3 is relevance, grade 1 or more,
    as the probability refit takes it, and three against binary labels likewise (a grade above 1 counting as 1), not a
    relevant pair graded 3 by the judge counted as a disagreement. Used on held-out pairs, it is the honest figure
    calibration lacks."""
    human = np.maximum(np.asarray(human, dtype=np.int64), 0)
    top = compared_top(human, len(thresholds))
    chosen: Weights = "none" if top == 1 < len(thresholds) else weights  # collapsed to relevance: plain kappa, as agree gives
    return agreement(on_scale(human, top), on_scale(reached(scores, thresholds), top), chosen, labels=range(top + 1),
                     resamples=resamples, seed=seed)


def compared_top(human: np.ndarray, count: int) -> int:
    """The top grade human grades and `count` thresholds' grades compare on: 1 where the humans give binary labels (0 and 1)
    against several thresholds, else the thresholds' (human grades 0-2 are a sample of a 0-3 scale lacking its top, whose
    column is still shown)."""
    return 1 if len(human) and int(np.max(human)) == 1 else count


def scale_note(human: np.ndarray, count: int, name: str) -> list[str]:
    """The warning when human grades stop below the grades of `count` thresholds (binary labels against --graded), else none."""
    top = compared_top(np.maximum(np.asarray(human, dtype=np.int64), 0), count)
    if top >= count:
        return []
    return [f"{name} grades up to {top} and the labels up to {count}: agreement compared on grades 0-{top}, a grade above {top} "
            f"counting as {top}, as `semrel agree` compares"]


@dataclass(frozen=True)
class Paired:
    """Judged pairs with a human grade: their ids, judge scores and human grades."""

    pairs: list[tuple[str, str]]
    scores: np.ndarray
    grades: np.ndarray

    def without(self, pairs: set[tuple[str, str]]) -> "Paired":
        keep = [i for i, p in enumerate(self.pairs) if p not in pairs]
        return Paired([self.pairs[i] for i in keep], self.scores[keep], self.grades[keep])


def _log_loss(z: np.ndarray, y: np.ndarray) -> float:
    """Negative log-likelihood of labels y under probabilities sigmoid(z)."""
    return float(np.sum(np.logaddexp(0.0, z) - y * z))


def expected_calibration_error(relevant: np.ndarray, p: np.ndarray, bins: int = 10) -> float:
    """How far p is from the share of pairs actually relevant: over `bins` equal-width bins of p
    (the last one closed), the gap between mean p and that share, weighted by the bin's pairs."""
    y, p = np.asarray(relevant, dtype=np.float64), np.asarray(p, dtype=np.float64)
    edges, total = np.linspace(0, 1, bins + 1), 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (p >= lo) & ((p < hi) if hi < 1 else (p <= hi))
        if inside.any():
            total += inside.sum() * abs(p[inside].mean() - y[inside].mean())
    return total / len(p)


def require_two_classes(grades: np.ndarray, fitting: str, binary: bool = True) -> None:
    """Refuse to fit to reviewed labels of one class (all relevant, all non-relevant, or, for
    grades, all one grade): no refit and no threshold can come from them, only a rule that labels
    every pair alike. Negative grades count as 0. The one check of every fit to human labels."""
    values = np.unique(np.maximum(np.asarray(grades, dtype=np.int64), 0))
    if len(values) == 1:
        only = int(values[0])
        kind = "non-relevant" if only == 0 else "relevant" if binary else f"grade {only}"
        listed = ("; or, if the labels list only relevant pairs (a golden set, gold qrels), count the judged pairs they leave "
                  "out as non-relevant with unlisted_as_zero=") if only > 0 else ""
        counted = "the one reviewed pair is" if len(grades) == 1 else f"the {len(grades)} reviewed pairs are all"
        raise ValidationError(f"{counted} {kind}: {fitting} needs "
                              f"{'both' if binary else 'two grades at least'}; review more pairs (the review queue mixes "
                              f"uncertain and random ones){listed}")


def _both_classes(relevant: np.ndarray) -> np.ndarray:
    """The reviewed labels as 1.0/0.0, refused unless both occur (no refit can come from one class)."""
    y = (np.asarray(relevant) > 0).astype(np.float64)
    require_two_classes(y, "a refit")
    return y


def fit_probability(p: np.ndarray, relevant: np.ndarray, fit: str = "anchored") -> tuple[float, float]:
    """(slope, shift) mapping the judge's p to sigmoid(slope * logit(p) + shift), fitted by maximum
    likelihood on reviewed pairs (`relevant`: 1/0). Both classes must be present."""
    from scipy.optimize import minimize, minimize_scalar

    if fit not in PROBABILITY_FITS or fit == "features":
        raise ValidationError(f"fit={fit!r}: choose one of anchored, shift, platt (fit_features refits every coefficient)")
    y = _both_classes(relevant)
    z = logit(p)
    if fit == "shift":
        found = minimize_scalar(lambda g: _log_loss(z + g, y), bounds=(-10.0, 10.0), method="bounded", options={"xatol": 1e-7})
        return 1.0, float(found.x)
    prior = (lambda slope: (slope - 1) ** 2 / (2 * ANCHOR_SD**2)) if fit == "anchored" else (lambda slope: slope**2 / (2 * PLATT_C))
    found = minimize(lambda v: _log_loss(v[0] * z + v[1], y) + prior(v[0]), x0=np.array([1.0, 0.0]),
                     method="L-BFGS-B", bounds=[(1e-3, 20.0), (-20.0, 20.0)])
    return float(found.x[0]), float(found.x[1])


CUT_GRID = np.round(np.linspace(0.05, 0.95, 91), 2)  # the cuts expected_kappa_cut considers (as the shipped cut's choice)


def expected_kappas(q: np.ndarray, cuts: np.ndarray = CUT_GRID) -> np.ndarray:
    """Cohen's kappa expected at each cut between labels q >= cut and labels drawn from the
    probabilities q: the confusion matrix's expected cells (true positives = the sum of q at or
    above the cut, and so on) put in kappa's formula."""
    q = np.sort(np.asarray(q, dtype=np.float64))
    n = len(q)
    below = np.searchsorted(q, cuts, side="left")  # pairs labelled 0 at each cut
    mass = np.concatenate([[0.0], np.cumsum(q)])
    fn = mass[below]  # relevant mass labelled 0
    tp = mass[-1] - fn
    fp, tn = (n - below) - tp, below - fn
    observed = (tp + tn) / n
    chance = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / n**2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(chance < 1, (observed - chance) / (1 - chance), 0.0)


def expected_kappa_cut(q: np.ndarray) -> float:
    """The cut of CUT_GRID with the highest expected kappa on calibrated probabilities q (the lowest on ties)."""
    return float(CUT_GRID[int(np.argmax(expected_kappas(q)))])


@dataclass(frozen=True)
class Probabilities:
    """Judged pairs' p with the features it came from (rows of FEATURES and with_gold; NaN where a
    judgment holds none), what the probability refits need."""

    p: np.ndarray
    x: np.ndarray
    with_gold: np.ndarray

    @classmethod
    def of(cls, judgments: Judged, pairs: Sequence[tuple[str, str]] | None = None) -> Probabilities:
        """The judgments' (with `pairs`: those of these (query, chunk) ids, in their order); the rows of the pairs
        alone are indexed, not every judged pair."""
        columns = JudgmentColumns.of(judgments)
        if pairs is None:
            return cls(columns.p, columns.features, columns.with_gold)
        wanted = set(pairs)
        row = {pair: i for i, pair in enumerate(zip(columns.query_ids, columns.chunk_ids)) if pair in wanted}
        rows = np.array([row[pair] for pair in pairs], dtype=np.int64)
        return cls(columns.p[rows], columns.features[rows], columns.with_gold[rows])

    def features(self) -> np.ndarray:
        """The feature rows, refused when a judgment lacks them (older judgments hold p alone)."""
        if np.isnan(self.x).any():
            raise ValidationError("fit='features' needs the features the judge writes beside p; some judgments lack them: "
                                  "re-run `semrel judge`")
        return self.x

    def probability(self, rule: ProbabilityRule, models: labels.Models | None = None) -> np.ndarray:
        """The rule's calibrated probability of each pair."""
        return rule.calibrated(self.p) if rule.cuts_on_p else labels.probability(self.features(), self.with_gold, rule.refit, models)

    def scored(self, rule: ProbabilityRule, models: labels.Models | None = None) -> tuple[np.ndarray, tuple[float, ...]]:
        """(scores, thresholds) whose `reached` are the rule's grades: p and the cuts moved onto it, or, for a
        refit of every coefficient, the probability recomputed from the features and the cuts themselves."""
        return (self.p, rule.judge_thresholds) if rule.cuts_on_p else (self.probability(rule, models), rule.thresholds)


def fit_features(pairs: Probabilities, relevant: np.ndarray, sd: float = FEATURES_SD, models: labels.Models | None = None
                 ) -> tuple[float, ...]:
    """The move of every coefficient (intercept first) of each pair's model that makes the reviewed labels most
    likely, under a Gaussian prior of sd `sd` on each move: a hundred pairs can reweigh the features where this
    data's idea of relevance differs from the development sets'."""
    from scipy.optimize import minimize

    y = _both_classes(relevant)
    design = labels.designs(pairs.features(), pairs.with_gold, models)
    base = labels.logits(pairs.x, pairs.with_gold, None, models)

    def loss(delta: np.ndarray) -> tuple[float, np.ndarray]:
        z = base + design @ delta
        gradient = design.T @ (labels.sigmoid(z) - y) + delta / sd**2
        return _log_loss(z, y) + float(delta @ delta) / (2 * sd**2), gradient

    # scipy's default tolerance stopped with a gradient of 0.05 left on 6,000 pairs (tests/analysis/test_calibrate.py)
    found = minimize(loss, np.zeros(design.shape[1]), jac=True, method="L-BFGS-B", options={"ftol": 1e-12, "gtol": 1e-6})
    return tuple(float(v) for v in found.x)


@dataclass(frozen=True)
class ProbabilityCalibration:
    """The judge's p refitted on reviewed pairs, with the agreement before and after (on those pairs)."""

    rule: ProbabilityRule
    fit: str
    pairs: int
    relevant: int
    before: Agreement  # the uncalibrated rule against the human labels (rows: human, columns: judge)
    after: Agreement  # the calibrated rule, on the same pairs (in-sample: optimistic)
    held_out: tuple[Agreement, Agreement] | None = None  # before and after on the test file's other pairs

    def to_json(self) -> dict:
        return {"rule": self.rule.params(), "fit": self.fit, "pairs": self.pairs, "relevant": self.relevant,
                "before": self.before.to_json(), "after": self.after.to_json(),
                **({"test": {"before": self.held_out[0].to_json(), "after": self.held_out[1].to_json()}} if self.held_out else {})}


def calibrate_probability(reviewed: Probabilities, human: np.ndarray, fit: str = DEFAULT_FIT, cut: float = CUT, graded: bool = False,
                          resamples: int = 1000, seed: int = 0, judged: Probabilities | None = None,
                          models: labels.Models | None = None) -> ProbabilityCalibration:
    """Refit p on pairs with human grades (grade > 0: relevant): slope and shift on logit(p), or with
    fit="features" every coefficient. With `judged` (every judged pair, reviewed or not) the cut moves
    to expected_kappa_cut of their refitted p; else it stays `cut`. `models`: the coefficients the
    judge's p came from (default the shipped ones; bench/labels.py passes those it refitted)."""
    human = np.maximum(np.asarray(human, dtype=np.int64), 0)
    if len(reviewed.p) == 0:
        raise ValidationError("no pairs have both a judge probability and a human label; check that the ids match")
    if fit == "features":
        slope, shift, refit = 1.0, 0.0, fit_features(reviewed, human, models=models)
    else:
        (slope, shift), refit = fit_probability(reviewed.p, human, fit), None
    relevant = int((human > 0).sum())
    how: dict = {"fit": fit, "pairs": len(reviewed.p), "relevant": relevant}
    plain = ProbabilityRule(graded, cut)
    if judged is not None and len(judged.p):
        cut = expected_kappa_cut(judged.probability(ProbabilityRule(graded, cut, slope, shift, refit=refit), models))
        how["cut_from"] = f"the highest expected kappa over the {len(judged.p):,} judged pairs' refitted p"
    rule = ProbabilityRule(graded, cut, slope, shift, how, refit)
    weights: Weights = "quadratic" if graded else "none"

    def agree(r: ProbabilityRule) -> Agreement:
        scores, thresholds = reviewed.scored(r, models)
        return graded_agreement(scores, human, list(thresholds), weights, resamples, seed)

    return ProbabilityCalibration(rule, fit, len(reviewed.p), relevant, agree(plain), agree(rule))


def write_probability_calibration(result: ProbabilityCalibration, output: str | os.PathLike, inputs: list[str | os.PathLike],
                                  params: dict, judged: dict | None = None) -> None:
    """The calibrated rule (what `label --calibration`, `run`'s [label] calibration and review's
    --thresholds read), with the judge settings of the judgments it was fitted on (`judged`), and its manifest."""
    with outputs_with_manifests([output]) as staged:
        with atomic_writer(staged[output]) as out:
            json.dump({**result.rule.params(), **({"judged_with": judged} if judged else {})}, out, indent=1)
            out.write("\n")
        write_manifest(output, inputs=inputs, rows=result.pairs, staged=staged, params={
            "rule": "probability", "fit": result.fit, "slope": result.rule.slope, "shift": result.rule.shift,
            "refit": list(result.rule.refit) if result.rule.refit is not None else None, "cut": result.rule.cut,
            "relevant": result.relevant, "kappa_before": result.before.kappa, "kappa_after": result.after.kappa, **params})


Human = Union[str, os.PathLike, Qrels]
"""Human labels: a qrels file (or golden.jsonl), or Qrels already read (assessor groups' majority)."""


def human_labels(path: Human, groups: bool = False) -> Human:
    """The human labels of `path`; with `groups`, of several assessors (trec_eval's qrels_jg), their majority grade of each pair."""
    if not groups or isinstance(path, Qrels):  # Qrels: read already (semrel.calibrate's majority of {assessor: qrels})
        return path
    return majority_qrels(assessor_groups(path), f"{display_name(path)} [majority]")


def human_name(human: Human) -> str:
    return human.source or "the human labels" if isinstance(human, Qrels) else display_name(human)


def paired_probabilities(judgments: JudgmentColumns, human_path: Human, unlisted_as_zero: bool = False,
                         warn: Callable[[str], None] | None = None) -> Paired:
    """As paired_scores, on the judge's probability p, of the pairs that hold one: the refit cannot use the others
    (`warn` hears how many there are), which `semrel label` labels by the probability rule's fallback."""
    missing = int(np.isnan(judgments.p).sum())
    if len(judgments) and missing == len(judgments):
        raise ValidationError(f"{missing} of {quantity(len(judgments), 'judgment')} {agreeing(missing, 'hold')} no probability p "
                              f"({WITHOUT_P}): {GET_P}, or calibrate thresholds on a component with on='R'")
    paired = paired_scores(judgments, human_path, "p", unlisted_as_zero)
    lacking = {pair for pair, p in zip(paired.pairs, paired.scores.tolist()) if math.isnan(p)}
    if missing and warn:
        warn(f"{missing} of {quantity(len(judgments), 'judgment')} {agreeing(missing, 'hold')} no probability p (the judge writes "
             "none for a query whose pool covers the whole corpus, which leaves no null sample): the refit and its cut use the other "
             f"{len(judgments) - missing} ({quantity(len(lacking), 'reviewed pair')} left out), and `semrel label` labels those the rule "
             f"cannot score by {ProbabilityRule().fallback.describe()} (graded: {ProbabilityRule(graded=True).fallback.describe()}); "
             "judge against a larger corpus to calibrate every pair")
    return paired.without(lacking)


def _nothing_shared(human: dict[str, dict[str, int]], judgments: JudgmentColumns, human_path: Human) -> ValidationError:
    """The error for human labels of no judged pair, naming the file and an id of each side: an empty export, or the
    labels of other judgments, was "no pairs have both ...", with neither file named."""
    name = human_name(human_path)
    if not human:
        return ValidationError(f"{name}: no human labels in the file; export the reviewed pairs with `semrel review export "
                               "--only-reviewed` (after reviewing some) and calibrate on that")
    labelled = next((q, c) for q, chunks in human.items() for c in chunks)
    judged = (judgments.query_ids[0], judgments.chunk_ids[0]) if len(judgments) else None
    return ValidationError(f"{name}: none of its {sum(map(len, human.values()))} labelled pairs is judged (it labels e.g. "
                           f"{labelled}, the judgments hold e.g. {judged}); give the human labels of these judgments' pairs")


def _human_only(path: str | os.PathLike) -> Qrels:
    """The qrels at `path`, refused where its manifest says `semrel review export` filled it out with the judge's labels
    (no --only-reviewed): fitted to those, the judge fits itself, and the refusal of a fit on too few pairs never fired."""
    qrels, params = read_qrels(path), read_params(path) or {}
    reviewed = params.get("reviewed_pairs")
    if params.get("only_reviewed") is False and isinstance(reviewed, int) and len(qrels) > reviewed:
        raise ValidationError(f"{display_name(path)}: {len(qrels) - reviewed} of its {quantity(len(qrels), 'label')} are the judge's own, "
                              f"not a person's (`semrel review export` without --only-reviewed: {quantity(reviewed, 'pair')} reviewed); "
                              "export again with --only-reviewed to fit the labels to the reviewed pairs alone")
    return qrels


def paired_scores(judgments: JudgmentColumns, human_path: Human, on: str, unlisted_as_zero: bool = False) -> Paired:
    """The judged pairs the human file grades, in (query, chunk) order as `agree` takes them (in the judgments' line
    order, a shuffled file gave another bootstrap interval and refit); with unlisted_as_zero, a judged pair of a query
    the human file has but whose chunk it does not list counts as grade 0 (for qrels that list
    only relevant chunks, such as gold chunks)."""
    human = graded_pairs(human_path if isinstance(human_path, Qrels) else _human_only(human_path))
    pairs, rows, grades = [], [], []
    query_ids, chunk_ids = judgments.query_ids, judgments.chunk_ids
    for row in sorted(range(len(judgments)), key=lambda i: (query_ids[i], chunk_ids[i])):
        listed = human.get(query_ids[row])
        if listed is not None and (chunk_ids[row] in listed or unlisted_as_zero):
            pairs.append((query_ids[row], chunk_ids[row]))
            rows.append(row)
            grades.append(listed.get(chunk_ids[row], 0))
    if not pairs:
        raise _nothing_shared(human, judgments, human_path)
    return Paired(pairs, judgments.score(on)[np.asarray(rows, dtype=np.int64)], np.asarray(grades, dtype=np.int64))


def write_calibration(result: Calibration, output: str | os.PathLike, inputs: list[str | os.PathLike], pairs: int,
                      params: dict, judged: dict | None = None) -> None:
    """{"rule": "threshold", "on", "thresholds"} (what `label --calibration FILE` and review's --thresholds read), with the
    judge settings of the judgments it was fitted on (`judged`), and its manifest."""
    with outputs_with_manifests([output]) as staged:
        with atomic_writer(staged[output]) as out:
            json.dump({"rule": "threshold", "on": result.on, "thresholds": result.thresholds,
                       "labels": "graded" if len(result.thresholds) > 1 else "binary", **({"judged_with": judged} if judged else {})}, out)
            out.write("\n")
        write_manifest(output, inputs=inputs, rows=pairs, staged=staged, params={
            "on": result.on, "grades": len(result.thresholds), "weights": result.agreement.weights,
            "kappa": result.agreement.kappa, **params})


# ---------------------------------------------------------------- what `semrel calibrate` and `semrel.calibrate` fit


def calibrate_labels(judgments: Judged, human_file: Human, on: str | None = None, fit: str | None = None,
                     graded: bool = False, grades: int | None = None, weights: Weights | None = None,
                     unlisted_as_zero: bool = False, test: Human | None = None, test_unlisted_as_zero: bool = False,
                     seed: int = 0, warn: Callable[[str], None] | None = None,
                     groups: bool = False, test_groups: bool = False) -> ProbabilityCalibration | Calibration:
    """The labels of `judgments` fitted to the human labels of `human_file` (a qrels file; `groups`: of several assessors,
    fitted to by their majority grade of each pair), with the defaults of `semrel calibrate`:
    on p (where the judgments hold it, else R, said to `warn`) the judge's probability is refitted (`fit`: features
    where the judgments keep them, else anchored, said to `warn`; `graded`: grades 0-3) and its cut moved to the
    highest expected kappa over every judged pair's refitted p; on P, R or F, the `grades` thresholds (default the
    human labels' top grade) maximizing kappa (`weights`). `test`: human labels to measure the result on, the
    calibration pairs left out (the result's `held_out`; `test_groups`: of several assessors, measured against their
    majority)."""
    if on is not None and on not in SCORES:
        raise UsageError(f"on={on!r}: choose one of {', '.join(SCORES)}")
    if fit is not None and fit not in PROBABILITY_FITS:
        raise UsageError(f"fit={fit!r}: choose one of {', '.join(PROBABILITY_FITS)}")
    if weights is not None and weights not in WEIGHTS:
        raise UsageError(f"weights={weights!r}: choose one of {', '.join(WEIGHTS)}")
    if grades is not None and grades < 1:
        raise UsageError(f"grades={grades!r}: give 1 or more thresholds")
    if test is None and (test_unlisted_as_zero or test_groups):  # said nothing and measured nothing before
        raise UsageError("test_unlisted_as_zero= and test_groups= read the test= labels: give test= too")
    human = human_labels(human_file, groups)
    tested = None if test is None else human_labels(test, test_groups)
    judgments = JudgmentColumns.of(judgments)
    with_p = judgments.where(~np.isnan(judgments.p))  # a query with no null sample has none: `label` labels its pairs on R
    if on is None:
        on = PROBABILITY if len(with_p) else DEFAULT_COMPONENT
        if on != PROBABILITY and warn:
            warn(f"the judgments hold no probability p ({WITHOUT_P}): fitting thresholds on {on} instead")
    if on != PROBABILITY:
        if graded:
            raise UsageError("graded= applies to the probability refit; with on= P, R or F give grades= N")
        if fit is not None:
            raise UsageError(f"fit={fit!r} applies to the probability refit (on='p'); thresholds on P, R or F take grades= N")
        return _fit_thresholds(judgments, human, on, grades, weights, unlisted_as_zero, tested, test_unlisted_as_zero, seed, warn)
    if grades is not None or weights is not None:
        raise UsageError("grades= and weights= apply to thresholds on P, R or F (on=); the probability refit takes graded=")
    paired = paired_probabilities(judgments, human, unlisted_as_zero, warn)  # first: judgments without any p are refused
    if fit is None:
        fit = DEFAULT_FIT if has_features(with_p) else "anchored"
        if fit != DEFAULT_FIT and warn:
            warn(f"the judgments hold p without the features it came from (an older semrel judge): refitting p's slope and "
                 f"offset (fit={fit!r}); re-run `semrel judge` for a refit of every coefficient")
    count = len(labels.grade_cuts(CUT)) if graded else 1
    tell(scale_note(paired.grades, count, human_name(human)), warn)
    result = calibrate_probability(Probabilities.of(judgments, paired.pairs), paired.grades, fit, graded=graded, seed=seed,
                                   judged=Probabilities.of(with_p))
    if tested is not None:  # read before the refit's notes: a fault in the test file is then the one line said
        rest = _held_out(paired_probabilities(judgments, tested, test_unlisted_as_zero), paired, tested)
        tell(scale_note(rest.grades, count, human_name(tested)), warn)
        target = rest.grades if graded else (rest.grades > 0).astype(int)
        held = Probabilities.of(judgments, rest.pairs)
        before, after = (graded_agreement(scores, target, list(thresholds), "quadratic" if graded else "none", seed=seed)
                         for scores, thresholds in (held.scored(r) for r in (ProbabilityRule(graded), result.rule)))
        result = dataclasses.replace(result, held_out=(before, after))
    tell([*few_pairs_note(result), *few_of_a_class_note(result), *worse_fit_note(result)], warn)
    return result


FEW_PAIRS = 20
"""Reviewed pairs below which a refit is warned of: docs/review.md measured refits from 20 pairs up (`bench/labels.py
--reviewed 20,30`); a refit on 10 pairs, 2 relevant, moved every coefficient with nothing said."""


def few_pairs_note(result: ProbabilityCalibration) -> list[str]:
    """A refit on fewer reviewed pairs than the learning curve measured: its coefficients follow a handful of labels."""
    if result.pairs >= FEW_PAIRS:
        return []
    return [f"fitted on {quantity(result.pairs, 'reviewed pair')} ({result.relevant:,} relevant): refits were measured from "
            f"{FEW_PAIRS} pairs up (docs/review.md, the learning curve), and on fewer one follows a handful of labels; review "
            f"{FEW_PAIRS - result.pairs:,} more before labelling with it"]


FEW_CLASS = 5
"""Reviewed pairs of the smaller class (relevant or not) below which a refit is warned of: on the development sets
refits on fewer made the other pairs' labels worse in 25 of 125 random reviews (by up to 0.290 kappa) and gained
+0.005 on average, against +0.064 with 5 or more (`bench/labels.py`, "Refits on few pairs of one class")."""


def few_of_a_class_note(result: ProbabilityCalibration) -> list[str]:
    """A refit whose reviewed pairs hold a handful of one class: a random review so made labels worse as often as better."""
    relevant, other = result.relevant, result.pairs - result.relevant
    if result.pairs < FEW_PAIRS or min(relevant, other) >= FEW_CLASS:  # few_pairs_note says it already
        return []
    few = f"{relevant} relevant" if relevant < other else f"{other} not relevant"
    return [f"of the {result.pairs} reviewed pairs only {few}: a refit on fewer than {FEW_CLASS} of one class made the other pairs' "
            f"labels worse in about one random review in five on the development sets (docs/review.md); measure it on other "
            f"reviewed pairs (--test) before labelling with it, or review more pairs nearest the cut (`semrel review`'s default order)"]


def worse_fit_note(result: ProbabilityCalibration) -> list[str]:
    """A refit that agrees less with the very pairs it was fitted on than the labels before it: fitted to likelihood,
    not to kappa, it can, where the reviewed labels and p disagree on what relevance is (answers written for other
    text, labels of another task) or the pairs are few; its labels would then be worse than those the user has."""
    before, after = result.before.kappa, result.after.kappa
    if not (after < before):  # nan (one class only) compares false: nothing to say
        return []
    return [f"the refit agrees less with the {result.pairs} reviewed pairs it was fitted on than the labels before it (kappa "
            f"{after:.3f} against {before:.3f}): keep the labels you have (do not label with this refit); check that a few "
            "reviewed pairs' grades and reference answers say the same of the chunk, or review more pairs"]


def _held_out(rest: Paired, used: Paired, test: Human) -> Paired:
    """The test file's pairs less those the calibration used, refused when none is left."""
    judged = len(rest.pairs)
    rest = rest.without(set(used.pairs))
    if not rest.pairs:  # docs/review.md's simulate, export, calibrate --test on the demo: its 300 pairs are all 266 judged
        raise ValidationError(f"{human_name(test)}: no judged pair is left once the calibration pairs are set aside (all "
                              f"{judged} it holds were reviewed): test on labels of other pairs, or review fewer (a smaller "
                              "--limit) so that some are left to test on")
    return rest


def _fit_thresholds(judgments: JudgmentColumns, human: Human, on: str, grades: int | None, weights: Weights | None,
                    unlisted_as_zero: bool, test: Human | None, test_unlisted_as_zero: bool, seed: int,
                    warn: Callable[[str], None] | None = None) -> Calibration:
    """Thresholds on P, R or F maximizing kappa with the human labels."""
    paired = paired_scores(judgments, human, on, unlisted_as_zero)
    count = grades or max(1, int(paired.grades.max()) if len(paired.grades) else 1)
    unused = sorted(set(range(1, count)) - set(paired.grades.tolist()))
    if grades is None and unused and warn:  # a threshold between two grades nobody gave is placed by nothing
        warn(f"{human_name(human)}: no reviewed pair has grade {', '.join(map(str, unused))} of 0..{count}, so the thresholds "
             f"around {'them' if len(unused) > 1 else 'it'} rest on no label; give grades= with the number of grades used, "
             "or review pairs of those grades")
    result = calibrate(paired.scores, paired.grades, count, weights, on, seed=seed)
    if test is None:
        return result
    rest = _held_out(paired_scores(judgments, test, on, test_unlisted_as_zero), paired, test)
    tell(scale_note(rest.grades, len(result.thresholds), human_name(test)), warn)
    return dataclasses.replace(result, held_out=graded_agreement(rest.scores, rest.grades, result.thresholds,
                                                                 result.agreement.weights, seed=seed))


def write_fitted(result: ProbabilityCalibration | Calibration, output: str | os.PathLike, inputs: list[str | os.PathLike],
                 unlisted_as_zero: bool = False, seed: int = 0, judgments: str | os.PathLike | None = None, groups: bool = False) -> None:
    """What calibrate_labels fitted to `judgments` (the file, where they came from one), written where `semrel label
    --calibration`, [label] calibration in `semrel run` and `review start --thresholds` read it, with its manifest
    (`groups`: the human labels were assessor groups, fitted to by their majority)."""
    params = {"unlisted_as_zero": unlisted_as_zero, "seed": seed, "groups": groups}
    judged = labels.judged_with(judgments) if judgments is not None else None
    # the judgments' manifest too: judged_with is read from it, so `semrel verify` tells an edit of it
    inputs = [name for path in inputs for name in (with_manifests([path]) if path == judgments else [str(path)])]
    if isinstance(result, ProbabilityCalibration):
        write_probability_calibration(result, output, inputs, params, judged)
    else:
        write_calibration(result, output, inputs, result.agreement.n, params, judged)

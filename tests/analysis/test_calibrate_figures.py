"""The figures `semrel calibrate` reports, checked against scikit-learn and hand computation: the thresholds it finds,
the agreements before and after a refit (in-sample and held out), the Platt fit and the moved cut."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import cohen_kappa_score

from helpers import drawn_features
from semrel.analysis.calibrate import (
    CUT_GRID,
    Probabilities,
    best_thresholds,
    calibrate,
    calibrate_labels,
    calibrate_probability,
    fit_probability,
    graded_agreement,
    write_fitted,
)
from semrel.judging import labels
from semrel.judging.labels import logit
from semrel.records import Judgment


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-np.asarray(z, dtype=np.float64)))


def _brute_force_kappa(scores: np.ndarray, human: np.ndarray, count: int) -> float:
    """The best quadratic kappa of any `count` increasing cuts: below all scores, between two, or above all."""
    values = np.unique(scores)
    cuts = [values[0] - 1, *((values[1:] + values[:-1]) / 2), values[-1] + 1]
    best = -np.inf
    for chosen in itertools.combinations(cuts, count):
        predicted = (scores[:, None] >= np.array(chosen)).sum(axis=1)
        kappa = cohen_kappa_score(human, predicted, weights="quadratic", labels=list(range(count + 1)))
        best = max(best, kappa) if np.isfinite(kappa) else best
    return best


def test_graded_thresholds_reach_the_best_kappa_of_any_cuts():
    """On small labelled sets the exhaustive search must reach the best kappa any cuts give, the cut above every score
    (no pair at the top grade) included."""
    checked = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        scores, human = rng.integers(0, 20, 7) / 20, rng.integers(0, 4, 7)
        if len(set(human.tolist())) < 2 or human.max() < 2:
            continue
        count = int(human.max())
        result = calibrate(scores, human, count, resamples=10)
        assert result.agreement.kappa == pytest.approx(_brute_force_kappa(scores, human, count), abs=1e-9), seed
        checked += 1
    assert checked >= 20


def test_coordinate_ascent_never_empties_a_grade_from_below():
    """Past EXHAUSTIVE_COMBINATIONS, where no pair has grade 1, moving the lowest threshold up onto the next (an empty
    grade 1) would fit better; no two thresholds may be equal, or the rule reading them refuses the file."""
    scores = np.linspace(0.0, 1.0, 150)
    human = np.where(scores >= 0.7, 3, np.where(scores >= 0.3, 2, 0))
    found = best_thresholds(scores, human, 3, "quadratic")
    assert all(b > a for a, b in zip(found, found[1:]))
    labels.ThresholdRule("R", tuple(found))  # readable as a rule


def test_a_threshold_is_the_midpoint_of_its_neighbouring_scores_to_six_places():
    """The threshold reported and written is the midpoint of the two scores it splits, rounded to 6 places (0.7023), not
    to 2, which would fall outside the gap and mislabel a reviewed pair."""
    scores = np.array([0.6801, 0.6912, 0.7012, 0.7034, 0.7155, 0.7299])
    human = np.array([0, 0, 0, 1, 1, 1])
    result = calibrate(scores, human, 1, resamples=10)
    assert result.thresholds == [0.7023]
    assert result.agreement.kappa == 1.0


def test_graded_agreement_is_cohens_kappa_with_negative_grades_as_zero():
    """Held-out agreement of thresholds with human grades: quadratic kappa over grades 0..3 (every grade the thresholds
    give, the top one included, even where no pair has it) and grade -1 counted as 0, as scikit-learn computes it."""
    scores = np.array([0.1, 0.35, 0.4, 0.55, 0.6, 0.75, 0.85, 0.9, 0.2, 0.65])
    human = np.array([-1, 1, 0, 2, 1, 3, 3, 2, -1, 2])
    thresholds = [0.3, 0.5, 0.8]
    found = graded_agreement(scores, human, thresholds, "quadratic", resamples=10)
    predicted = (scores[:, None] >= np.array(thresholds)).sum(axis=1)
    assert found.labels == [0, 1, 2, 3]
    assert found.kappa == pytest.approx(cohen_kappa_score(np.maximum(human, 0), predicted, weights="quadratic"), abs=1e-12)
    assert sum(map(sum, found.confusion)) == len(scores)
    lower = graded_agreement(scores * 0.85, np.minimum(human, 2), thresholds, "quadratic", resamples=10)  # no grade 3 either side
    assert lower.labels == [0, 1, 2, 3] and [row[3] for row in lower.confusion] == [0, 0, 0, 0]  # its column is still shown


def test_the_platt_fit_is_scikit_learns_logistic_regression_with_c_10():
    """platt: slope and offset on logit(p) with the slope penalised as LogisticRegression(C=10) penalises its weight."""
    rng = np.random.default_rng(3)
    p = rng.uniform(0.02, 0.98, 60)
    y = (rng.uniform(size=60) < _sigmoid(0.6 * logit(p) - 0.4)).astype(int)
    slope, shift = fit_probability(p, y, "platt")
    model = LogisticRegression(C=10.0, tol=1e-10, max_iter=10_000).fit(logit(p)[:, None], y)
    assert (slope, shift) == pytest.approx((model.coef_[0, 0], model.intercept_[0]), abs=1e-4)


def _reviewed(n: int, seed: int) -> tuple[Probabilities, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, n)
    human = np.where(rng.uniform(size=n) < _sigmoid(logit(p) + 1.5), rng.integers(1, 4, n), 0)
    return Probabilities(p, np.full((n, len(labels.FEATURES)), np.nan), np.zeros(n, dtype=bool)), human


def test_before_and_after_are_the_kappas_of_the_shipped_and_the_refitted_labels():
    """The agreement before is of p >= CUT, after of the refitted p' = sigmoid(logit(p) + shift) >= CUT, both against
    the human labels as relevant / not (grade 2 and 3 are relevant, not other classes), as scikit-learn computes them."""
    reviewed, human = _reviewed(120, 4)
    result = calibrate_probability(reviewed, human, "shift", resamples=10)
    assert result.rule.slope == 1.0 and abs(result.rule.shift) > 0.5 and result.rule.cut == labels.CUT
    relevant = (human > 0).astype(int)
    before = (reviewed.p >= labels.CUT).astype(int)
    after = (_sigmoid(logit(reviewed.p) + result.rule.shift) >= labels.CUT).astype(int)
    assert (before != after).any()
    assert result.before.kappa == pytest.approx(cohen_kappa_score(relevant, before), abs=1e-12)
    assert result.after.kappa == pytest.approx(cohen_kappa_score(relevant, after), abs=1e-12)
    assert result.before.labels == result.after.labels == [0, 1]


def _expected_kappa_cut_by_hand(q: np.ndarray) -> float:
    best, chosen = -np.inf, None
    for cut in CUT_GRID:
        above = q >= cut
        tp, fp, fn, tn = q[above].sum(), (1 - q[above]).sum(), q[~above].sum(), (1 - q[~above]).sum()
        n = len(q)
        chance = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / n**2
        kappa = ((tp + tn) / n - chance) / (1 - chance)
        if kappa > best + 1e-12:
            best, chosen = kappa, float(cut)
    return chosen


def test_the_cut_moves_by_every_judged_pair_not_the_reviewed_ones_alone():
    """With `judged`, the cut is the highest expected kappa over all judged pairs' refitted p; the reviewed pairs are a
    sample of them, and here one of mostly high p, so their own best cut lies elsewhere."""
    reviewed, human = _reviewed(60, 5)
    reviewed = Probabilities(np.sort(reviewed.p)[::-1] * 0.5 + 0.5, reviewed.x, reviewed.with_gold)  # p from 0.5 to 1
    judged_p = np.random.default_rng(9).beta(1.2, 6.0, 400)
    judged = Probabilities(judged_p, np.full((400, len(labels.FEATURES)), np.nan), np.zeros(400, dtype=bool))
    result = calibrate_probability(reviewed, human, "shift", resamples=10, judged=judged)
    refitted = _sigmoid(logit(judged_p) + result.rule.shift)
    assert result.rule.cut == _expected_kappa_cut_by_hand(refitted)
    assert result.rule.cut != _expected_kappa_cut_by_hand(_sigmoid(logit(reviewed.p) + result.rule.shift))


def _judgments_and_labels(tmp_path, n: int = 80, seed: int = 7):
    """Judgments with p and features on n queries (one chunk each), human grades 0..3 for them, and a test file of other
    pairs with grades of their own."""
    rng = np.random.default_rng(seed)
    judged, human, test = [], [], []
    for i in range(n):
        x = drawn_features(rng)
        p = float(rng.uniform(0.02, 0.98))
        features = {**dict(zip(labels.FEATURES, x.tolist())), "with_gold": 1.0}
        judged.append(Judgment(f"q{i}", "c", 0.5, 0.5, 0.5, "bm25", p=p, features=features))
        grade = int(rng.integers(1, 4)) if rng.uniform() < _sigmoid(logit(p) + 1.0) else 0
        (human if i < n // 2 else test).append(f"q{i} 0 c {grade}\n")
    (tmp_path / "human.qrels").write_text("".join(human))
    (tmp_path / "test.qrels").write_text("".join(test))
    return judged, tmp_path / "human.qrels", tmp_path / "test.qrels"


@pytest.mark.parametrize("graded", [False, True])
def test_held_out_agreements_are_of_the_shipped_and_refitted_rules_on_the_test_pairs(tmp_path, graded):
    """`test=`: before is the shipped rule (graded: the three cuts), after the refitted one, both against the test file's
    grades (binary: relevant or not) on the pairs the calibration did not use, as scikit-learn computes them."""
    judged, human, test = _judgments_and_labels(tmp_path)
    result = calibrate_labels(judged, human, fit="shift", graded=graded, test=test)
    rest = judged[40:]
    grades = np.array([int(line.split()[3]) for line in test.read_text().splitlines()])
    target = grades if graded else (grades > 0).astype(int)
    weights = "quadratic" if graded else None
    p = np.array([j.p for j in rest])
    shipped = labels.ProbabilityRule(graded=graded)
    before = (p[:, None] >= np.array(shipped.thresholds)).sum(axis=1)
    after = result.rule.grades(rest)
    assert (before != after).any()
    held_before, held_after = result.held_out
    assert held_before.n == held_after.n == 40
    assert held_before.kappa == pytest.approx(cohen_kappa_score(target, before, weights=weights), abs=1e-12)
    assert held_after.kappa == pytest.approx(cohen_kappa_score(target, after, weights=weights), abs=1e-12)


def test_the_default_fit_is_the_features_where_every_pair_with_p_has_them(tmp_path):
    """Pairs of a query without a null sample hold neither p nor features; the others hold both, so the default refit
    is of every coefficient, not the slope and offset an older judge's p alone allows."""
    judged, human, _ = _judgments_and_labels(tmp_path)
    judged.append(Judgment("lonely", "c", 0.8, 0.8, 0.8, "bm25"))
    notes: list[str] = []
    result = calibrate_labels(judged, human, warn=notes.append)
    assert result.fit == "features" and result.rule.refit is not None
    assert not any("without the features" in n for n in notes)


def test_the_manifest_records_kappa_before_and_after_the_refit(tmp_path):
    """`calibrate -o`'s manifest: kappa_before is the shipped rule's agreement, kappa_after the refitted rule's."""
    reviewed, human = _reviewed(120, 4)
    result = calibrate_probability(reviewed, human, "shift", resamples=10)
    assert result.before.kappa != result.after.kappa
    out = tmp_path / "cal.json"
    write_fitted(result, out, [])
    params = json.loads((tmp_path / "cal.json.manifest.json").read_text())["params"]
    assert (params["kappa_before"], params["kappa_after"]) == (result.before.kappa, result.after.kappa)
    assert params["shift"] == result.rule.shift and params["relevant"] == int((human > 0).sum())

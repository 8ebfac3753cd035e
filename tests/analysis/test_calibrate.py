"""Calibration finds the thresholds that generated labels, and writes what `semrel label` reads."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from helpers import assert_one_error, drawn_features
from semrel.analysis.calibrate import (
    ANCHOR_SD,
    CUT_GRID,
    Probabilities,
    best_thresholds,
    calibrate,
    calibrate_probability,
    expected_calibration_error,
    expected_kappa_cut,
    expected_kappas,
    few_of_a_class_note,
    few_pairs_note,
    fit_features,
    fit_probability,
    graded_agreement,
    worse_fit_note,
)
from semrel.errors import ValidationError
from semrel.judging import labels
from semrel.judging.labels import logit, sigmoid


def test_binary_threshold_is_found_exactly():
    scores = np.random.default_rng(0).uniform(size=400)
    human = (scores >= 0.6).astype(int)
    result = calibrate(scores, human, 1)
    below, above = scores[scores < 0.6].max(), scores[scores >= 0.6].min()
    assert below < result.thresholds[0] <= above
    assert result.agreement.kappa == pytest.approx(1.0)
    assert result.agreement.confusion[0][1] == result.agreement.confusion[1][0] == 0


def test_noisy_binary_threshold_is_the_exhaustive_best():
    rng = np.random.default_rng(1)
    scores = rng.uniform(size=300)
    human = np.where(rng.uniform(size=300) < 0.15, 1 - (scores >= 0.4), scores >= 0.4).astype(int)
    (found,) = best_thresholds(scores, human, 1, "none")
    best_by_brute_force = max(cohen_kappa_score(human, (scores >= t).astype(int)) for t in np.unique(scores))
    assert cohen_kappa_score(human, (scores >= found).astype(int)) == pytest.approx(best_by_brute_force)
    assert abs(found - 0.4) < 0.05


def test_graded_thresholds_are_found_under_noise():
    rng = np.random.default_rng(2)
    scores = rng.uniform(size=3000)
    human = (scores[:, None] >= np.array([0.3, 0.5, 0.8])).sum(axis=1)
    human = np.where(rng.uniform(size=3000) < 0.1, rng.integers(0, 4, 3000), human)
    result = calibrate(scores, human, 3)
    assert result.agreement.weights == "quadratic"
    assert result.thresholds == pytest.approx([0.3, 0.5, 0.8], abs=0.03)
    predicted = (scores[:, None] >= np.array(result.thresholds)).sum(axis=1)
    assert result.agreement.kappa == pytest.approx(cohen_kappa_score(human, predicted, weights="quadratic"), abs=1e-9)


def test_fewer_thresholds_than_grades_read_the_grades_above_as_the_top_one():
    """One threshold against grades 0-3 is binary relevance, as the probability refit reads it: grades 2 and 3 labelled 1
    counted as disagreements (kappa 0.62 where binary agreement is 0.98), and the cut was chosen to match grade 1 alone."""
    rng = np.random.default_rng(3)
    human = np.repeat([0, 1, 2, 3], [600, 100, 150, 150])
    scores = human * 0.1 + rng.normal(0, 0.08, len(human))
    result = calibrate(scores, human, 1)
    relevant = (human > 0).astype(int)
    best = max(cohen_kappa_score(relevant, (scores >= t).astype(int)) for t in np.unique(scores))
    assert result.agreement.kappa == pytest.approx(best) == pytest.approx(cohen_kappa_score(relevant, scores >= result.thresholds[0]))
    assert result.agreement.labels == [0, 1] and np.sum(result.agreement.confusion) == len(human)
    two = calibrate(scores, human, 2)  # grades 2 and 3 both reach the second threshold
    predicted = (scores[:, None] >= np.array(two.thresholds)).sum(axis=1)
    assert two.agreement.kappa == pytest.approx(cohen_kappa_score(np.minimum(human, 2), predicted, weights="quadratic"), abs=1e-9)
    held_out = graded_agreement(scores, human, result.thresholds, "none")  # --test's figure, on the same scale
    assert held_out.kappa == pytest.approx(result.agreement.kappa)


def test_thresholds_need_one_distinct_score_fewer_than_their_number():
    """N thresholds sit between N - 1 distinct scores at least (the cuts below the lowest and above the highest count):
    with fewer there is no increasing set of N to choose, and the search took the maximum of no combination."""
    scores, human = np.full(6, 0.5), np.array([0, 1, 2, 3, 0, 1])
    assert calibrate(scores, human, 2).thresholds == [0.5, 1.5]  # everything reaches the first, nothing the second
    with pytest.raises(ValidationError, match=r"^3 thresholds need at least 2 distinct scores; found 1$"):
        calibrate(scores, human, 3)


def test_calibrate_command_writes_thresholds_and_manifest(tmp_path, write, cli):
    rng = np.random.default_rng(4)
    scores = rng.uniform(size=60)
    judgments = write("j.jsonl", "".join(
        json.dumps({"query_id": f"q{i}", "chunk_id": "c", "P": 0.0, "R": float(s), "F": 0.0, "source": ""}) + "\n"
        for i, s in enumerate(scores)))
    human = write("human.qrels", "".join(f"q{i} 0 c {int(s >= 0.55)}\n" for i, s in enumerate(scores)))
    out = tmp_path / "thresholds.json"
    result = cli("calibrate", judgments, human, "-o", str(out), "--format", "json")
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text())
    assert written["on"] == "R" and len(written["thresholds"]) == 1
    assert abs(written["thresholds"][0] - 0.55) < 0.05
    assert json.loads(result.stdout)["kappa"] == pytest.approx(1.0)
    manifest = json.loads((tmp_path / "thresholds.json.manifest.json").read_text())
    assert manifest["params"]["on"] == "R" and manifest["rows"] == 60


def test_the_judgments_manifest_is_among_the_calibrations_inputs(tmp_path, write, cli):
    """calibrate records the judge's settings from the judgments' manifest (judged_with, which label checks): an edit of
    that manifest went unseen by `semrel verify`, as it had for label's own."""
    scores = np.random.default_rng(4).uniform(size=60)
    judgments = write("j.jsonl", "".join(
        json.dumps({"query_id": f"q{i}", "chunk_id": "c", "P": 0.0, "R": float(s), "F": 0.0, "source": ""}) + "\n"
        for i, s in enumerate(scores)))
    manifest = write("j.jsonl.manifest.json", json.dumps({"params": {"model": "all-MiniLM-L6-v2", "layer": 6}}))
    human = write("human.qrels", "".join(f"q{i} 0 c {int(s >= 0.55)}\n" for i, s in enumerate(scores)))
    assert cli("calibrate", judgments, human, "-o", str(tmp_path / "cal.json")).exit_code == 0
    inputs = json.loads((tmp_path / "cal.json.manifest.json").read_text())["inputs"]
    assert [i["path"] for i in inputs] == [str(judgments), str(manifest), str(human)]
    write("j.jsonl.manifest.json", json.dumps({"params": {"model": "roberta-large", "layer": 17}}))
    result = cli("verify", tmp_path / "cal.json")
    assert result.exit_code == 1 and f"input changed: {manifest}: " in result.stdout


def test_grades_nobody_gave_are_warned_about_not_silently_fitted(write, cli):
    """Reviewed grades 0 and 3 fitted three thresholds on R, two of them between grades no pair has."""
    scores = np.random.default_rng(4).uniform(size=60)
    judgments = write("j.jsonl", "".join(
        json.dumps({"query_id": f"q{i}", "chunk_id": "c", "P": 0.0, "R": float(s), "F": 0.0, "source": ""}) + "\n"
        for i, s in enumerate(scores)))
    human = write("human.qrels", "".join(f"q{i} 0 c {3 * int(s >= 0.55)}\n" for i, s in enumerate(scores)))
    result = cli("calibrate", judgments, human, "--on", "R", "--format", "json")
    assert result.exit_code == 0 and len(json.loads(result.stdout)["thresholds"]) == 3, result.output
    assert "human.qrels: no reviewed pair has grade 1, 2 of 0..3, so the thresholds around them rest on no label" in result.stderr
    assert "give --grades with the number of grades used" in result.stderr and result.stderr.count("\n") == 1
    binary = cli("calibrate", judgments, human, "--on", "R", "--grades", "1", "--format", "json")  # as told: one threshold, no warning
    assert binary.exit_code == 0 and binary.stderr == "" and len(json.loads(binary.stdout)["thresholds"]) == 1


def test_calibrate_refuses_files_that_share_no_pair(write, cli):
    """The line named neither file and said to check the ids, for an empty export too."""
    judgments = write("j.jsonl", json.dumps({"query_id": "a", "chunk_id": "c", "P": 0, "R": 0.5, "F": 0, "p": 0.5}) + "\n")
    human = write("h.qrels", "b 0 c 1\nb 0 d 0\n")
    for args in ([], ["--on", "R"]):
        result = cli("calibrate", judgments, human, *args)
        assert result.exit_code == 1 and result.stderr == (
            f"semrel: error: {human}: none of its 2 labelled pairs is judged (it labels e.g. ('b', 'c'), the judgments hold "
            "e.g. ('a', 'c')); give the human labels of these judgments' pairs\n")
    result = cli("calibrate", judgments, write("empty.qrels", ""))
    assert result.exit_code == 1 and "empty.qrels: no human labels in the file; export the reviewed pairs with `semrel review " \
        "export --only-reviewed`" in result.stderr


def test_expected_calibration_error_by_hand():
    # bin [0.1, 0.2): p 0.1, 0.1 against 1 of 2 relevant (gap 0.4); bin [0.9, 1]: p 0.9, 1.0 against 2 of 2 (gap 0.05)
    relevant, p = np.array([1, 0, 1, 1]), np.array([0.1, 0.1, 0.9, 1.0])
    assert expected_calibration_error(relevant, p) == pytest.approx((2 * 0.4 + 2 * 0.05) / 4)
    assert expected_calibration_error(np.array([0, 1]), np.array([0.0, 1.0])) == 0.0



def test_expected_calibration_error_counts_p_of_one_in_the_last_bin():
    """The last bin is closed: p = 1.0 with a non-relevant label is the worst miscalibration, not a pair left out."""
    # bin [0.9, 1]: p 0.95 and 1.0 (mean 0.975) against 1 of 2 relevant: gap 0.475 over both pairs
    assert expected_calibration_error(np.array([1, 0]), np.array([0.95, 1.0])) == pytest.approx(0.475)
    assert expected_calibration_error(np.array([0]), np.array([1.0])) == pytest.approx(1.0)

def _reviewed(n: int, slope: float, shift: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n pairs whose p the reviewers see as sigmoid(slope * logit(p) + shift)."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, n)
    return p, (rng.uniform(size=n) < sigmoid(slope * logit(p) + shift)).astype(int)


def test_anchored_fit_is_the_penalised_maximum_likelihood():
    """At the anchored fit both derivatives of log-likelihood minus the prior on slope - 1 vanish."""
    p, y = _reviewed(400, 1.8, -0.6, seed=3)
    slope, shift = fit_probability(p, y, "anchored")
    residual = sigmoid(slope * logit(p) + shift) - y
    assert np.sum(residual * logit(p)) + (slope - 1) / ANCHOR_SD**2 == pytest.approx(0, abs=1e-3)
    assert np.sum(residual) == pytest.approx(0, abs=1e-3)



def test_anchored_fit_has_the_documented_prior_sd_of_a_quarter_on_the_slope():
    """The anchored fit is the maximum of the likelihood less (slope - 1)^2 / (2 * 0.25^2), found here independently."""
    from scipy.optimize import minimize

    p, y = _reviewed(60, 2.0, -0.4, seed=9)
    z = logit(p)

    def loss(v):
        return np.sum(np.logaddexp(0, v[0] * z + v[1]) - y * (v[0] * z + v[1])) + (v[0] - 1) ** 2 / (2 * 0.25**2)

    expected = minimize(loss, np.array([1.0, 0.0]), method="Nelder-Mead", options={"xatol": 1e-8, "fatol": 1e-10}).x
    assert fit_probability(p, y, "anchored") == pytest.approx(tuple(expected), abs=1e-3)

def test_anchored_fit_keeps_the_spread_on_little_evidence_and_follows_much():
    few, many = _reviewed(40, 2.0, 0.0, seed=1), _reviewed(4000, 2.0, 0.0, seed=1)
    anchored_few, platt_few = fit_probability(*few, "anchored")[0], fit_probability(*few, "platt")[0]
    assert abs(anchored_few - 1) < abs(platt_few - 1)  # 40 pairs hardly move the slope off 1
    assert 1.7 < fit_probability(*many, "anchored")[0] < fit_probability(*many, "platt")[0] < 2.3  # 4,000 pairs do
    p, y = _reviewed(300, 1.0, 1.5, seed=5)  # reviewers differ by an offset only: anchored is the shift, nearly
    (slope, shift), (_, shift_only) = fit_probability(p, y, "anchored"), fit_probability(p, y, "shift")
    assert abs(slope - 1) < 0.15 and abs(shift - shift_only) < 0.15


def test_expected_kappa_is_kappa_of_the_expected_confusion_matrix():
    q = np.random.default_rng(2).beta(0.5, 3.0, 500)
    for cut in (0.1, 0.35, 0.6):
        s = q >= cut
        tp, fp, fn, tn = q[s].sum(), (1 - q[s]).sum(), q[~s].sum(), (1 - q[~s]).sum()
        observed, chance = (tp + tn) / 500, ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / 500**2
        assert expected_kappas(q, np.array([cut]))[0] == pytest.approx((observed - chance) / (1 - chance), abs=1e-12)
    certain = np.array([0.0] * 90 + [1.0] * 10)
    assert expected_kappas(certain, np.array([0.5]))[0] == pytest.approx(1.0)



def test_a_pair_whose_q_equals_the_cut_is_labelled_relevant_in_the_expected_kappa():
    """Labels are q >= cut, so at cut 0.5 the pairs of q 0.5 count as labelled 1; by hand: q 0.1, 0.5, 0.5, 0.6 give
    tp 1.6, fp 1.4, fn 0.1, tn 0.9, observed 0.625, chance (3 * 1.7 + 1 * 2.3) / 16 = 0.4625."""
    q = np.array([0.1, 0.5, 0.5, 0.6])
    assert expected_kappas(q, np.array([0.5]))[0] == pytest.approx((0.625 - 0.4625) / (1 - 0.4625), abs=1e-12)


def test_the_expected_kappa_cut_is_the_lowest_of_tied_cuts():
    """q of 0 and 1 alone gives kappa 1 at every cut of the grid: the lowest, 0.05, is taken."""
    assert expected_kappa_cut(np.array([0.0] * 90 + [1.0] * 10)) == 0.05

def test_the_expected_kappa_cut_follows_the_share_of_relevant_pairs_and_pays_off():
    """Labels drawn from calibrated q: the cut chosen on q alone is low where few pairs are likely relevant (7%) and
    high where most are (66%), and over 100 draws of labels its kappa beats a cut fixed at 0.35 on both."""
    rng = np.random.default_rng(4)
    for q, low, high in ((rng.beta(0.3, 4.0, 3000), 0.15, 0.30), (rng.beta(2.0, 1.0, 3000), 0.50, 0.70)):
        cut = expected_kappa_cut(q)
        assert cut in CUT_GRID and low < cut < high
        draws = rng.uniform(size=(100, len(q))) < q
        assert np.mean([cohen_kappa_score(y, q >= cut) - cohen_kappa_score(y, q >= 0.35) for y in draws]) > 0.03


def _featured(n: int, delta: np.ndarray, seed: int) -> tuple[Probabilities, np.ndarray]:
    """n pairs with features inside the shipped range, p from the shipped model, and labels drawn from that model
    moved by `delta` (intercept first): reviewers whose idea of relevance weighs the features differently."""
    rng = np.random.default_rng(seed)
    x = drawn_features(rng, n)
    pairs = Probabilities(labels.probability(x, True), x, np.ones(n, dtype=bool))
    return pairs, (rng.uniform(size=n) < labels.probability(x, True, tuple(delta))).astype(int)


def test_the_features_refit_is_the_penalised_maximum_likelihood_and_finds_a_planted_move():
    delta = np.zeros(len(labels.FEATURES) + 2)
    delta[0], delta[1 + labels.FEATURES.index("relR_idf")] = 1.0, -2.0  # more relevant overall, less reliance on relR_idf
    pairs, y = _featured(6000, delta, seed=7)
    found = np.array(fit_features(pairs, y))
    design = labels.designs(pairs.x, True)
    z = labels.logits(pairs.x, True, tuple(found))
    assert np.abs(design.T @ (sigmoid(z) - y) + found / 1.0**2).max() < 1e-2  # the penalised likelihood's gradient vanishes
    assert abs(found[0] - 1.0) < 0.6 and abs(found[1 + labels.FEATURES.index("relR_idf")] + 2.0) < 0.6
    with pytest.raises(ValidationError, match="all non-relevant"):
        fit_features(pairs, np.zeros(6000))


def test_thresholds_on_reviewed_pairs_of_one_class_are_refused_as_the_refit_is(tmp_path, write, cli):
    """Two reviewed pairs, both grade 0: any threshold above both fits them perfectly and says nothing;
    `--on R` used to write one (under which both were relevant) and exit 0."""
    judgments = write("j.jsonl", "".join(
        json.dumps({"query_id": f"q{i}", "chunk_id": "c", "P": r, "R": r, "F": r, "p": r, "source": ""}) + "\n"
        for i, r in enumerate([0.2, 0.5, 0.7, 0.9])))
    human = write("oneclass.qrels", "q0 0 c 0\nq2 0 c 0\n")
    out = tmp_path / "c2.json"
    line = assert_one_error(cli("calibrate", judgments, human, "--on", "R", "-o", str(out)),
                            "the 2 reviewed pairs are all non-relevant: a fit of thresholds needs both")
    assert not out.exists()
    refit = assert_one_error(cli("calibrate", judgments, human, "--fit", "anchored", "-o", str(out)))
    assert refit.replace("a refit", "a fit of thresholds") == line  # one check, one wording
    with pytest.raises(ValidationError, match="all relevant: a fit of thresholds needs both"):
        calibrate(np.array([0.1, 0.4]), np.array([1, 1]), 1)
    # a golden set or gold qrels as the reviewed labels list only relevant pairs: the option that counts the rest is named
    two_each = write("j2.jsonl", "".join(
        json.dumps({"query_id": f"q{i}", "chunk_id": c, "P": r, "R": r, "F": r, "source": ""}) + "\n"
        for i in range(3) for c, r in (("c", 0.8 - 0.1 * i), ("d", 0.3 + 0.1 * i))))
    positives = write("gold.qrels", "q0 0 c 1\nq1 0 c 1\nq2 0 c 1\n")
    assert assert_one_error(cli("calibrate", two_each, positives, "--on", "R", "-o", str(out))).endswith(
        "count the judged pairs they leave out as non-relevant with --unlisted-as-zero")
    assert cli("calibrate", two_each, positives, "--unlisted-as-zero", "--on", "R", "-o", str(out)).exit_code == 0
    with pytest.raises(ValidationError, match="all grade 2: a fit of thresholds needs two grades at least"):
        calibrate(np.array([0.1, 0.4, 0.6]), np.array([2, 2, 2]), 3)
    assert calibrate(np.array([0.1, 0.4, 0.6]), np.array([1, 2, 2]), 2).thresholds  # two grades, none 0: a fit


def test_judgments_without_p_refitted_on_p_get_one_error_not_a_warning_that_says_otherwise(write, cli):
    """It warned that the judgments held p without its features, then said they held no p (both of an 'older
    semrel', where --null-sample 0 had written them)."""
    judgments = write("j.jsonl", "".join(json.dumps({"query_id": "q", "chunk_id": c, "P": r, "R": r, "F": r, "source": ""}) + "\n"
                                         for c, r in (("a", 0.9), ("b", 0.2))))
    line = assert_one_error(cli("calibrate", judgments, write("h.qrels", "q 0 a 1\nq 0 b 0\n"), "--on", "p"))
    assert line == ("semrel: error: 2 of 2 judgments hold no probability p (judged with a null sample of 0 chunks, against a corpus "
                    "with no chunk outside each query's pool, or by a semrel judge older than p): judge again with a null sample "
                    "(the default), against a corpus larger than the pool, or calibrate thresholds on a component with --on R")



def test_a_probability_refit_counts_negative_human_grades_as_zero():
    """Grade -1 (a qrels' "unjudgeable") is non-relevant: the counts and both agreements equal those of the same
    labels with -1 written as 0, and `relevant` counts the pairs of grade above 0 alone."""
    rng = np.random.default_rng(6)
    p = rng.uniform(0.02, 0.98, 80)
    human = np.where(rng.uniform(size=80) < p, rng.integers(1, 4, 80), rng.choice([-1, 0], 80))
    reviewed = Probabilities(p, np.full((80, len(labels.FEATURES)), np.nan), np.zeros(80, dtype=bool))
    result = calibrate_probability(reviewed, human, "shift", graded=True, resamples=20)
    zeroed = calibrate_probability(reviewed, np.maximum(human, 0), "shift", graded=True, resamples=20)
    assert result.relevant == int((human > 0).sum()) < 80
    assert (result.before, result.after, result.rule) == (zeroed.before, zeroed.after, zeroed.rule)
    assert result.before.labels == [0, 1, 2, 3]


def test_thresholds_on_labels_of_grade_minus_one_and_zero_are_refused_as_one_class():
    """-1 counts as 0, so these reviewed pairs are all non-relevant: refused by the one-class check itself."""
    with pytest.raises(ValidationError, match="all non-relevant"):
        calibrate(np.array([0.1, 0.4, 0.6, 0.9]), np.array([-1, 0, -1, 0]), 1)


def test_coordinate_ascent_keeps_the_thresholds_strictly_increasing():
    """Past EXHAUSTIVE_COMBINATIONS the search refines a grid one threshold at a time, each between its neighbours:
    where no pair has grade 2, a threshold equal to the one below (an empty grade 2) would fit better, but no two
    thresholds may be equal; the lowest still splits grades 0 and 1 as they were generated."""
    scores = np.linspace(0.0, 1.0, 150)
    human = np.where(scores >= 0.7, 3, np.where(scores >= 0.3, 1, 0))
    found = best_thresholds(scores, human, 3, "quadratic")
    assert all(b > a for a, b in zip(found, found[1:]))
    assert scores[human == 0].max() < found[0] <= scores[human == 1].min()


def test_a_refit_that_agrees_less_with_its_own_pairs_is_said_and_one_that_agrees_more_is_not():
    """The refit maximizes likelihood, not kappa: where the reviewed labels follow p only loosely, its labels can agree less
    with the very pairs it was fitted on (here kappa 0.401 before, 0.228 after), which calibrate showed in its table
    without a word, and the advice to label with the refit would make the labels worse."""
    rng = np.random.default_rng(1)
    p = rng.uniform(0.02, 0.98, 60)
    human = (rng.uniform(size=60) < 0.5 + 0.2 * (p > 0.38)).astype(int)
    reviewed = Probabilities(p, np.full((60, len(labels.FEATURES)), np.nan), np.zeros(60, dtype=bool))
    worse = calibrate_probability(reviewed, human, "shift", resamples=20)
    assert (round(worse.before.kappa, 3), round(worse.after.kappa, 3)) == (0.401, 0.228)
    assert worse_fit_note(worse) == ["the refit agrees less with the 60 reviewed pairs it was fitted on than the labels before it "
                                     "(kappa 0.228 against 0.401): keep the labels you have (do not label with this refit); check "
                                     "that a few reviewed pairs' grades and reference answers say the same of the chunk, or review "
                                     "more pairs"]
    better = calibrate_probability(reviewed, (p > 0.6).astype(int), "shift", resamples=20)
    assert better.after.kappa > better.before.kappa and worse_fit_note(better) == []


def test_a_refit_on_fewer_pairs_than_were_measured_is_said(write, cli):
    """A refit on 10 reviewed pairs, 2 relevant, moved every coefficient of p with nothing said."""
    judgments = write("j.jsonl", "".join(json.dumps({"query_id": f"q{i}", "chunk_id": "c", "P": r, "R": r, "F": r, "source": "bm25",
                                                     "p": r}) + "\n" for i, r in enumerate(np.linspace(0.05, 0.95, 19))))
    human = write("h.qrels", "".join(f"q{i} 0 c {int(i >= 15)}\n" for i in range(19)))
    result = cli("calibrate", judgments, human, "--fit", "anchored")
    assert result.exit_code == 0, result.output
    assert [line for line in result.stderr.splitlines() if "fitted on" in line] == [
        "semrel: warning: fitted on 19 reviewed pairs (4 relevant): refits were measured from 20 pairs up (docs/review.md, the "
        "learning curve), and on fewer one follows a handful of labels; review 1 more before labelling with it"]
    reviewed = Probabilities(np.linspace(0.05, 0.95, 20), np.full((20, len(labels.FEATURES)), np.nan), np.zeros(20, dtype=bool))
    assert few_pairs_note(calibrate_probability(reviewed, (np.arange(20) >= 15).astype(int), "shift", resamples=20)) == []


def test_a_refit_on_a_handful_of_one_class_is_said():
    """Refits on random reviews with under 5 relevant pairs lost up to 0.290 kappa on the other pairs with nothing said
    (bench/labels.py): fewer than FEW_CLASS pairs of either class is warned of, 5 of each is not, and under FEW_PAIRS
    pairs few_pairs_note alone speaks."""
    def refit(human: np.ndarray):
        p = np.linspace(0.02, 0.98, len(human))
        reviewed = Probabilities(p, np.full((len(p), len(labels.FEATURES)), np.nan), np.zeros(len(p), dtype=bool))
        return calibrate_probability(reviewed, human, "shift", resamples=20)

    assert few_of_a_class_note(refit((np.arange(60) >= 56).astype(int))) == [
        "of the 60 reviewed pairs only 4 relevant: a refit on fewer than 5 of one class made the other pairs' labels worse in "
        "about one random review in five on the development sets (docs/review.md); measure it on other reviewed pairs "
        "(--test) before labelling with it, or review more pairs nearest the cut (`semrel review`'s default order)"]
    assert few_of_a_class_note(refit((np.arange(60) >= 4).astype(int)))[0].startswith("of the 60 reviewed pairs only 4 not relevant:")
    assert few_of_a_class_note(refit((np.arange(60) >= 55).astype(int))) == []
    assert few_of_a_class_note(refit((np.arange(19) >= 17).astype(int))) == [] and few_pairs_note(refit((np.arange(19) >= 17).astype(int)))

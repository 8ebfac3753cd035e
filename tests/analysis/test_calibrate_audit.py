"""`semrel calibrate` on the inputs an audit found mishandled: judgments of which some hold no p, a pair the human
file grades twice, `-o -`, and more thresholds asked for than the human labels have grades."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.optimize import brentq
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import cohen_kappa_score

import semrel
from helpers import assert_one_error, drawn_features, run
from semrel.analysis.calibrate import (
    CUT_GRID,
    Probabilities,
    calibrate,
    calibrate_labels,
    calibrate_probability,
    expected_kappa_cut,
    expected_kappas,
    fit_features,
    fit_probability,
    paired_scores,
    write_fitted,
)
from semrel.errors import UsageError, ValidationError
from semrel.formats import read_qrels
from semrel.formats.judgments import JudgmentColumns
from semrel.judging import labels
from semrel.records import Judgment, Qrels


def _line(query: str, r: float, p: float | None = None) -> str:
    return json.dumps({"query_id": query, "chunk_id": "c", "P": r, "R": r, "F": r, "source": "bm25",
                       **({"p": p} if p is not None else {})}) + "\n"


def test_a_refit_uses_the_pairs_that_hold_p_and_says_how_many_do_not(write, tmp_path):
    """Three queries without a null sample (no p) used to turn the whole calibration into thresholds on R."""
    rng = np.random.default_rng(6)
    p = rng.uniform(0.02, 0.98, 40)
    truth = (rng.uniform(size=40) < p).astype(int)
    judgments = write("j.jsonl", "".join(_line(f"q{i}", 0.5, float(v)) for i, v in enumerate(p))
                      + "".join(_line(f"n{i}", r) for i, r in enumerate([0.9, 0.75, 0.3])))
    human = write("h.qrels", "".join(f"q{i} 0 c {t}\n" for i, t in enumerate(truth)) + "n0 0 c 1\nn1 0 c 0\nn2 0 c 0\n")
    result = run("calibrate", judgments, human, "--fit", "anchored", "-o", tmp_path / "cal.json")
    assert result.exit_code == 0, result.output
    (warning,) = result.stderr.splitlines()
    assert "3 of 43 judgments hold no probability p" in warning and "no null sample" in warning
    assert "the refit and its cut use the other 40 (3 reviewed pairs left out)" in warning
    written = json.loads((tmp_path / "cal.json").read_text())
    assert written["rule"] == "probability" and written["calibration"]["pairs"] == 40
    assert "over the 40 judged pairs" in written["calibration"]["cut_from"]
    result = run("label", judgments, "--calibration", tmp_path / "cal.json", "-o", tmp_path / "q.txt")
    assert result.exit_code == 0, result.output
    got = read_qrels(tmp_path / "q.txt").to_dict()
    assert [got[f"n{i}"]["c"] for i in range(3)] == [1, 1, 0]  # R >= 0.70
    assert [got[f"q{i}"]["c"] for i in range(40)] == (p >= written["thresholds"][0]).astype(int).tolist()


def test_a_pair_the_human_file_grades_twice_is_refused_as_eval_refuses_it(write, tmp_path):
    """The last of two conflicting grades used to win, silently."""
    judgments = write("j.jsonl", "".join(_line(f"q{i}", r, r) for i, r in enumerate([0.2, 0.5, 0.7, 0.9])))
    good = write("good.qrels", "q0 0 c 0\nq3 0 c 1\n")
    twice = write("twice.qrels", "q0 0 c 0\nq1 0 c 1\nq0 0 c 1\nq2 0 c 0\n")
    expected = f"{twice}:3: duplicate judgment for query 'q0' and doc 'c'"
    for args in (["--on", "R"], ["--fit", "anchored"]):
        assert_one_error(run("calibrate", judgments, twice, *args, "-o", tmp_path / "cal.json"), expected)
        assert_one_error(run("calibrate", judgments, good, "--test", twice, *args, "-o", tmp_path / "cal.json"), expected)
    assert not (tmp_path / "cal.json").exists()


def test_the_calibration_is_not_written_to_stdout(write):
    """It went there with the summary, which made neither readable."""
    judgments = write("j.jsonl", "".join(_line(f"q{i}", r, r) for i, r in enumerate([0.2, 0.5, 0.7, 0.9])))
    human = write("h.qrels", "q0 0 c 0\nq3 0 c 1\n")
    result = run("calibrate", judgments, human, "-o", "-")
    assert_one_error(result, "give -o a file name, not '-'", code=UsageError.exit_code)
    assert result.stdout == ""


def test_more_thresholds_than_the_human_labels_have_grades_are_refused(write, tmp_path):
    """--grades 3 on binary labels used to write thresholds for grades 2 and 3 above every score."""
    judgments = write("j.jsonl", "".join(_line(f"q{i}", r) for i, r in enumerate([0.2, 0.5, 0.7, 0.9])))
    human = write("h.qrels", "q0 0 c 0\nq1 0 c 0\nq2 0 c 1\nq3 0 c 1\n")
    said = "3 thresholds asked for, but the human labels' top grade is 1: ask for 1 at most ({}), one per grade they use"
    assert assert_one_error(run("calibrate", judgments, human, "--on", "R", "--grades", "3", "-o", tmp_path / "cal.json")) == \
        "semrel: error: " + said.format("--grades")
    assert not (tmp_path / "cal.json").exists()
    with pytest.raises(ValidationError) as refused:  # semrel.calibrate names its parameter
        semrel.calibrate(judgments, human, on="R", grades=3)
    assert str(refused.value) == said.format("grades=")
    with pytest.raises(ValidationError, match="top grade is 2: ask for 2 at most"):
        calibrate(np.array([0.1, 0.4, 0.6, 0.9]), np.array([0, 1, 2, 2]), 3)
    assert len(calibrate(np.array([0.1, 0.4, 0.6, 0.9]), np.array([0, 1, 2, 2]), 2).thresholds) == 2


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-np.asarray(z, dtype=np.float64)))


def _by_hand(models: labels.Models, x: np.ndarray, gold: np.ndarray, delta: np.ndarray | None = None) -> np.ndarray:
    """logit(p) of each row under its model (moved by delta), from the published formula with the features held."""
    out = []
    for row, g in zip(x, gold):
        model = models[0] if g else models[1]
        held = np.clip(row, model.lower, model.upper)
        d = np.zeros(len(model.weights) + 1) if delta is None else delta
        pk, lk = labels.FEATURES.index("P_max"), labels.FEATURES.index("lenratio")
        out.append(model.intercept + d[0] + np.append(held, held[pk] * held[lk]) @ (np.array(model.weights) + d[1:]))
    return np.array(out)


def test_a_refit_on_other_models_moves_those_models_coefficients():
    """bench/labels.py refits p on coefficients it fitted itself (`models=`): the refit, the moved cut and the agreements
    must all start from those, not the shipped ones, for the pairs with gold and those without alike."""
    rng = np.random.default_rng(11)
    n = 400
    x = drawn_features(rng, n)
    gold = rng.uniform(size=n) < 0.5
    gold[:40], x[:40, labels.FEATURES.index("lenratio")] = False, 3.7  # inside WITH_GOLD's range, past WITHOUT_GOLD's
    move = np.zeros(len(labels.FEATURES) + 2)
    move[0], move[1 + labels.FEATURES.index("own_idf")] = -1.5, 2.0
    models = (labels.WITH_GOLD.plus(move), labels.WITHOUT_GOLD.plus(-move))
    p = _sigmoid(_by_hand(models, x, gold))
    assert labels.probability(x, gold, models=models) == pytest.approx(p, rel=0, abs=1e-12)
    y = (rng.uniform(size=n) < _sigmoid(_by_hand(models, x, gold) + 1.0)).astype(int)  # reviewers: one logit unit more
    pairs = Probabilities(p, x, gold)
    found = np.array(fit_features(pairs, y, models=models))
    z = _by_hand(models, x, gold, found)
    design = labels.designs(x, gold, models)
    assert np.abs(design.T @ (_sigmoid(z) - y) + found).max() < 1e-3  # the penalised likelihood's gradient vanishes there
    result = calibrate_probability(pairs, y, "features", resamples=10, judged=pairs, models=models)
    assert result.rule.refit == pytest.approx(tuple(found), rel=0, abs=1e-9)
    q = _sigmoid(_by_hand(models, x, gold, np.array(result.rule.refit)))
    assert result.rule.cut == float(CUT_GRID[int(np.argmax(expected_kappas(q)))])
    assert result.after.kappa == pytest.approx(cohen_kappa_score(y, (q >= result.rule.cut).astype(int)), abs=1e-12)
    assert result.before.kappa == pytest.approx(cohen_kappa_score(y, (p >= labels.CUT).astype(int)), abs=1e-12)


def test_the_shift_fit_is_the_maximum_likelihood_offset_even_far_from_zero():
    """fit="shift": the offset g where the refitted p's sum equals the relevant pairs' count (the likelihood's score
    equation), solved here by bisection; reviewers who call 90% of pairs of p near 0.05 relevant need g near 5."""
    rng = np.random.default_rng(2)
    p = rng.uniform(0.03, 0.07, 200)
    y = (np.arange(200) % 10 != 0).astype(int)  # 180 of 200 relevant
    z = labels.logit(p)
    by_hand = brentq(lambda g: _sigmoid(z + g).sum() - y.sum(), -20, 20, xtol=1e-12)
    assert 4.5 < by_hand < 6
    assert fit_probability(p, y, "shift") == pytest.approx((1.0, by_hand), rel=0, abs=1e-5)


def test_the_platt_fit_follows_reviewers_much_sharper_than_p():
    """Reviewers who split pairs of p between 0.3 and 0.5 almost by p itself: the slope on logit(p) is several times 1
    (about 8 here), and the fit follows it as scikit-learn's LogisticRegression(C=10) does, not stopping at a bound."""
    rng = np.random.default_rng(8)
    p = rng.uniform(0.3, 0.5, 400)
    y = (rng.uniform(size=400) < _sigmoid(8.0 * (labels.logit(p) - labels.logit(0.4)))).astype(int)
    slope, shift = fit_probability(p, y, "platt")
    model = LogisticRegression(C=10.0, tol=1e-10, max_iter=10_000).fit(labels.logit(p)[:, None], y)
    assert model.coef_[0, 0] > 4
    assert (slope, shift) == pytest.approx((model.coef_[0, 0], model.intercept_[0]), abs=1e-3)


def test_fit_probability_refuses_the_features_fit():
    """fit="features" moves every coefficient (fit_features); fit_probability would have fitted a Platt slope under its name."""
    with pytest.raises(ValidationError, match="fit='features': choose one of anchored, shift, platt"):
        fit_probability(np.array([0.2, 0.8]), np.array([0, 1]), "features")


def test_the_moved_cut_is_chosen_among_every_hundredth_as_the_shipped_one_was():
    """The shipped cut 0.38 was chosen on a grid of hundredths; a calibration's cut is too (0.05 to 0.95), so on p spread
    evenly it lands where the expected kappa peaks, off any coarser grid."""
    assert CUT_GRID.tolist() == [k / 100 for k in range(5, 96)]
    q = np.linspace(0.0, 0.66, 2000)  # q spread evenly over 0 to 0.66: the expected kappa peaks at 0.39
    kappas = [_kappa_by_hand(q, c) for c in (k / 100 for k in range(5, 96))]
    assert expected_kappa_cut(q) == (5 + int(np.argmax(kappas))) / 100 == 0.39


def _kappa_by_hand(q: np.ndarray, cut: float) -> float:
    above = q >= cut
    tp, fp, fn, tn = q[above].sum(), (1 - q[above]).sum(), q[~above].sum(), (1 - q[~above]).sum()
    n = len(q)
    chance = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / n**2
    return ((tp + tn) / n - chance) / (1 - chance)


def test_probabilities_of_pairs_follow_the_pairs_order():
    """Probabilities.of(judgments, pairs): row i is pairs[i]'s, whatever the judgments' order (the human grades are in
    the pairs' order)."""
    judged = [Judgment("q", c, 0.5, 0.5, 0.5, p=p) for c, p in (("a", 0.1), ("b", 0.2), ("c", 0.3))]
    assert Probabilities.of(judged, [("q", "c"), ("q", "a")]).p.tolist() == [0.3, 0.1]


def test_probabilities_of_pairs_and_paired_scores_take_each_pairs_own_row():
    """Read as columns, each pair's p, features and with_gold flag, and its score and human grade, come from its own row:
    the judgments' order is neither the pairs' nor the sorted order paired_scores returns."""
    rows = (("b", 0.2, 1.0), ("c", 0.3, 0.0), ("a", 0.1, 1.0))
    judged = JudgmentColumns.of([Judgment("q", c, 0.5, p, 0.5, p=p, features={**dict.fromkeys(labels.FEATURES, p), "with_gold": gold})
                                 for c, p, gold in rows])
    chosen = Probabilities.of(judged, [("q", "c"), ("q", "a")])
    assert (chosen.p.tolist(), chosen.x[:, 0].tolist(), chosen.with_gold.tolist()) == ([0.3, 0.1], [0.3, 0.1], [False, True])
    paired = paired_scores(judged, Qrels.from_dict({"q": {"a": 1, "c": 0, "x": 1}}), "R")
    assert (paired.pairs, paired.scores.tolist(), paired.grades.tolist()) == ([("q", "a"), ("q", "c")], [0.1, 0.3], [1, 0])


def test_a_features_refit_of_judgments_without_features_is_refused(tmp_path):
    """fit="features" asked for on p written without its features (an older judge): refused with what to do, not a
    refit of NaN."""
    judged = [Judgment(f"q{i}", "c", 0.5, 0.5, 0.5, p=0.1 + 0.1 * i) for i in range(8)]
    (tmp_path / "h.qrels").write_text("".join(f"q{i} 0 c {int(i >= 4)}\n" for i in range(8)))
    with pytest.raises(ValidationError, match="^fit='features' needs the features the judge writes beside p"):
        calibrate_labels(judged, tmp_path / "h.qrels", fit="features")
    with pytest.raises(ValidationError, match="^fit='features' needs the features the judge writes beside p"):
        semrel.calibrate(judged, tmp_path / "h.qrels", fit="features")
    (tmp_path / "j.jsonl").write_text("".join(json.dumps({"query_id": j.query_id, "chunk_id": "c", "P": 0.5, "R": 0.5, "F": 0.5, "p": j.p})
                                              + "\n" for j in judged))
    assert assert_one_error(run("calibrate", tmp_path / "j.jsonl", tmp_path / "h.qrels", "--fit", "features")) == (
        "semrel: error: --fit features needs the features the judge writes beside p; some judgments lack them: re-run `semrel judge`")


@pytest.mark.parametrize("sd", [0.5, 2.0])
def test_the_features_refit_is_the_penalised_maximum_likelihood_at_any_prior_sd(sd):
    """fit_features(sd=): the prior's term in the loss and in its gradient is delta / sd**2 (with the default sd of 1, sd
    and sd**2 agree, and a mix-up went unseen); at the fit, the penalised likelihood's gradient vanishes."""
    rng = np.random.default_rng(5)
    x = drawn_features(rng, 1500)
    y = (rng.uniform(size=1500) < _sigmoid(labels.logits(x, True) + 1.0)).astype(int)
    found = np.array(fit_features(Probabilities(labels.probability(x, True), x, np.ones(1500, dtype=bool)), y, sd=sd))
    z = labels.logits(x, True, tuple(found))
    assert np.abs(labels.designs(x, True).T @ (_sigmoid(z) - y) + found / sd**2).max() < 1e-3


def _reviewed(n: int, seed: int) -> tuple[Probabilities, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, n)
    human = np.where(rng.uniform(size=n) < _sigmoid(labels.logit(p) + 1.5), rng.integers(1, 4, n), 0)
    return Probabilities(p, np.full((n, len(labels.FEATURES)), np.nan), np.zeros(n, dtype=bool)), human


def test_graded_agreements_in_sample_are_quadratic_weighted_kappas():
    """graded: before and after are the shipped and refitted grades 0-3 against the human grades, with quadratic weights
    as the held-out figures and the thresholds' fit use, computed here by scikit-learn."""
    reviewed, human = _reviewed(150, 6)
    result = calibrate_probability(reviewed, human, "shift", graded=True, resamples=10)
    cuts = np.array(labels.GRADE_CUTS)
    before = (reviewed.p[:, None] >= cuts).sum(axis=1)
    after = (_sigmoid(labels.logit(reviewed.p) + result.rule.shift)[:, None] >= cuts).sum(axis=1)
    assert result.before.kappa == pytest.approx(cohen_kappa_score(human, before, weights="quadratic"), abs=1e-12)
    assert result.after.kappa == pytest.approx(cohen_kappa_score(human, after, weights="quadratic"), abs=1e-12)
    assert result.after.kappa != pytest.approx(cohen_kappa_score(human, after, weights="linear"), abs=1e-6)


def test_graded_labels_against_binary_human_labels_compare_on_relevance_as_agree_does(write, tmp_path):
    """calibrate --graded against reviewed labels of 0 and 1 (gold chunks standing in for people, or a --test gold file):
    the judge's grades 0-3 were compared with them exactly, so every relevant pair the judge graded 2 or 3 counted as a
    disagreement (and quadratically); `agree` compares such files on the smaller scale, and now so does calibrate, saying so."""
    reviewed, human = _reviewed(150, 6)
    binary = (human > 0).astype(int)
    result = calibrate_probability(reviewed, binary, "shift", graded=True, resamples=10)
    before = np.minimum((reviewed.p[:, None] >= np.array(labels.GRADE_CUTS)).sum(axis=1), 1)
    assert (result.before.labels, result.before.weights) == ([0, 1], "none")
    assert result.before.kappa == pytest.approx(cohen_kappa_score(binary, before), abs=1e-12)
    rng = np.random.default_rng(3)
    p = rng.uniform(0.02, 0.98, 60)
    judgments = write("j.jsonl", "".join(_line(f"q{i}", 0.5, float(v)) for i, v in enumerate(p)))
    gold = write("h.qrels", "".join(f"q{i} 0 c {int(rng.uniform() < v)}\n" for i, v in enumerate(p)))
    out = run("calibrate", judgments, gold, "--graded", "--fit", "anchored", "-o", tmp_path / "cal.json")
    assert out.exit_code == 0, out.output
    assert "h.qrels grades up to 1 and the labels up to 3: agreement compared on grades 0-1" in out.stderr
    header = [line.split()[3:] for line in out.stdout.splitlines() if line.startswith("human \\ judge")]
    assert header == [["0", "1"]]  # the confusion matrix of the reviewed pairs, after: relevant or not


def test_no_judged_pair_leaves_the_cut_where_it_was():
    """`judged` with no pair gives no expected kappa to move the cut by: it stays, and no "cut_from" is recorded."""
    reviewed, human = _reviewed(60, 3)
    empty = Probabilities(np.zeros(0), np.zeros((0, len(labels.FEATURES))), np.zeros(0, dtype=bool))
    result = calibrate_probability(reviewed, human, "shift", resamples=10, judged=empty)
    assert result.rule.cut == labels.CUT and "cut_from" not in (result.rule.calibration or {})


def test_the_calibration_records_how_many_reviewed_pairs_were_relevant(tmp_path):
    """cal.json's "calibration" says how the rule was fitted: the fit, the reviewed pairs and how many were relevant
    (grade 1 or more), read back by `label` into the labels' manifest."""
    reviewed, human = _reviewed(60, 3)
    result = calibrate_probability(reviewed, human, "anchored", resamples=10)
    assert result.rule.calibration == {"fit": "anchored", "pairs": 60, "relevant": int((human > 0).sum())}
    write_fitted(result, tmp_path / "cal.json", [])
    assert labels.read_calibration(tmp_path / "cal.json").calibration == result.rule.calibration


def test_the_manifest_of_a_features_refit_records_the_refit(tmp_path):
    """`calibrate -o`'s manifest records what was fitted: for --fit features the move of every coefficient, as cal.json."""
    rng = np.random.default_rng(4)
    x = drawn_features(rng, 200)
    y = (rng.uniform(size=200) < _sigmoid(labels.logits(x, True) + 1.0)).astype(int)
    result = calibrate_probability(Probabilities(labels.probability(x, True), x, np.ones(200, dtype=bool)), y, resamples=10)
    write_fitted(result, tmp_path / "cal.json", [])
    params = json.loads((tmp_path / "cal.json.manifest.json").read_text())["params"]
    assert result.rule.refit is not None and params["refit"] == list(result.rule.refit)
    assert json.loads((tmp_path / "cal.json").read_text())["calibration"]["refit"] == params["refit"]
    assert (params["fit"], params["slope"], params["shift"], params["cut"]) == ("features", 1.0, 0.0, result.rule.cut)


def test_held_out_pairs_a_test_file_leaves_unlisted_count_as_zero_when_asked(tmp_path):
    """test_unlisted_as_zero (the test file lists only relevant chunks, as gold qrels do): the other judged chunks of its
    queries are held-out pairs of grade 0, whatever unlisted_as_zero says of the calibration file."""
    rng = np.random.default_rng(1)
    judged = [Judgment(f"q{i}", c, 0.5, 0.5, 0.5, p=float(rng.uniform(0.05, 0.95))) for i in range(40) for c in "ab"]
    (tmp_path / "h.qrels").write_text("".join(f"q{i} 0 {c} {int(rng.uniform() < 0.5)}\n" for i in range(20) for c in "ab"))
    (tmp_path / "t.qrels").write_text("".join(f"q{i} 0 a 1\n" for i in range(20, 40)))
    said: list[str] = []  # the labels are coin flips: the refit agrees a little less with them (-0.186 against -0.170), and says so
    result = calibrate_labels(judged, tmp_path / "h.qrels", fit="shift", test=tmp_path / "t.qrels", test_unlisted_as_zero=True,
                              warn=said.append)
    assert result.held_out[0].n == result.held_out[1].n == 40  # a (listed, 1) and b (unlisted: 0) of 20 queries
    result = calibrate_labels(judged, tmp_path / "h.qrels", fit="shift", test=tmp_path / "t.qrels", unlisted_as_zero=True,
                              warn=said.append)
    assert result.held_out[0].n == 20  # the test file's listed pairs alone
    assert said and all(m.startswith("the refit agrees less with the 40 reviewed pairs") for m in said)


def test_graded_thresholds_on_r_are_written_as_graded_and_label_reads_them(write, tmp_path):
    """`calibrate --on R` with grades 0-2: cal.json says "graded", which `label --calibration` checks against its two
    thresholds (a file saying "binary" was refused), and grades by them."""
    judgments = write("j.jsonl", "".join(_line(f"q{i}", r) for i, r in enumerate([0.2, 0.4, 0.5, 0.7, 0.8, 0.9])))
    human = write("h.qrels", "q0 0 c 0\nq1 0 c 0\nq2 0 c 1\nq3 0 c 1\nq4 0 c 2\nq5 0 c 2\n")
    result = run("calibrate", judgments, human, "--on", "R", "-o", tmp_path / "cal.json")
    assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "cal.json").read_text())
    assert written["labels"] == "graded" and written["thresholds"] == [0.45, 0.75]
    result = run("label", judgments, "--calibration", tmp_path / "cal.json", "-o", tmp_path / "q.txt")
    assert result.exit_code == 0, result.output
    assert read_qrels(tmp_path / "q.txt").to_dict() == {f"q{i}": {"c": g} for i, g in enumerate([0, 0, 1, 1, 2, 2])}


def test_unlisted_as_zero_counts_only_the_queries_the_human_file_has(write):
    """unlisted_as_zero: a judged chunk the human file leaves out of a query it grades is grade 0; a query it does not
    grade at all is not reviewed, and stays out of the fit."""
    judgments = [Judgment(q, c, r, r, r, "bm25") for q, c, r in
                 (("q1", "a", 0.9), ("q1", "b", 0.2), ("q2", "a", 0.8), ("q2", "b", 0.3), ("q3", "a", 0.1))]
    human = write("h.qrels", "q1 0 a 1\nq2 0 a 1\n")
    result = calibrate_labels(judgments, human, on="R", unlisted_as_zero=True)
    assert result.agreement.n == 4 and result.thresholds == [0.55]


def test_a_held_out_kappa_left_undefined_is_said_why(write, tmp_path):
    """`--test` pairs of one class on both sides printed 'nan nan nan' in the table and nothing more. Here the test pairs
    q2, q3 have R 0.9 and 0.95 and the human grade 1: every cut the refit can choose labels them 1 too."""
    judgments = write("j.jsonl", "".join(_line(f"q{i}", r, r) for i, r in enumerate([0.2, 0.3, 0.9, 0.95, 0.8, 0.1])))
    human = write("h.qrels", "q0 0 c 0\nq1 0 c 0\nq4 0 c 1\nq5 0 c 0\n")
    test = write("t.qrels", "q2 0 c 1\nq3 0 c 1\n")
    result = run("calibrate", judgments, human, "--test", test, "--on", "R", "-o", tmp_path / "cal.json")
    assert result.exit_code == 0, result.output
    assert ("kappa is undefined (nan) for test vs judge: both give all 2 compared pairs grade 1, so they agree on every pair, but "
            "chance alone would agree as much") in result.stdout.splitlines()


def test_a_test_file_whose_pairs_were_all_reviewed_says_what_to_do(write, tmp_path):
    """docs/review.md's simulate, export, `calibrate --test gold.qrels` run on the demo: its --limit 300 reviews all 266
    judged pairs, and the error said only that none was left, not why nor what to do."""
    judgments = write("j.jsonl", "".join(_line(f"q{i}", r, r) for i, r in enumerate([0.2, 0.3, 0.9, 0.95])))
    human = write("h.qrels", "q0 0 c 0\nq1 0 c 0\nq2 0 c 1\nq3 0 c 1\n")
    assert_one_error(run("calibrate", judgments, human, "--test", human, "--on", "R", "-o", tmp_path / "cal.json"),
                     f"{human}: no judged pair is left once the calibration pairs are set aside (all 4 it holds were reviewed): "
                     "test on labels of other pairs, or review fewer (a smaller --limit) so that some are left to test on")


@pytest.mark.parametrize("options", [{}, {"fit": "anchored"}, {"graded": True}, {"on": "R"}, {"on": "R", "grades": 3}])
def test_a_calibration_is_the_same_whatever_the_judgments_line_order(tmp_path, options):
    """The pairs are taken in (query, chunk) order, as `agree` takes them: in the file's line order, a shuffled
    judgments.jsonl gave another bootstrap interval (kappa_low 0.822903 against 0.822968 on a demo) and refitted
    coefficients differing in their last digits."""
    rng = np.random.default_rng(8)
    x = drawn_features(rng, 240)
    p = labels.probability(x, True)
    judged = [Judgment(f"q{i // 6}", f"c{i}", float(r), float(r), float(r), p=float(v),
                       features={**dict(zip(labels.FEATURES, row.tolist())), labels.WITH_GOLD_FLAG: 1.0})
              for i, (r, v, row) in enumerate(zip(rng.uniform(0.3, 0.9, 240), p, x))]
    grades = np.where(rng.uniform(size=240) < p, rng.integers(1, 4, 240), 0)
    (tmp_path / "h.qrels").write_text("".join(f"{j.query_id} 0 {j.chunk_id} {g}\n" for j, g in zip(judged[:160], grades)))
    (tmp_path / "t.qrels").write_text("".join(f"{j.query_id} 0 {j.chunk_id} {g}\n" for j, g in zip(judged[160:], grades[160:])))
    results = [calibrate_labels(order, tmp_path / "h.qrels", test=tmp_path / "t.qrels", **options)
               for order in (judged, judged[::-1], [judged[i] for i in rng.permutation(240)])]
    assert results[0].to_json() == results[1].to_json() == results[2].to_json()

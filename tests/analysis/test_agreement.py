"""Kappa, confusion matrices, Kendall's tau-b and the bootstrap, against scikit-learn and scipy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score
from sklearn.metrics import confusion_matrix as sk_confusion

from semrel.analysis import agreement as agreement_module
from semrel.analysis import significance
from semrel.analysis.agreement import (
    agreement,
    batched_confusion,
    cohen_kappa,
    confusion_matrix,
    kappa_from_confusion,
    kappa_undefined,
    kendall_tau_b,
    label_codes,
)


@pytest.mark.parametrize("weights", ["none", "linear", "quadratic"])
@pytest.mark.parametrize("seed", range(8))
def test_kappa_equals_scikit_learn(weights, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, 60)
    b = np.clip(a + rng.integers(-2, 3, 60), 0, 3)
    expected = cohen_kappa_score(a, b, weights=None if weights == "none" else weights)
    assert cohen_kappa(a, b, weights) == pytest.approx(expected, abs=1e-12)


def test_kappa_of_binary_labels_by_hand():
    # 2x2: agree 0/0 x20, 1/1 x15, 0/1 x5, 1/0 x10 -> po = 0.7, pe = (25*30 + 25*20)/50^2 = 0.5
    a = [0] * 20 + [1] * 15 + [0] * 5 + [1] * 10
    b = [0] * 20 + [1] * 15 + [1] * 5 + [0] * 10
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_confusion_matrix_matches_scikit_learn_and_keeps_unused_labels():
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 3, 40), rng.integers(0, 3, 40)
    matrix, labels = confusion_matrix(a, b, labels=[0, 1, 2, 3])
    assert labels == [0, 1, 2, 3]
    assert (matrix[:3, :3] == sk_confusion(a, b, labels=[0, 1, 2])).all()
    assert matrix[3].sum() == 0 and matrix[:, 3].sum() == 0


@pytest.mark.parametrize("seed", range(10))
def test_kendall_tau_b_equals_scipy_with_ties(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 6, 40).astype(float)
    y = x + rng.integers(-3, 4, 40)
    assert kendall_tau_b(x, y) == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)


def test_kendall_tau_of_reversed_order_is_minus_one_and_constant_is_nan():
    assert kendall_tau_b([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert np.isnan(kendall_tau_b([1, 1, 1], [1, 2, 3]))


def test_batched_kappa_equals_one_at_a_time():
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 4, 30), rng.integers(0, 4, 30)
    ca, cb, labels = label_codes(a, b)
    rows = rng.integers(0, 30, size=(7, 30))
    batched = kappa_from_confusion(batched_confusion(ca, cb, len(labels), rows), "quadratic")
    single = [cohen_kappa(a[r], b[r], "quadratic", labels=labels) for r in rows]
    assert batched == pytest.approx(single)


def test_agreement_interval_is_seeded_and_holds_the_estimate():
    rng = np.random.default_rng(11)
    a = rng.integers(0, 4, 200)
    b = np.where(rng.uniform(size=200) < 0.8, a, rng.integers(0, 4, 200))
    first, again = agreement(a, b, seed=4), agreement(a, b, seed=4)
    assert first == again
    assert first.weights == "quadratic"  # graded labels
    assert first.low < first.kappa < first.high
    assert first.percent == pytest.approx(100.0 * np.mean(a == b))
    assert first.kappa == pytest.approx(cohen_kappa_score(a, b, weights="quadratic"))
    assert sum(map(sum, first.confusion)) == 200
    assert agreement(a, b, seed=5).low != first.low
    assert agreement([0, 1, 1, 0], [0, 1, 0, 0]).weights == "none"


def test_kappa_is_nan_when_both_raters_give_one_label_alone():
    """No expected disagreement leaves kappa undefined: nan (as scikit-learn), never a made-up 0 or 1."""
    assert np.isnan(cohen_kappa([2, 2, 2], [2, 2, 2]))
    batch = kappa_from_confusion(np.array([[[3, 0], [0, 0]], [[2, 1], [0, 1]]]), "quadratic")
    assert np.isnan(batch[0])
    assert batch[1] == pytest.approx(cohen_kappa_score([0, 0, 0, 1], [0, 0, 1, 1], weights="quadratic"))


def test_why_kappa_is_undefined_is_said_where_it_is_nan_and_only_there():
    """One sentence, used by `agree`'s warning and `review stats`, which had each their own wording of it."""
    assert kappa_undefined(agreement([1, 1, 1], [1, 1, 1], labels=[0, 1, 2], resamples=10), "a vs b") == (
        "kappa is undefined (nan) for a vs b: both give all 3 compared pairs grade 1, so they agree on every pair, but chance "
        "alone would agree as much")
    assert kappa_undefined(agreement([], [], labels=[0, 1], resamples=10), "a vs b") == (
        "kappa is undefined (nan) for a vs b: there is no pair to compare")
    for a, b in (([1, 1, 1], [0, 0, 0]), ([1, 1, 1], [1, 0, 1]), ([0, 1, 2], [0, 1, 2])):  # kappa 0, 0 and 1: defined
        assert kappa_undefined(agreement(a, b, resamples=10), "a vs b") is None


def resampled_kappas(a, b, resamples, seed):
    """scikit-learn's kappa of each resample agreement draws (rows from default_rng(seed)); nan where undefined."""
    rows = np.random.default_rng(seed).integers(0, len(a), size=(resamples, len(a)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.array([cohen_kappa_score(a[r], b[r], labels=[0, 1]) for r in rows])


@pytest.mark.parametrize("level", [0.95, 0.8])
def test_agreement_interval_is_the_central_level_share_of_the_resampled_kappas(level):
    """low and high are the (1 - level) / 2 and 1 - (1 - level) / 2 percentiles of the seeded resamples' kappas."""
    rng = np.random.default_rng(8)
    a = rng.integers(0, 2, 40)
    b = np.where(rng.uniform(size=40) < 0.75, a, 1 - a)
    kappas = resampled_kappas(a, b, 300, 2)
    tail = (1 - level) / 2 * 100
    result = agreement(a, b, resamples=300, seed=2, level=level)
    assert (result.low, result.high) == pytest.approx(tuple(np.percentile(kappas, [tail, 100 - tail])))


def test_agreement_interval_leaves_out_resamples_where_kappa_is_undefined():
    """Resamples of four items that draw only those both label 0 (or the one both label 1) have no kappa: they are
    left out of the percentiles, not turned into a nan interval."""
    a, b = np.array([0, 1, 1, 0]), np.array([0, 1, 0, 0])
    kappas = resampled_kappas(a, b, 400, 3)
    assert np.isnan(kappas).sum() > 10  # the case this checks occurs
    result = agreement(a, b, resamples=400, seed=3)
    assert (result.low, result.high) == pytest.approx(tuple(np.percentile(kappas[np.isfinite(kappas)], [2.5, 97.5])))


def test_agreement_weighs_by_position_among_the_labels_given_used_or_not():
    """With labels 0..3 given and grade 2 unused, quadratic weights put 1 and 3 two places apart (as scikit-learn
    with labels=), not one: the confusion matrix keeps the empty row and column of grade 2."""
    a, b = [0, 1, 3, 3, 1, 0, 3, 1, 0], [0, 1, 3, 1, 1, 0, 3, 3, 1]
    result = agreement(a, b, "quadratic", labels=range(4), resamples=10)
    assert result.labels == [0, 1, 2, 3]
    assert result.confusion[2] == [0, 0, 0, 0] and [row[2] for row in result.confusion] == [0, 0, 0, 0]
    expected = cohen_kappa_score(a, b, weights="quadratic", labels=[0, 1, 2, 3])
    assert expected != pytest.approx(cohen_kappa_score(a, b, weights="quadratic"))  # the position matters here
    assert result.kappa == pytest.approx(expected)


def test_agreement_confusion_rows_are_the_first_labelling():
    """The confusion matrix agreement() reports has the first labelling down the rows (as scikit-learn's
    confusion_matrix(a, b)); a transposed matrix leaves kappa unchanged, so only this catches it."""
    a, b = [0, 0, 0, 1, 2, 2], [1, 1, 0, 1, 2, 0]
    result = agreement(a, b, resamples=10)
    assert result.confusion == sk_confusion(a, b).tolist() == [[1, 2, 0], [0, 1, 0], [1, 0, 1]]


def test_default_weights_follow_the_grades_either_labelling_uses():
    """The first labelling uses grades 0 and 1, the second 2 as well: the labels are graded, so kappa is quadratic
    (as scikit-learn's with weights='quadratic'), not plain because the first alone looks binary."""
    a, b = [0, 1, 0, 1, 1, 0, 1], [0, 1, 2, 2, 1, 0, 0]
    result = agreement(a, b, resamples=10)
    assert result.weights == "quadratic"
    assert result.kappa == pytest.approx(cohen_kappa_score(a, b, weights="quadratic"))


def test_agreement_resamples_a_batch_at_a_time_and_draws_what_one_matrix_drew(monkeypatch):
    """The bootstrap held all its resamples' indices at once, (1,000, n) int64 and three arrays as large while counting:
    `semrel agree` on two qrels of 1M pairs each ran out of memory at 8 GB (100k pairs: 2.5 GB). A batch holds about
    _BATCH_CELLS indices, and the interval is the one the whole matrix gave."""
    rng = np.random.default_rng(4)
    a = rng.integers(0, 3, 50)
    b = np.where(rng.uniform(size=50) < 0.7, a, rng.integers(0, 3, 50))
    whole = agreement(a, b, resamples=200, seed=1)
    seen = []
    counted = agreement_module.batched_confusion
    monkeypatch.setattr(significance, "_BATCH_CELLS", 500)
    monkeypatch.setattr(agreement_module, "batched_confusion", lambda *args: seen.append(args[3].size) or counted(*args))
    assert agreement(a, b, resamples=200, seed=1) == whole
    assert max(seen) <= 500 and sum(seen) == 200 * 50

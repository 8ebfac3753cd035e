"""Kappa, confusion matrices, Kendall's tau-b and the bootstrap, against scikit-learn and scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score
from sklearn.metrics import confusion_matrix as sk_confusion

from semrel.analysis.agreement import (
    agreement,
    batched_confusion,
    cohen_kappa,
    confusion_matrix,
    kappa_from_confusion,
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

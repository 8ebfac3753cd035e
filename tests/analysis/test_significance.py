"""Paired tests against scipy, a plain-Python permutation loop and hand-computed corrections."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from semrel.analysis.significance import StatSettings, adjust, bootstrap, chosen_p, no_spread, paired_stats, randomization_p, t_test_p
from semrel.errors import UsageError

A = np.array([0.50, 0.20, 0.90, 0.40, 0.00, 0.70, 0.33, 0.10, 1.00, 0.25])
B = np.array([0.40, 0.25, 0.60, 0.40, 0.10, 0.30, 0.50, 0.00, 0.80, 0.05])


def _loop_p(diffs: list[float], flips: list[list[int]] | None = None) -> float:
    """Two-sided randomization p by brute force: every sign pattern (or the given ones)."""
    observed = abs(sum(diffs))
    patterns = flips if flips is not None else list(itertools.product([1, -1], repeat=len(diffs)))
    hits = sum(abs(sum(s * d for s, d in zip(signs, diffs))) >= observed - 1e-12 for signs in patterns)
    return hits / len(patterns)


def test_t_test_equals_scipy_ttest_rel():
    expected = stats.ttest_rel(A, B).pvalue
    assert t_test_p(A - B)[0] == pytest.approx(expected, rel=1e-12)
    columns = np.column_stack([A - B, B - A, A - B[::-1]])
    assert t_test_p(columns) == pytest.approx(
        [expected, expected, stats.ttest_rel(A, B[::-1]).pvalue], rel=1e-12)


def test_t_test_constant_differences():
    assert t_test_p(np.zeros(5))[0] == 1.0
    assert t_test_p(np.full(5, 0.1))[0] == 0.0



def test_t_test_of_two_queries_equals_scipy_and_one_query_is_no_evidence():
    """Two queries already give a t statistic (one degree of freedom); only one query is p = 1."""
    assert t_test_p(np.array([0.1, 0.3]))[0] == pytest.approx(stats.ttest_1samp([0.1, 0.3], 0.0).pvalue, rel=1e-12)
    assert t_test_p(np.array([0.1, 0.3]))[0] < 1
    assert t_test_p(np.array([0.4]))[0] == 1.0

def test_randomization_exhaustive_equals_loop_exactly():
    diffs = A - B  # 10 queries: 1024 patterns <= 10,000 permutations, so enumerated
    expected = _loop_p(diffs.tolist())
    assert randomization_p(diffs, 10_000, seed=1)[0] == expected
    assert expected == 136 / 1024  # counted by the loop: the exact p of these 10 queries


def test_randomization_sampled_within_monte_carlo_error():
    rng = np.random.default_rng(7)
    diffs = rng.normal(0.03, 0.2, size=40)
    draw = random.Random(3)
    flips = [[draw.choice((1, -1)) for _ in range(40)] for _ in range(4000)]
    reference = _loop_p(diffs.tolist(), flips)
    p = randomization_p(diffs, 20_000, seed=3)[0]
    assert abs(p - reference) < 4 * np.sqrt(reference * (1 - reference) / 4000) + 0.005
    assert 0.05 < p < 0.8  # the data sit well inside both tails


def test_randomization_is_reproducible_by_seed():
    diffs = np.random.default_rng(0).normal(0, 1, size=(50, 3))
    first = randomization_p(diffs, 2000, seed=11)
    assert np.array_equal(first, randomization_p(diffs, 2000, seed=11))
    assert not np.array_equal(first, randomization_p(diffs, 2000, seed=12))
    # never 0: the observed pattern counts
    assert randomization_p(np.full(50, 1.0), 500, seed=1)[0] == pytest.approx(1 / 501)


def test_bootstrap_interval_and_p_against_a_loop():
    diffs = A - B
    p, low, high = bootstrap(diffs, 4000, seed=5, confidence=0.9)
    rng = np.random.default_rng(99)
    means = [float(np.mean(diffs[rng.integers(0, len(diffs), len(diffs))])) for _ in range(4000)]
    ref_low, ref_high = np.percentile(means, [5, 95])
    assert low[0] == pytest.approx(ref_low, abs=0.02) and high[0] == pytest.approx(ref_high, abs=0.02)
    assert low[0] < diffs.mean() < high[0]
    shifted = sum(abs(m - diffs.mean()) >= abs(diffs.mean()) for m in means) / 4000
    assert p[0] == pytest.approx(shifted, abs=0.03)
    assert np.array_equal(bootstrap(diffs, 4000, 5, 0.9)[1], low)


def test_holm_and_bonferroni_by_hand():
    p = np.array([0.01, 0.04, 0.03, 0.20])
    # Bonferroni: 4p capped at 1
    assert adjust(p, "bonferroni") == pytest.approx([0.04, 0.16, 0.12, 0.80])
    # Holm: sorted 0.01,0.03,0.04,0.20 times 4,3,2,1 = 0.04,0.09,0.08,0.20, then running max
    assert adjust(p, "holm") == pytest.approx([0.04, 0.09, 0.09, 0.20])
    assert adjust(p, "none") == pytest.approx(p)
    assert adjust(np.array([0.5, 0.6]), "bonferroni") == pytest.approx([1.0, 1.0])


@pytest.mark.parametrize("method", ["holm", "bonferroni"])
def test_corrections_equal_statsmodels(method):
    """The reference: statsmodels' multipletests, over 1 to 39 tests with ties, 1.0s and tiny p-values."""
    from statsmodels.stats.multitest import multipletests
    rng = np.random.default_rng(0)
    for n in range(1, 40):
        p = rng.random(n) ** 3
        tied = n // 4
        p[:tied] = p[tied : 2 * tied]
        p[n // 2] = 1.0
        assert np.array_equal(adjust(p, method), multipletests(p, method=method)[1]), (n, p)


def test_paired_stats_picks_the_chosen_p_value():
    found = paired_stats(A - B, StatSettings(test="t", bootstrap=200, permutations=200))
    assert found.p_values("t")[0] == pytest.approx(stats.ttest_rel(A, B).pvalue)
    assert found.mean[0] == pytest.approx((A - B).mean())


def test_settings_refuse_unknown_names():
    with pytest.raises(UsageError, match="unknown test"):
        StatSettings(test="wilcoxon")
    with pytest.raises(UsageError, match="correction"):
        StatSettings(correction="fdr")


def test_randomization_enumerates_when_the_permutations_equal_the_sign_patterns():
    """2**n == permutations is the exact p of every pattern, as with more permutations, not (hits + 1) / (permutations + 1)
    of random draws."""
    diffs = np.array([0.3, -0.1, 0.2, 0.05])
    exact = _loop_p(diffs.tolist())
    assert exact == 6 / 16  # of the 8 sign patterns of (0.3, 0.1, 0.2, 0.05) with 0.3 positive: 0.65, 0.55 and 0.45
    assert randomization_p(diffs, 16, seed=2)[0] == exact
    assert randomization_p(diffs, 10_000, seed=2)[0] == exact


def test_bootstrap_of_one_query_is_no_evidence():
    """One query resamples to itself: p is 1 and the interval is the point (as the t-test), not p = 1 / (resamples + 1)."""
    p, low, high = bootstrap(np.array([0.4]), 500, seed=0, confidence=0.95)
    assert (p[0], low[0], high[0]) == (1.0, 0.4, 0.4)


def test_bootstrap_p_counts_the_observed_sample_and_is_never_zero():
    """Differences all near 1: no resampled mean strays from the observed mean as far as the mean lies from 0, so p is
    exactly 1 / (resamples + 1), never 0."""
    diffs = np.array([0.9, 1.0, 1.1, 1.0, 0.95, 1.05])
    assert bootstrap(diffs, 999, seed=3, confidence=0.95)[0][0] == pytest.approx(1 / 1000)


def test_no_spread_names_the_columns_of_one_nonzero_difference_where_t_or_the_bootstrap_decides():
    """A column of one difference on every query (to float noise: 0.3 - 0.2 is not 0.4 - 0.3) gave the bootstrap's p
    its floor 1/(resamples + 1) at any number of queries, and t's 0, unsaid; all-zero or spread columns are not named,
    nor anything where the randomization test decides or below 5 queries (few_queries speaks there)."""
    noise = np.array([0.3 - 0.2, 0.4 - 0.3, 0.7 - 0.6, 0.1, 0.9 - 0.8, 0.6 - 0.5])
    assert len(set(noise.tolist())) > 1
    diffs = np.column_stack([noise, np.zeros(6), np.linspace(0.1, 0.6, 6), -np.full(6, 0.25), *[np.ones(6)] * 3])
    names = ["a", "zero", "spread", "b", "c", "d", "e"]
    boot = StatSettings(test="bootstrap", bootstrap=999)
    assert bootstrap(diffs, 999, 0, 0.95)[0][[0, 3]].tolist() == [1 / 1000, 1 / 1000]
    assert no_spread(diffs, boot, names) == (
        "a, b, c and 2 more: the difference is the same on every one of the 6 queries, so the bootstrap test has no spread between "
        "queries to weigh it against: its p (1/1000) is what it gives on 5 queries as on 5,000, not a measure of the evidence; "
        "the randomization test (the default) counts the sign patterns that reach the difference")
    assert no_spread(diffs[:, :4], StatSettings(test="t"), names).startswith("a, b: the difference is the same on every one of the "
                                                                             "6 queries, so the t test has no spread")
    assert no_spread(diffs, StatSettings(), names) is None and no_spread(diffs[:4], boot, names) is None
    assert no_spread(diffs[:, 1:3], boot, names[1:3]) is None


def test_holm_is_capped_at_one():
    """Holm's step-down multiplies the smallest p by m: 0.6 x 2 = 1.2 is shown as 1, as Bonferroni caps it."""
    assert adjust(np.array([0.6, 0.7]), "holm") == pytest.approx([1.0, 1.0])
    assert adjust(np.array([0.3, 0.02, 0.9]), "holm") == pytest.approx([0.6, 0.06, 0.9])


@pytest.mark.parametrize("test", ["t", "randomization", "bootstrap"])
def test_chosen_p_is_the_p_value_paired_stats_gives_for_that_test(test):
    """chosen_p (the threshold sweep's shortcut) is the chosen test's p with the settings' seed and draws, not the
    interval's bound or another seed's p."""
    diffs = np.random.default_rng(4).normal(0.05, 0.3, size=(40, 3))
    settings = StatSettings(test=test, permutations=500, bootstrap=400, seed=9)
    assert np.array_equal(chosen_p(diffs, settings), paired_stats(diffs, settings).p_values(test))
    if test != "t":
        assert not np.array_equal(chosen_p(diffs, settings), chosen_p(diffs, StatSettings(test=test, permutations=500,
                                                                                           bootstrap=400, seed=0)))


@pytest.mark.parametrize("settings, message", [
    ({"permutations": 0}, r"^permutations=0: give 1 to 1,000,000$"), ({"bootstrap": 0}, r"^bootstrap=0: give 1 to 1,000,000$"),
    # past a million draws: the bootstrap's 10**12 resampled means filled 22 GB before the kernel ended the command
    ({"bootstrap": 10**12}, r"^bootstrap=1000000000000: give 1 to 1,000,000$"), ({"permutations": 1_000_001}, "give 1 to 1,000,000"),
    ({"seed": -1}, "give 0 or more"),
    ({"alpha": 1.0}, "strictly between"), ({"alpha": 0.0}, "strictly between"), ({"confidence": 1.0}, "strictly between"),
])
def test_settings_refuse_values_at_the_edges(settings, message):
    """No draws, a negative seed, or an alpha or confidence of 0 or 1 are refused up front, not turned into p-values."""
    with pytest.raises(UsageError, match=message):
        StatSettings(**settings)
    StatSettings(permutations=1, bootstrap=1, seed=0, alpha=0.999, confidence=0.001)  # the smallest and largest accepted


def test_randomization_counts_sign_patterns_that_tie_the_observed_sum_up_to_rounding():
    """Flipping 0.1, 0.2 and -0.3 (a sum of 0) leaves |0.4| as observed, though floats give 0.3999...: the exact p over
    the 16 patterns, counted in fractions, is 10/16; without the rounding slack such ties were missed (8/16)."""
    diffs = [0.1, 0.2, -0.3, 0.4]
    exact = [Fraction(str(d)) for d in diffs]
    hits = sum(abs(sum(s * d for s, d in zip(signs, exact))) >= abs(sum(exact)) for signs in itertools.product((1, -1), repeat=4))
    assert hits == 10
    assert randomization_p(np.array(diffs), 10_000, seed=0)[0] == 10 / 16



def test_randomization_slack_covers_rounding_only():
    """1.0004 and 0.9996 are different sums: 2 of the 4 sign patterns of (1.0, 0.0004) reach the observed 1.0004."""
    assert randomization_p(np.array([1.0, 0.0004]), 10_000, seed=0)[0] == 0.5



def test_bootstrap_resamples_every_query():
    """Two queries (0 and 1) resample to means 0, 0.5 and 1 with chances 1/4, 1/2, 1/4: the 95% interval is 0 to 1 and
    about half the means lie as far from 0.5 as 0.5 from 0."""
    p, low, high = bootstrap(np.array([0.0, 1.0]), 2000, seed=0, confidence=0.95)
    assert (low[0], high[0]) == (0.0, 1.0)
    assert p[0] == pytest.approx(0.5, abs=0.05)



def test_bootstrap_interval_is_the_linear_percentile_of_the_seeded_resampled_means():
    """The interval is numpy's default (linear) percentile of the means of queries drawn with the seed, as a loop
    over the same generator draws them."""
    diffs = np.random.default_rng(1).normal(0.05, 0.2, size=15)  # distinct means: percentile positions between two of them
    p, low, high = bootstrap(diffs, 1000, seed=4, confidence=0.9)
    means = diffs[np.random.default_rng(4).integers(0, len(diffs), size=(1000, len(diffs)))].mean(axis=1)
    assert (low[0], high[0]) == pytest.approx(tuple(np.percentile(means, [5, 95])), abs=1e-12)
    far = np.abs(means - diffs.mean()) >= abs(diffs.mean()) - 1e-12
    assert p[0] == pytest.approx((far.sum() + 1) / 1001, abs=1e-12)

"""Paired significance tests over per-query differences, vectorized over many comparisons at once.

Every function takes `diffs`, an (n queries, k comparisons) array of per-query differences,
and answers for all k columns together: one draw of random signs or resamples serves every
column, so a table of runs x measures costs one matrix product per batch of draws.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import UsageError, check_kind
from ..terminal import quantity

TESTS = ("t", "randomization", "bootstrap")
CORRECTIONS = ("holm", "bonferroni", "none")
_BATCH_CELLS = 4_000_000  # random draws held in memory at once (about 32 MB as float64)


MAX_DRAWS = 1_000_000
"""The most permutations or bootstrap resamples: a p-value's step is 1/(draws + 1), and the bootstrap keeps every
resampled mean of every comparison (10**12 of them filled 22 GB before the kernel ended the command)."""


@dataclass(frozen=True)
class StatSettings:
    """How differences are tested: which p-value counts, how many draws, which seed."""

    test: str = "randomization"
    permutations: int = 10_000
    bootstrap: int = 10_000
    seed: int = 0
    alpha: float = 0.05
    confidence: float = 0.95
    correction: str = "holm"

    def __post_init__(self) -> None:
        check_kind("test", self.test, (str,), f"one of {', '.join(TESTS)}", required=True)
        check_kind("correction", self.correction, (str,), f"one of {', '.join(CORRECTIONS)}", required=True)
        for name in ("permutations", "bootstrap", "seed"):  # a float or text here failed deep in numpy
            check_kind(name, getattr(self, name), (numbers.Integral,), "a whole number", required=True)
        for name in ("alpha", "confidence"):
            check_kind(name, getattr(self, name), (numbers.Real,), "a number", required=True)
        if self.test not in TESTS:
            raise UsageError(f"unknown test {self.test!r}; choose one of {', '.join(TESTS)}")
        if self.correction not in CORRECTIONS:
            raise UsageError(f"unknown correction {self.correction!r}; choose one of {', '.join(CORRECTIONS)}")
        for name in ("permutations", "bootstrap"):
            if not 1 <= getattr(self, name) <= MAX_DRAWS:
                raise UsageError(f"{name}={getattr(self, name)}: give 1 to {MAX_DRAWS:,}")
        if self.seed < 0:
            raise UsageError(f"seed={self.seed}: give 0 or more")
        for name in ("alpha", "confidence"):
            value = getattr(self, name)
            if not 0 < value < 1:  # named: one message for both left confidence=2 reading as alpha's fault
                raise UsageError(f"{name}={value!r}: give a number strictly between 0 and 1")


@dataclass(frozen=True)
class PairedStats:
    """Per column: mean difference, the three two-sided p-values and the bootstrap interval."""

    mean: np.ndarray
    t_p: np.ndarray
    randomization_p: np.ndarray
    bootstrap_p: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray

    def p_values(self, test: str) -> np.ndarray:
        return {"t": self.t_p, "randomization": self.randomization_p, "bootstrap": self.bootstrap_p}[test]


def level_text(confidence: float) -> str:
    """A confidence level as headers and messages name it: 97.5%, where whole percents said 98% (and 99.9% said 100%)."""
    return f"{confidence * 100:g}%"


FEW_QUERIES = 5  # paired tests on fewer differences are not worth their p-values


def few_queries(queries: int) -> str | None:
    """The warning for paired tests over fewer than FEW_QUERIES queries (compare, lift and the report give the same
    words, so the report says it once): one query gave p = 1 and a zero-width interval; two, a zero-variance t
    "significant"."""
    if not 0 < queries < FEW_QUERIES:
        return None
    return (f"the runs are compared on {quantity(queries, 'query')}: paired tests of so few differences mean little "
            "(p-values and intervals are shown as computed); compare on more queries")


DEFAULT_STATS = StatSettings()  # the defaults of compare, lift, sensitivity and report, in Python and on the command line


def _columns(diffs: np.ndarray) -> np.ndarray:
    array = np.asarray(diffs, dtype=np.float64)
    return array[:, None] if array.ndim == 1 else array


def batch_sizes(total: int, n: int) -> list[int]:
    """Rows per batch of `total` rows of `n` draws each, so that a batch holds about _BATCH_CELLS draws: resampling
    many items (agreement over a million pairs) would otherwise hold total x n of them at once."""
    size = max(1, _BATCH_CELLS // max(n, 1))
    return [min(size, total - start) for start in range(0, total, size)]


def _tolerance(diffs: np.ndarray) -> np.ndarray:
    """Slack for comparing sums of the same numbers added in another order."""
    return 1e-9 * np.abs(diffs).sum(axis=0) + 1e-12


def constant_columns(d: np.ndarray) -> np.ndarray:
    """The columns whose differences are one value on every query (to the slack of float sums): no spread between
    queries for the t-test or the bootstrap to weigh their mean against."""
    return d.std(axis=0) <= _tolerance(d) / max(d.shape[0], 1)


def no_spread(diffs: np.ndarray, settings: StatSettings, names: Sequence[str]) -> str | None:
    """The warning for the comparisons (`names`, one per column of `diffs`) whose differences are one non-zero value on
    every query, where the t-test or the bootstrap decides: t's p is then 0 and the bootstrap's its floor
    1/(resamples + 1), on 5 queries as on 5,000; Fisher's randomization test still counts the sign patterns that reach
    the difference (2/2^n where it enumerates them). Below FEW_QUERIES, few_queries speaks."""
    d = _columns(diffs)
    n = d.shape[0]
    if settings.test == "randomization" or n < FEW_QUERIES:
        return None
    flat = np.flatnonzero(constant_columns(d) & (np.abs(d.mean(axis=0)) > _tolerance(d) / n))
    if not len(flat):
        return None
    listed = ", ".join(names[k] for k in flat[:3]) + (f" and {len(flat) - 3} more" if len(flat) > 3 else "")
    floor = "0" if settings.test == "t" else f"1/{settings.bootstrap + 1}"
    return (f"{listed}: the difference is the same on every one of the {n} queries, so the {settings.test} test has no spread "
            f"between queries to weigh it against: its p ({floor}) is what it gives on 5 queries as on 5,000, not a measure of the "
            "evidence; the randomization test (the default) counts the sign patterns that reach the difference")


def t_test_p(diffs: np.ndarray) -> np.ndarray:
    """Two-sided paired t-test (as scipy.stats.ttest_rel); constant differences give 1 (all 0) or 0."""
    from scipy import stats  # imported here: it costs a second at every start of the CLI
    d = _columns(diffs)
    n = d.shape[0]
    mean = d.mean(axis=0) if n else np.zeros(d.shape[1])
    if n < 2:
        return np.ones(d.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # constant columns: handled below
        p = stats.ttest_1samp(d, 0.0, axis=0).pvalue
    return np.where(constant_columns(d), np.where(np.abs(mean) <= _tolerance(d) / n, 1.0, 0.0), p)


def randomization_p(diffs: np.ndarray, permutations: int, seed: int) -> np.ndarray:
    """Fisher's randomization test: how often flipping the sign of each query's difference
    gives a mean at least as far from 0 as the one observed.

    With 2**n <= permutations every sign pattern is enumerated and p is exact; otherwise
    `permutations` random patterns (seeded) are drawn and p = (hits + 1) / (permutations + 1),
    which counts the observed pattern and is never 0.
    """
    d = _columns(diffs)
    n, k = d.shape
    observed = np.abs(d.sum(axis=0)) - _tolerance(d)
    if n == 0:
        return np.ones(k)
    hits = np.zeros(k, dtype=np.int64)
    if n < 31 and 2**n <= permutations:
        start = 0  # every pattern, in batches: all 2^n rows at once took 2.2 GB for 22 queries, and more past that
        for size in batch_sizes(2**n, n):
            bits = (np.arange(start, start + size, dtype=np.int64)[:, None] >> np.arange(n)) & 1
            hits += (np.abs((1 - 2 * bits).astype(np.float64) @ d) >= observed).sum(axis=0)
            start += size
        return hits / 2**n
    rng = np.random.default_rng(seed)
    for size in batch_sizes(permutations, n):
        signs = rng.integers(0, 2, size=(size, n), dtype=np.int8) * 2 - 1
        hits += (np.abs(signs.astype(np.float64) @ d) >= observed).sum(axis=0)
    return (hits + 1) / (permutations + 1)


def bootstrap(diffs: np.ndarray, resamples: int, seed: int, confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p, low, high): percentile interval of the mean difference over queries resampled with
    replacement (seeded), and the two-sided p-value of the shifted bootstrap (the resampled
    means recentred on 0: how often they stray from 0 as far as the observed mean)."""
    d = _columns(diffs)
    n, k = d.shape
    if n < 2:  # one query resamples to itself: no spread to test against, so no evidence (as the t-test)
        mean = d.mean(axis=0) if n else np.zeros(k)
        return np.ones(k), mean, mean
    rng = np.random.default_rng(seed)
    batches: list[np.ndarray] = []
    for size in batch_sizes(resamples, n):
        picks = rng.integers(0, n, size=(size, n)) + (np.arange(size) * n)[:, None]
        counts = np.bincount(picks.ravel(), minlength=size * n).reshape(size, n)
        batches.append(counts @ d / n)
    means = np.vstack(batches)
    observed = d.mean(axis=0)
    far = np.abs(means - observed) >= np.abs(observed) - _tolerance(d) / n
    p = (far.sum(axis=0) + 1) / (resamples + 1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail], axis=0)
    return p, low, high


def adjust(p_values: np.ndarray, method: str) -> np.ndarray:
    """p-values corrected for testing them together: Holm's step-down, Bonferroni, or none."""
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    if method == "none" or m == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, p * m)
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    adjusted = np.empty(m)
    adjusted[order] = stepped
    return adjusted


def paired_stats(diffs: np.ndarray, settings: StatSettings) -> PairedStats:
    """All three tests and the bootstrap interval for each column of `diffs`."""
    d = _columns(diffs)
    boot_p, low, high = bootstrap(d, settings.bootstrap, settings.seed, settings.confidence)
    return PairedStats(
        mean=d.mean(axis=0) if len(d) else np.zeros(d.shape[1]),
        t_p=t_test_p(d),
        randomization_p=randomization_p(d, settings.permutations, settings.seed),
        bootstrap_p=boot_p, ci_low=low, ci_high=high,
    )


def chosen_p(diffs: np.ndarray, settings: StatSettings) -> np.ndarray:
    """The p-values of `settings.test` alone for each column: a third of paired_stats' draws,
    for callers (such as a threshold sweep) that only need to know what is significant."""
    d = _columns(diffs)
    if settings.test == "t":
        return t_test_p(d)
    if settings.test == "randomization":
        return randomization_p(d, settings.permutations, settings.seed)
    return bootstrap(d, settings.bootstrap, settings.seed, settings.confidence)[0]

"""The statistics compare, lift, agree, sensitivity and estimate report, pinned where a mutation audit found them loose:
each test checks a value against an independent reference (scipy, scikit-learn, a loop over the same seeded draws, or a
hand computation written out here)."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from semrel.analysis import significance
from semrel.analysis.agreement import agreement, group_agreement, ranking_agreement
from semrel.analysis.compare import compare_evaluations, render_comparison
from semrel.analysis.lift import Latency, lift, render_lift, timed_latency
from semrel.analysis.ppi import ReviewedSample, corrected_estimates
from semrel.analysis.sensitivity import MAX_THRESHOLDS, sensitivity, threshold_grid
from semrel.analysis.significance import StatSettings, bootstrap, randomization_p, t_test_p
from semrel.errors import UsageError
from semrel.evaluation.measures import parse_measures
from semrel.evaluation.metrics import evaluate
from semrel.records import Judgment, Qrels, Run

FEW = StatSettings(permutations=200, bootstrap=200)


# ---------------------------------------------------------------- significance


def test_no_queries_are_no_evidence_in_every_test():
    """Zero differences to test (a family with no query): every p is 1 and the interval is the point 0, never 0 or nan."""
    empty = np.zeros((0, 3))
    assert randomization_p(empty, 100, seed=0).tolist() == [1.0, 1.0, 1.0]
    assert t_test_p(empty).tolist() == [1.0, 1.0, 1.0]
    p, low, high = bootstrap(empty, 100, seed=0, confidence=0.95)
    assert (p.tolist(), low.tolist(), high.tolist()) == ([1.0] * 3, [0.0] * 3, [0.0] * 3)


def test_sampled_randomization_p_is_hits_plus_one_of_the_seeded_sign_patterns():
    """40 queries (2**40 patterns) are sampled: p = (hits + 1) / (draws + 1) over the patterns numpy's default_rng(seed)
    draws, a hit being |sum of signed differences| >= |observed sum| (two-sided). The differences are eighths, exact in
    floating point, so the loop counts hits without any slack."""
    diffs = np.array([3, -1, 2, 0, 5, -4, 1, 1, -2, 3] * 4) / 8
    draws, seed = 3000, 5
    signs = np.random.default_rng(seed).integers(0, 2, size=(draws, len(diffs)), dtype=np.int8).astype(np.int64) * 2 - 1
    hits = sum(abs(sum(int(s) * d for s, d in zip(row, diffs))) >= abs(diffs.sum()) for row in signs)
    assert 50 < hits < draws - 50  # both outcomes occur: the count, not an edge, is checked
    assert randomization_p(diffs, draws, seed=seed)[0] == (hits + 1) / (draws + 1)
    one_sided = sum(sum(int(s) * d for s, d in zip(row, diffs)) >= diffs.sum() for row in signs)
    assert one_sided != hits


def test_draws_split_into_batches_count_each_draw_once(monkeypatch):
    """2,000 queries take the 5,000 draws in batches (2,000, 2,000, 1,000): the p-values and the interval equal those of
    one batch of all the draws, and p never passes 1 (all-zero differences: every draw is as far from 0)."""
    diffs = np.column_stack([np.random.default_rng(2).normal(0.01, 0.3, 2000), np.zeros(2000)])
    split = randomization_p(diffs, 5000, seed=1), bootstrap(diffs, 5000, seed=1, confidence=0.9)
    assert split[0][1] == 1.0 and split[1][0][1] == 1.0
    monkeypatch.setattr(significance, "_BATCH_CELLS", 10**9)
    whole = randomization_p(diffs, 5000, seed=1), bootstrap(diffs, 5000, seed=1, confidence=0.9)
    assert np.array_equal(split[0], whole[0])
    for found, expected in zip(split[1], whole[1]):
        assert np.array_equal(found, expected)


def test_every_sign_pattern_is_counted_in_batches(monkeypatch):
    """An exact test of 16 queries (65,536 patterns) enumerated in batches of a few thousand gives the p of a loop over
    every pattern: all 2^n rows at once took 2.2 GB for 22 queries, so --permutations 100000000 on 26 queries ran out
    of memory."""
    diffs = np.array([3, -1, 2, 0, 5, -4, 1, 1, -2, 3, 2, -3, 1, 4, -1, 2]) / 8  # eighths: sums are exact
    monkeypatch.setattr(significance, "_BATCH_CELLS", 50_000)  # 3,125 patterns a batch: 21 batches, the last short
    found = randomization_p(np.column_stack([diffs, np.zeros(16)]), 2**16, seed=0)
    n, observed = len(diffs), abs(diffs.sum())
    hits = sum(abs(sum((-1 if bits >> k & 1 else 1) * d for k, d in enumerate(diffs))) >= observed for bits in range(2**n))
    assert found.tolist() == [hits / 2**n, 1.0] and 0 < hits < 2**n


# ---------------------------------------------------------------- lift

LIFT_QRELS = Qrels.from_dict({q: {"r": 1} for q in ("a", "b", "c", "d")})


def _ranked(position: int) -> dict[str, float]:
    """A ranking with the relevant r at `position` (1-based) among fillers."""
    docs = [f"x{k}" for k in range(position - 1)] + ["r"]
    return {doc: float(len(docs) - k) for k, doc in enumerate(docs)}


def test_a_base_of_zero_has_no_relative_change():
    """The base finds no relevant document in its first place: P@1 0 -> 0.5 is no percentage (None, a blank cell), not
    +0%; RR's relative change is (r - b) / b."""
    base = Run.from_dict({q: _ranked(2) for q in "abcd"}, "base")
    reranked = Run.from_dict({q: _ranked(1 if q in "ab" else 2) for q in "abcd"}, "reranked")
    result = lift(LIFT_QRELS, base, reranked, ["P@1", "RR"], FEW)
    p1, rr = result.rows
    assert (p1.base, p1.reranked, p1.relative) == (0.0, 0.5, None)
    assert rr.relative == pytest.approx((0.75 - 0.5) / 0.5)
    table = render_lift(result, "csv")
    rows = list(csv.reader(io.StringIO(table)))
    assert rows[1][:5] == ["P@1", "0.0000", "0.5000", "0.5000", ""] and rows[2][4] == "+50.0%"


def test_a_change_of_a_ten_thousandth_is_a_win_not_a_tie():
    """Wins, ties and losses count queries whose change is above, exactly at and below 0: RR 1/100 -> 1/99 is a win."""
    base = Run.from_dict({"a": _ranked(100), "b": _ranked(1), "c": _ranked(3), "d": _ranked(2)}, "base")
    reranked = Run.from_dict({"a": _ranked(99), "b": _ranked(1), "c": _ranked(2), "d": _ranked(3)}, "reranked")
    (rr,) = lift(LIFT_QRELS, base, reranked, ["RR"], FEW).rows
    assert (rr.wins, rr.ties, rr.losses) == (2, 1, 1)


def test_latency_is_the_mean_of_the_timed_queries():
    """Means, not medians: base 10, 20 and 60 ms average 30 (median 20)."""
    timings = {"q1": (10.0, 50.0), "q2": (20.0, 100.0), "q3": (60.0, 90.0), "other": (1000.0, 1000.0)}
    assert timed_latency(timings, ["q1", "q2", "q3"]) == Latency(30.0, 80.0, 3)


def _lift_with(latency: Latency):
    base = Run.from_dict({q: _ranked(2) for q in "abcd"}, "base")
    reranked = Run.from_dict({q: _ranked(1 if q != "d" else 3) for q in "abcd"}, "reranked")
    return lift(LIFT_QRELS, base, reranked, ["RR"], FEW, latency=latency)


def test_a_reranker_exactly_as_fast_gets_no_change_per_ms_column_and_says_so():
    """No extra milliseconds: no change/ms column (its cells would all be blank) and the note says why."""
    text = render_lift(_lift_with(Latency(5.0, 5.0, None)), "table")
    assert "change/ms" not in text.splitlines()[0]
    assert "Latency per query: base 5.0 ms, reranked 5.0 ms (+0.0 ms; not slower: no change/ms)." in text


def test_change_per_ms_is_shown_to_three_significant_digits():
    """RR 0.5 -> 0.8333 (+1/3) for 100 extra ms: 0.00333 per ms; JSON keeps the full value."""
    result = _lift_with(Latency(20.0, 120.0, None))
    rows = list(csv.reader(io.StringIO(render_lift(result, "csv"))))
    assert rows[0][-1] == "change/ms" and rows[1][-1] == "0.00333"
    assert json.loads(render_lift(result, "json"))["measures"][0]["change_per_ms"] == pytest.approx((2.5 / 3 - 0.5) / 100)


# ---------------------------------------------------------------- agreement


@pytest.mark.parametrize("weights", ["none", "linear", "quadratic"])
def test_agreement_uses_the_weights_given(weights):
    """agreement(weights=...) is scikit-learn's kappa with those weights, not the default chosen from the labels."""
    rng = np.random.default_rng(6)
    a = rng.integers(0, 4, 80)
    b = np.clip(a + rng.integers(-2, 3, 80), 0, 3)
    result = agreement(a, b, weights, resamples=10)
    assert result.weights == weights
    assert result.kappa == pytest.approx(cohen_kappa_score(a, b, weights=None if weights == "none" else weights), abs=1e-12)


def test_no_pair_has_no_percent_agreement():
    """With no item, percent agreement is nan (0 of 0), as kappa and its interval, not 0%."""
    result = agreement([], [], labels=[0, 1], resamples=10)
    assert result.n == 0 and all(np.isnan(v) for v in (result.percent, result.kappa, result.low, result.high))


# ---------------------------------------------------------------- compare


def _compared(**settings):
    queries = [f"q{i}" for i in range(12)]
    qrels = Qrels.from_dict({q: {"r": 1} for q in queries})
    a = Run.from_dict({q: _ranked(2) for q in queries}, "a")
    b = Run.from_dict({q: _ranked(1 if i % 3 else 3) for i, q in enumerate(queries)}, "b")
    return compare_evaluations(evaluate(qrels, [a, b], parse_measures(["RR", "P@1"])), StatSettings(**settings))


def test_each_p_value_of_a_pair_is_its_own_test():
    """The pair's t, randomization and bootstrap p-values are scipy's ttest_rel, the exact randomization p and the
    bootstrap p of the same differences, each in its own field, and the detail table lists them in its header's order."""
    comparison = _compared(permutations=5000, bootstrap=3000, seed=4, confidence=0.9)
    rr = comparison.tests[0]
    a, b = comparison.evaluations
    diffs = b.values[rr.measure] - a.values[rr.measure]  # in the qrels' order of queries, as resampled
    assert sorted(diffs.tolist()) == pytest.approx([-1 / 6] * 4 + [0.5] * 8)
    assert rr.t_p == pytest.approx(stats.ttest_1samp(diffs, 0.0).pvalue, rel=1e-12)
    assert rr.randomization_p == randomization_p(diffs, 5000, seed=4)[0]  # 2**12 <= 5000: every pattern, exact
    p, low, high = bootstrap(diffs, 3000, seed=4, confidence=0.9)
    assert rr.bootstrap_p == p[0]  # the same draws: one matrix of resamples serves both measures' columns
    assert (rr.ci_low, rr.ci_high) == pytest.approx((low[0], high[0]), abs=1e-12)
    assert len({rr.t_p, rr.randomization_p, rr.bootstrap_p}) == 3
    rows = list(csv.reader(io.StringIO(render_comparison(comparison, "csv", detail=True))))
    assert rows[0] == ["measure", "run", "vs", "difference", "90% low", "90% high", "p t", "p randomization", "p bootstrap",
                       "p randomization (holm)", "significant"]
    assert [float(v) for v in rows[1][3:10]] == pytest.approx([rr.difference, rr.ci_low, rr.ci_high, rr.t_p, rr.randomization_p,
                                                               rr.bootstrap_p, rr.p], abs=5e-5)
    report = json.loads(render_comparison(comparison, "json"))
    assert report["tests"][0]["p_bootstrap"] == rr.bootstrap_p and report["tests"][0]["p_t"] == rr.t_p


# ---------------------------------------------------------------- rankings of tied runs

ULP_QUERIES = [f"q{i}" for i in range(7)]


def _run_placing(r_at: list[int], s_at: list[int], name: str) -> Run:
    """Seven documents a query, the documents r and s at the (1-based) places given for each query."""
    rows = {}
    for q, r, s in zip(ULP_QUERIES, r_at, s_at):
        docs = [f"x{k}" for k in range(7)]
        docs[r - 1], docs[s - 1] = "r", "s"
        rows[q] = {doc: float(7 - k) for k, doc in enumerate(docs)}
    return Run.from_dict(rows, name)


def test_runs_tied_under_both_qrels_are_not_swapped_by_rounding():
    """Under either qrels each run puts the relevant document once at each place 1..7, so each run's RR is the mean of
    1, 1/2, ..., 1/7 (0.370408...) under both: both qrels tie the runs (all_tie, tau nan as scipy's of constant values,
    no swap). numpy sums the seven values in the queries' order, so the means differ in the 17th digit, one way under
    the reference qrels and the other way under the qrels tested."""
    a = _run_placing([3, 1, 6, 5, 2, 7, 4], [2, 5, 3, 7, 1, 4, 6], "A")
    b = _run_placing([6, 3, 4, 2, 5, 7, 1], [2, 4, 7, 3, 1, 6, 5], "B")
    ref = Qrels.from_dict({q: {"r": 1} for q in ULP_QUERIES})
    test = Qrels.from_dict({q: {"s": 1} for q in ULP_QUERIES})
    (rr,) = ranking_agreement(ref, test, [a, b], ["RR"])
    exact = sum(1 / k for k in range(1, 8)) / 7
    assert [*rr.ref.values(), *rr.test.values()] == pytest.approx([exact] * 4, rel=1e-15)
    assert rr.swapped == [] and rr.all_tie and np.isnan(rr.tau)


def test_a_sweep_ties_runs_whose_values_differ_by_a_sums_rounding():
    """The same runs under a sweep: at R >= 0.8 only r is relevant and both runs' RR is the mean of 1, 1/2, ..., 1/7 in
    another order; the sweep orders them as equal ('A = B'), as the point where both r and s count orders them, while each
    value stays the one `semrel eval` prints for that run."""
    a = _run_placing([3, 1, 6, 5, 2, 7, 4], [2, 5, 3, 7, 1, 4, 6], "A")
    b = _run_placing([6, 3, 4, 2, 5, 7, 1], [2, 4, 7, 3, 1, 6, 5], "B")
    judgments = [Judgment(q, d, 0.5, r, 0.5, "pool") for q in ULP_QUERIES for d, r in (("r", 0.9), ("s", 0.5))]
    swept = sensitivity(judgments, [a, b], ["RR"], [0.4, 0.8], at=0.8)
    assert swept.values[1, 0, 0] == pytest.approx(swept.values[1, 1, 0], rel=1e-15)
    assert swept.values[1, 0, 0] == pytest.approx(sum(1 / k for k in range(1, 8)) / 7, rel=1e-15)
    assert swept.ranking(swept.values[1, :, 0]) == "A = B" and swept.ranking(swept.values[0, :, 0]) == "B > A"


# ---------------------------------------------------------------- assessor groups

ANN = {"q1": {"d1": 1, "d2": 0, "d3": 1, "d4": 0}, "q2": {"d1": 1, "d2": 1, "d3": 0, "d4": 0}}
BOB = {"q1": {"d1": 1, "d2": 1, "d3": 1, "d4": 0}, "q2": {"d1": 0, "d2": 1, "d3": 0, "d4": 0}}
LABELLED = {"q1": {"d1": 1, "d2": 0, "d3": 0, "d4": 0}, "q2": {"d1": 1, "d2": 1, "d3": 1, "d4": 0}}


def _flat(grades: dict) -> list[int]:
    return [grades[q][d] for q in sorted(grades) for d in sorted(grades[q])]


def test_lights_kappa_is_the_mean_of_the_assessor_pairs_that_share_pairs():
    """cat judged another query than ann and bob: ann-cat and bob-cat have no pair (nan) and Light's kappa is ann-bob's
    kappa alone, not nan."""
    cat = {"q9": {"d1": 1, "d2": 0}}
    groups = [(name, Qrels.from_dict(g)) for name, g in (("ann", ANN), ("bob", BOB), ("cat", cat))]
    result = group_agreement(groups, Qrels.from_dict(LABELLED))
    kappas = {(f, s): a.kappa for f, s, a in result.between}
    assert np.isnan(kappas["ann", "cat"]) and np.isnan(kappas["bob", "cat"])
    assert result.between_mean == pytest.approx(cohen_kappa_score(_flat(ANN), _flat(BOB)), abs=1e-12)


def test_assessor_groups_are_bootstrapped_with_the_seed_given():
    """`agree --groups --seed S`: every interval (each assessor, the majority, the pairs of assessors) is the one
    agreement() draws with seed S."""
    groups = [("ann", Qrels.from_dict(ANN)), ("bob", Qrels.from_dict(BOB))]
    result = group_agreement(groups, Qrels.from_dict(LABELLED), seed=7)
    for name, grades in (("ann", ANN), ("bob", BOB)):
        (found,) = [a for group, a in result.each if group == name]
        expected = agreement(_flat(grades), _flat(LABELLED), seed=7)
        assert (found.low, found.high) == (expected.low, expected.high)
    ((_, _, between),) = result.between
    assert (between.low, between.high) == (agreement(_flat(ANN), _flat(BOB), seed=7).low, agreement(_flat(ANN), _flat(BOB), seed=7).high)
    assert (between.low, between.high) != (agreement(_flat(ANN), _flat(BOB), seed=0).low, agreement(_flat(ANN), _flat(BOB), seed=0).high)


def test_lift_json_gives_the_bootstrap_interval_and_p_of_the_per_query_changes():
    """The JSON's ci is [low, high] of the seeded bootstrap of the per-query RR changes, p the test chosen: each the
    value significance computes for those changes, not the change itself standing in for an end."""
    base = Run.from_dict({q: _ranked(2) for q in "abcd"}, "base")
    reranked = Run.from_dict({"a": _ranked(1), "b": _ranked(1), "c": _ranked(3), "d": _ranked(4)}, "reranked")
    settings = StatSettings(test="bootstrap", bootstrap=999, seed=3, confidence=0.8)
    report = json.loads(render_lift(lift(LIFT_QRELS, base, reranked, ["RR"], settings), "json"))
    diffs = np.array([0.5, 0.5, 1 / 3 - 0.5, 0.25 - 0.5])  # a, b, c, d: the qrels' order
    p, low, high = bootstrap(diffs, 999, seed=3, confidence=0.8)
    (rr,) = report["measures"]
    assert rr["change"] == pytest.approx(diffs.mean()) and rr["p"] == p[0]
    assert rr["ci"] == pytest.approx([low[0], high[0]], abs=1e-12) and low[0] < rr["change"] < high[0]
    assert report["settings"] == {"test": "bootstrap", "alpha": 0.05, "permutations": 10000, "bootstrap": 999, "confidence": 0.8,
                                  "seed": 3}


def test_lift_json_counts_the_rows_and_the_queries_outside_the_base_runs_top():
    """Two new documents in query a (and none elsewhere): 2 rows outside, in 1 query, of the reranked run's 7."""
    base = Run.from_dict({q: _ranked(2) for q in "abcd"}, "base")
    reranked = Run.from_dict({**{q: _ranked(1) for q in "bcd"}, "a": {"r": 4.0, "x0": 3.0, "new1": 2.0, "new2": 1.0}}, "reranked")
    report = json.loads(render_lift(lift(LIFT_QRELS, base, reranked, ["RR"], FEW), "json"))
    assert report["reorder_check"] == {"depth": 2, "documents": 7, "outside": 2, "queries_outside": 1}


def test_assessors_of_several_scales_are_compared_on_the_widest_of_theirs_against_the_labels():
    """ann grades 0-1 and bob 0-3; the labels grade 0-2: the assessors' scale is 0-3 (the widest), so all are compared on
    0-2, bob's 3 counting as 2 (ann's grades unchanged), quadratic kappa as scikit-learn's; not on ann's 0-1."""
    ann = {"q1": {"d1": 1, "d2": 0, "d3": 1, "d4": 0, "d5": 1}}
    bob = {"q1": {"d1": 3, "d2": 0, "d3": 2, "d4": 1, "d5": 3}}
    labels = {"q1": {"d1": 2, "d2": 0, "d3": 1, "d4": 1, "d5": 2}}
    heard: list[str] = []
    result = group_agreement([("ann", Qrels.from_dict(ann)), ("bob", Qrels.from_dict(bob))], Qrels.from_dict(labels), warn=heard.append)
    assert heard == ["the assessors grade up to 3 and the labels up to 2: compared on grades 0-2, a grade above 2 counting as 2"]
    (_, on_ann), (_, on_bob) = result.each
    assert on_bob.kappa == pytest.approx(cohen_kappa_score([2, 0, 2, 1, 2], _flat(labels), weights="quadratic"), abs=1e-12)
    assert on_ann.kappa == pytest.approx(cohen_kappa_score(_flat(ann), _flat(labels), weights="quadratic"), abs=1e-12)


def test_agreement_json_names_its_fields():
    """What `agree -f json` prints for the labels: the field names readers (report --agreement) look up."""
    a, b = [0, 1, 1, 0, 1], [0, 1, 0, 0, 1]
    result = agreement(a, b, resamples=50, seed=1)
    assert result.to_json() == {"n": 5, "percent_agreement": 80.0, "kappa": pytest.approx(cohen_kappa_score(a, b)),
                                "kappa_low": result.low, "kappa_high": result.high, "weights": "none", "labels": [0, 1],
                                "confusion": [[2, 0], [1, 2]]}


# ---------------------------------------------------------------- sensitivity


def test_a_grid_of_exactly_the_most_thresholds_is_allowed():
    """MAX_THRESHOLDS (2,001) thresholds, 0 to 2 by 0.001, are allowed; one more step is refused, naming the count."""
    grid = threshold_grid(0.0, 2.0, 0.001)
    assert len(grid) == MAX_THRESHOLDS == 2001 and (grid[0], grid[1000], grid[-1]) == (0.0, 1.0, 2.0)
    with pytest.raises(UsageError, match=r"^2002 thresholds from 0 to 2.001 by 0.001; at most 2001: give a larger step=$"):
        threshold_grid(0.0, 2.001, 0.001)


# ---------------------------------------------------------------- estimate (prediction-powered inference)


def test_a_sample_larger_than_the_pool_given_is_a_whole_pool_review():
    """Three reviewed pairs of a pool said to hold two: the pool is taken as the three (every pair reviewed), so the
    estimate is P@2 on the human grades, (0/2 + 1/2) / 2 = 0.25, with an interval of zero width: scaling the changes to
    a pool of 2 gave 1/3 instead."""
    qrels = Qrels.from_dict({"a": {"x": 1, "y": 0}, "b": {"x": 1}})
    run = Run.from_dict({"a": {"x": 2.0, "y": 1.0}, "b": {"x": 2.0, "z": 1.0}}, "run")
    human = Qrels.from_dict({"a": {"x": 0, "y": 0}, "b": {"x": 1}})
    (estimate,) = corrected_estimates(qrels, [run], ["P@2"], ReviewedSample({("a", "x"): 0, ("a", "y"): 0, ("b", "x"): 1}, pool=2))
    assert evaluate(human, [run], parse_measures(["P@2"]))[0].aggregate("P@2") == 0.25
    assert (estimate.derived, estimate.corrected, estimate.low, estimate.high) == pytest.approx((0.5, 0.25, 0.25, 0.25), abs=1e-12)
    assert (estimate.sampled, estimate.changed, estimate.pool) == (3, 1, 3)


def test_headers_and_messages_name_the_confidence_level_asked_for():
    """A 97.5% interval is headed 97.5%, and a 99.9% bound is no '100%' (which no finite interval is): whole percents
    had rounded both, in compare's detail table, lift's table and estimate's warning."""
    compared = _compared(permutations=200, bootstrap=200, confidence=0.975)
    rows = list(csv.reader(io.StringIO(render_comparison(compared, "csv", detail=True))))
    assert rows[0][4:6] == ["97.5% low", "97.5% high"]
    # the intervals are uncorrected where 'significant' is corrected: a report's reader saw one leave out 0 beside "no"
    assert render_comparison(compared, "table").rstrip().endswith(
        "The paired tests' 97.5% intervals are the bootstrap's percentiles of the mean difference, uncorrected: near the "
        "threshold one can leave out 0 where the test is not significant.")
    base = Run.from_dict({q: _ranked(2) for q in "abcd"}, "base")
    lifted = lift(LIFT_QRELS, base, base, ["RR"], StatSettings(permutations=200, bootstrap=200, confidence=0.999))
    assert next(csv.reader(io.StringIO(render_lift(lifted, "csv"))))[5:7] == ["99.9% low", "99.9% high"]
    truth = {q: {"r": 1, "x0": 0} for q in "abcd"}
    heard: list[str] = []
    corrected_estimates(Qrels.from_dict(truth), [base], ["P@1"], ReviewedSample({(q, "r"): 1 for q in "abc"}, 8), confidence=0.999,
                        warn=heard.append)
    assert any("(99.9% bound)" in line for line in heard), heard

"""Behaviour of the measures, z-scores and trec_eval names that the suite replay and the random comparisons
with pytrec_eval leave open: gain tables (which trec_eval applies to its own relevance values, where a
document with a negative grade is RELVALUE_UNJUDGED and one not in the qrels RELVALUE_NONPOOL), RBP's
scaling of gains into [0, 1] and its residual, measures pytrec_eval lacks or cannot parameterise (nDCG@k
with gains, set_F's beta, relstring above 8), 11pt_avg's order of summation, Rndcg at a relevance level no
document reaches, -Z's divisions, the names and order trec_eval prints, how -m values are split and parsed,
and the 'all' row and range of a measure.

Each expected value is trec_eval 10's (its m_*.c and convert_zscores.c, read by hand: the arithmetic is
in the comments) or pytrec_eval's where it has the measure. A mutation audit of measures.py, zscores.py,
groups.py and render.py found each case unpinned: each test's docstring names the mutation it catches.
It also found two places where semrel differed from trec_eval, fixed since: a gain for level -1 (documents
not in the qrels) and -Z values trec_eval cannot standardise.
"""

from __future__ import annotations

import math

import pytest
import pytrec_eval
from test_trec_measures_reference import _compare, _one, trec_eval_9_rounding

from semrel.errors import UsageError
from semrel.evaluation.measures import Measure, parse_measure, parse_measures, split_names, trec_order
from semrel.evaluation.metrics import evaluate
from semrel.evaluation.zscores import standardise
from semrel.records import Qrels, Run


def _value(name: str, qrels: dict, run: dict, **options) -> float:
    return _one(name, Qrels.from_dict(qrels), Run.from_dict(run), **options)


# ---- gain tables ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["nDCG(gains={-1: 5})", "ndcg.-1=5"])
def test_a_gain_table_gives_no_gain_to_a_document_left_unjudged_in_the_pool(name):
    """trec_eval looks a retrieved document's gain up by its relevance value, and a document whose grade is
    negative has the value RELVALUE_UNJUDGED (-2), not its grade: `-1=5` does not reach it (mutant: row_gains
    without `r.assessed`). a (grade -1) gains 0, b (grade 1) gains 1 at rank 2; the ideal is b alone."""
    assert _value(name, {"q": {"a": -1, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}}) == pytest.approx(1 / math.log2(3))


def test_a_gain_for_level_minus_one_reaches_documents_not_in_the_qrels_as_in_trec_eval():
    """m_ndcg.c's get_gain looks up each retrieved document's relevance value, RELVALUE_NONPOOL (-1) for one not in
    the qrels, so `-1=1` gives it gain 1 (semrel scored only the qrels' documents and gave it 0: 0.6309)."""
    # n (not in the qrels) at rank 1 gains 1 / log2(2) = 1, a at rank 2 gains 1 / log2(3); the ideal is a alone (1):
    # the -1 level has no documents in the qrels, so it adds nothing to the ideal
    assert _value("ndcg.-1=1", {"q": {"a": 1}}, {"q": {"n": 2.0, "a": 1.0}}) == pytest.approx(1 + 1 / math.log2(3))
    # ndcg_rel (m_ndcg_rel.c): a point at each document of positive gain, n, a and m, of DCG 1, 1.6309, 2.1309 over
    # the ideal's 1; then (num_rel 1 - 3 points) x 2.1309: (4.7619 - 4.2619) / 1
    run = {"q": {"n": 3.0, "a": 2.0, "m": 1.0}}
    assert _value("ndcg_rel.-1=1", {"q": {"a": 1}}, run) == pytest.approx(0.5)
    assert _value("ndcg.-1=0", {"q": {"a": 1}}, run) == pytest.approx(1 / math.log2(3))  # a gain of 0: as without


@pytest.mark.parametrize("family", ["ndcg", "ndcg_rel", "Rndcg", "G", "rbp"])
@pytest.mark.parametrize("gain", [2.0, -0.5])
def test_documents_not_in_the_qrels_gain_by_key_minus_one_as_pool_documents_of_a_negative_grade_by_minus_two(family, gain):
    """trec_eval gives a document not in the qrels the value -1 and one listed with a negative grade -2; neither is
    in the ideal. So the same ranking scores alike whether its other documents are missing from the qrels and the
    table gives -1 a gain, or listed with grade -1 and the table gives -2 that gain: the ranks semrel adds for the
    first (Ranked.with_unlisted) stand where the second's rows stand."""
    qrels = {"q": {"a": 2, "b": 1, "c": 1}, "r": {"d": 1}}
    run = {"q": {"n1": 9.0, "a": 8.0, "n2": 7.0, "n3": 6.0, "c": 5.0, "n4": 4.0}, "r": {"n5": 2.0, "d": 1.0}}
    listed = {q: {**docs, **{d: -1 for d in run[q] if d not in docs}} for q, docs in qrels.items()}
    unlisted = _value(f"{family}.-1={gain:g},1=3", qrels, run)
    assert unlisted == pytest.approx(_value(f"{family}.-2={gain:g},1=3", listed, run))
    assert unlisted != pytest.approx(_value(f"{family}.1=3", qrels, run))  # the key moved the value


def test_ndcg_with_gains_cuts_the_ideal_ranking_at_k():
    """nDCG(gains=...)@k: trec_eval has no such measure (ndcg_cut takes no gains), so by hand as nDCG@k: the
    ideal too is cut at k (mutant: the ideal kept through position k, one too many)."""
    qrels, run = {"q": {"a": 2, "b": 1, "c": 1}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}
    # gains 2 -> 9, 1 -> 3: the run is a (9), x (0), b (3); the ideal a (9), b (3), c (3)
    assert _value("nDCG(gains={1: 3, 2: 9})@1", qrels, run) == 1.0
    assert _value("nDCG(gains={1: 3, 2: 9})@2", qrels, run) == pytest.approx(9 / (9 + 3 / math.log2(3)))


def test_g_charges_at_least_one_a_rank_when_ideal_gains_are_below_one():
    """m_G.c: sum_cost grows by max(ideal gain, 1) a rank (min_cost 1.0). With gains of 0.5 the cost is the
    rank itself (mutant: ideal gains below 1 lowering the cost). Level 0 gains -1 so that trec_eval's
    integer comparison of gains (0.5 - 0 truncates to 0) cannot reorder the levels."""
    qrels, run = {"q": {"a": 1, "b": 1, "x": 0}}, {"q": {"a": 2.0, "b": 1.0}}
    # rank 1: cost 1, run's gain so far 0.5 -> 0.5 / log2(2 + 1 - 0.5); rank 2: cost 2, gain 1 -> 0.5 / log2(2 + 2 - 1);
    # over the ideal's total gain, 0.5 + 0.5
    expected = 0.5 / math.log2(2.5) + 0.5 / math.log2(3)
    assert _value("G(gains={0: -1, 1: 0.5})", qrels, run) == pytest.approx(expected)
    assert _value("G.0=-1,1=0.5", qrels, run) == pytest.approx(expected)


def test_ndcg_rel_of_a_negative_sum_is_zero():
    """m_ndcg_rel.c sets the value only `if (sum > 0.0)` (mutant: a negative sum divided by the relevant count)."""
    qrels = {"q": {"a": 1, "x": 0}}
    # x (gain -1) at rank 1, a at rank 2: the DCG at a is -1 + 1 / log2(3) < 0 over the ideal's 1
    assert _value("ndcg_rel.0=-1", qrels, {"q": {"x": 2.0, "a": 1.0}}) == 0.0
    assert _value("ndcg_rel.0=-1", qrels, {"q": {"a": 2.0, "x": 1.0}}) == 1.0  # a first: DCG 1 over 1


# ---- RBP's gains scaled into [0, 1] ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["RBP(p=0.5, gains={0: -1})", "rbp.p=0.5,0=-1"])
def test_rbp_scales_a_negative_gain_and_leaves_unjudged_documents_at_zero(name):
    """m_rbp.c scales every gain of the table to (gain - min) / (max - min) when min < 0 or max > 1 (mutant: only
    when max > 1), and a document with a negative grade (RELVALUE_UNJUDGED) is not in the table: it gains 0,
    unscaled (mutant: scaled to (0 - min) / (max - min) = 0.5)."""
    qrels, run = {"q": {"a": 1, "x": 0, "u": -1}}, {"q": {"u": 3.0, "a": 2.0, "x": 1.0}}
    # gains -1 (grade 0) and 1 (grade 1) scale to 0 and 1: u 0, a 1 x 0.5, x 0; (1 - 0.5) x 0.5
    assert _value(name, qrels, run) == pytest.approx(0.25)


def test_rbp_counts_a_gain_given_for_a_negative_level_in_its_scale():
    """The gains of levels below 0 (`-1=5`) are in the table whose min and max m_rbp.c scales by (mutant: only
    levels below -1 counted), though no document of the qrels has such a gain."""
    # gains 0 (grade 0), 1 (grade 1), 5 (level -1): max 5 > 1, so a gains 1 / 5; (1 - 0.5) x 0.2
    assert _value("RBP(p=0.5, gains={-1: 5})", {"q": {"a": 1, "x": 0}}, {"q": {"a": 2.0, "x": 1.0}}) == pytest.approx(0.1)


# ---- measures pytrec_eval lacks or cannot parameterise, by hand -------------------------------------------------


def test_rbp_residual_counts_a_document_left_unjudged_in_the_pool():
    """m_rbp_resid.c counts every retrieved document whose relevance value is below 0: not in the qrels, and in
    them with a negative grade (RELVALUE_UNJUDGED) too (mutant: only those not in the qrels, leaving 0 here)."""
    # a judged at rank 1, u (grade -1) at rank 2: p^2 (the tail) + (1 - p) p^1, p = 0.9
    assert _value("rbp_resid", {"q": {"a": 1, "u": -1}}, {"q": {"a": 2.0, "u": 1.0}}) == pytest.approx(0.81 + 0.1 * 0.9)


def test_relstring_prints_nine_as_a_digit_and_above_nine_as_greater_than():
    """m_relstring.c: `rel > 9` prints '>', 0..9 the digit (mutant: 9 printed as '>')."""
    qrels, run = {"q": {"a": 9, "b": 10, "c": 0}}, {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "n": 1.0}}
    assert _value("relstring", qrels, run) == "9>0-"


def test_set_f_weighs_recall_by_beta_as_trec_eval():
    """m_set_F.c: (x + 1) P R / (R + x P), x the parameter (mutant: van Rijsbergen's beta squared)."""
    qrels, run = {"q": {"a": 1, "b": 1, "c": 1, "d": 1}}, {"q": {"a": 2.0, "x": 1.0}}
    # P = 1/2, R = 1/4: 3 x 1/8 / (1/4 + 2 x 1/2) = 0.3 (beta squared: 5/8 / 2.25 = 0.2778)
    assert _value("SetF(beta=2)", qrels, run) == pytest.approx(0.3)
    assert _value("SetF", qrels, run) == pytest.approx(2 * 0.125 / 0.75)


def test_set_f_is_named_set_f_for_the_default_beta_only():
    """set_F with beta 1 given is trec_eval's default set_F (mutant: named set_F_1)."""
    names = [parse_measure(text).trec_name for text in ("SetF", "SetF(beta=1)", "SetF(beta=1.0)", "SetF(beta=2)", "SetF(beta=0.5)")]
    assert names == ["set_F", "set_F", "set_F", "set_F_2", "set_F_0.5"]


def test_eleven_point_average_adds_from_the_highest_recall_point_down_as_trec_eval():
    """m_11pt_avg.c adds the interpolated precisions from the last recall point to the first; in this
    ranking the two orders of addition round apart, and pytrec_eval's value is the one from the top down
    (mutant: added from recall 0 up). R = 5, where trec_eval 9's and 10's rounding of recall points agree. A
    second query makes the points a matrix whose rows numpy adds one after another; a single column it adds
    pairwise, which here rounds as trec_eval's order does whichever way round the points are given."""
    qrels = {"q": dict.fromkeys(["d0", "d11", "d3", "d7", "d8"], 1), "r": {"d1": 1}}
    order = ["d8", "d3", "d5", "d10", "d11", "d6", "d7", "d2", "d0", "d1"]
    run = {"q": {d: float(len(order) - i) for i, d in enumerate(order)}, "r": {"d1": 1.0}}
    points = [_value(f"IPrec@{p / 10:g}", qrels, run) for p in range(11)]
    assert sum(points) / 11 != sum(reversed(points)) / 11  # the case needs the orders to differ
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"11pt_avg"}).evaluate(run)["q"]["11pt_avg"]
    assert _value("11pt_avg", qrels, run) == expected == sum(reversed(points)) / 11
    with trec_eval_9_rounding():
        assert _value("11pt_avg", qrels, run) == expected


def test_rndcg_is_zero_where_no_document_reaches_the_relevance_level():
    """m_Rndcg.c returns 0 when num_rel (at -l) is 0, though gains count every grade (mutant: scored on the
    gains alone). pytrec_eval agrees; by hand: at -l 2 the grade-1 document a is not relevant."""
    qrels, run = {"q": {"a": 1, "x": 0}, "r": {"b": 2}}, {"q": {"a": 1.0}, "r": {"b": 1.0}}
    _compare(qrels, run, 2, names=("Rndcg",))
    assert _value("Rndcg", qrels, run, rel_level=2) == 0.0
    assert _value("Rndcg", qrels, run, rel_level=1) == 1.0  # a first: the run's DCG is the ideal's at each point


def test_utility_refuses_other_than_four_coefficients():
    """utility.a,b,c,d: three coefficients are refused when parsed (mutant: only more than four, and three
    failed later, when evaluated, with a traceback)."""
    for text in ("utility.1,-1,0", "utility.1,-1,0,0,2"):
        with pytest.raises(UsageError, match="utility takes four coefficients"):
            parse_measure(text)


def test_trec_order_puts_parameters_in_ascending_order_whatever_order_they_were_named():
    """trec_eval prints a measure's parameter values ascending (out.test.meas_params: .10 before .50 though .75
    was given before .50); semrel does so for measures named one by one too (mutant: in the order named)."""
    named = parse_measures(["IPrec@0.5", "IPrec@0.1", "Rprec_mult@2", "Rprec_mult@0.4"])
    assert [m.trec_name for m in trec_order(named)] == [
        "iprec_at_recall_0.10",
        "iprec_at_recall_0.50",
        "Rprec_mult_0.40",
        "Rprec_mult_2.00",
    ]


def test_rbp_given_parameters_is_named_with_them_as_trec_eval_prints_them():
    """trec_eval prints a measure given parameters as name_PARAMS, the text as typed (utility_2,-1,0,0 and
    ndcg_1=3,2=9,4=4.5 in out.test.meas_params): rbp.p=0.8 is rbp_p=0.8, not rbp (mutant), which is p = 0.9."""
    assert [parse_measure(text).trec_name for text in ("rbp", "rbp.p=0.8", "rbp.p=0.8,2=3", "RBP(p=0.9)")] == [
        "rbp",
        "rbp_p=0.8",
        "rbp_p=0.8,2=3",
        "rbp",
    ]


def test_a_comma_parts_trec_eval_parameters_from_the_next_name():
    """A piece after a comma that starts with a number or p= carries the previous name's parameters; 11pt_avg,
    though it starts with a digit, is a name of its own (mutants: 11pt_avg glued to P.5's cutoffs; p=0.8
    taken for a name)."""
    assert split_names("P.5,10,11pt_avg,rbp.1=3,p=0.8") == ["P.5,10", "11pt_avg", "rbp.1=3,p=0.8"]
    assert parse_measures("P.5,11pt_avg,rbp.1=3,p=0.8") == [
        Measure("P", 5),
        Measure("11pt_avg"),
        Measure("RBP", None, (("p", 0.8), ("gains", ((1, 3.0),)))),
    ]


def test_a_measure_built_with_a_boolean_cutoff_is_refused():
    """True is an int to Python, but P@True is no cutoff (mutant: accepted)."""
    with pytest.raises(UsageError, match="the cutoff must be a whole number, got True"):
        parse_measures([Measure("P", True)])


def test_the_range_of_a_share_is_unknown_once_gains_are_given():
    """Measure.bounds, which analysis/ppi.py clips its estimates and intervals to: [0, 1] for a share with its default gains, none
    once gains are given (a negative gain takes nDCG below 0; mutant: [0, 1] still), [0, inf) for counts."""
    assert parse_measure("nDCG@10").bounds == (0.0, 1.0)
    assert parse_measure("nDCG(gains={0: -1})").bounds is None
    assert parse_measure("ndcg.0=-1").bounds is None
    assert parse_measure("NumRet").bounds == (0.0, float("inf")) and parse_measure("utility").bounds is None
    # the reason: x (grade 0, gain -1) first, a second: -1 + 1 / log2(3) over the ideal's 1
    assert _value("ndcg.0=-1", {"q": {"a": 1, "x": 0}}, {"q": {"x": 2.0, "a": 1.0}}) == pytest.approx(-1 + 1 / math.log2(3))


def test_the_all_row_of_no_scored_query_is_zero():
    """Without -c (complete=False) a run that shares no query with the qrels scores no query: the 'all' row of a
    mean is 0, as of a sum or a geometric mean, not the nan of numpy's mean of nothing (mutant: mean without
    its guard)."""
    (result,) = evaluate(
        Qrels.from_dict({"q1": {"a": 1}}), Run.from_dict({"q2": {"a": 1.0}}), parse_measures(["AP", "gm_map", "NumQ"]), complete=False
    )
    assert result.aggregates() == {"AP": 0.0, "gm_map": 0.0, "NumQ": 0.0}


# ---- -Z ----------------------------------------------------------------------------------------------------------


def _p5():
    qrels = Qrels.from_dict({"q": {"a": 1, "b": 1, "x": 0}})
    run = Run.from_dict({"q": {"a": 3.0, "x": 2.0, "b": 1.0}})
    (result,) = evaluate(qrels, run, [parse_measure("P@5")])
    return result  # P@5 = 2/5


def test_zscores_divide_by_a_negative_standard_deviation_as_trec_eval():
    """convert_zscores.c divides wherever the deviation is not 0 (mutant: only where it is above 0)."""
    result = standardise(_p5(), {("q", "P_5"): (0.1, -0.5)})
    assert result.per_query("P@5") == {"q": pytest.approx((0.4 - 0.1) / -0.5)}
    assert result.aggregate("P@5") == pytest.approx(-0.6)


@pytest.mark.parametrize("zscores", [{}, {("q", "P_5"): (0.1, 0.0)}], ids=["no line", "deviation 0"])
def test_zscores_of_values_trec_eval_cannot_standardise(zscores):
    assert standardise(_p5(), zscores).per_query("P@5") == {"q": -1000000.0}

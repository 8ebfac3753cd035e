"""The measures and options semrel took from trec_eval equal trec_eval (pytrec_eval) per query and in the
'all' row, on random collections: ties, graded and negative grades, queries missing on either side.

pytrec_eval is trec_eval 9; semrel follows trec_eval 10, which differs in one rule: a recall point
(IPrec, 11pt_avg) needs point x R relevant documents rounded half up (lround), where trec_eval 9 added
0.9 and truncated. These tests switch semrel to trec_eval 9's rule to compare with pytrec_eval; the
trec_eval 10 rule is what trec_eval's own test outputs need (test_trec_eval_suite.py) and is
checked by hand below. Measures pytrec_eval lacks or cannot take parameters for (rbp, rbp_resid, unj,
relstring, runid, utility's coefficients, ndcg's gains, -M, -N) are checked by hand and by the suite.
"""

from __future__ import annotations

import contextlib
import json
import math
import random
from unittest import mock

import numpy as np
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from random_collections import collections
from semrel.evaluation import measures, metrics
from semrel.evaluation.measures import parse_measure, parse_measures
from semrel.evaluation.metrics import evaluate
from semrel.formats.trec import ranked
from semrel.records import Qrels, Run

# semrel name: pytrec_eval measure (its output key is the name with "." -> "_", fractions as %.2f)
TREC = {
    "Bpref": "bpref", "infAP": "infAP", "gm_map": "gm_map", "gm_bpref": "gm_bpref",
    "IPrec@0": "iprec_at_recall.0.0", "IPrec@0.1": "iprec_at_recall.0.1", "IPrec@0.25": "iprec_at_recall.0.25",
    "IPrec@0.5": "iprec_at_recall.0.5", "IPrec@1": "iprec_at_recall.1.0", "11pt_avg": "11pt_avg",
    "Rprec_mult@0.2": "Rprec_mult.0.2", "Rprec_mult@1.4": "Rprec_mult.1.4", "Rprec_mult@2": "Rprec_mult.2.0",
    "SetP": "set_P", "SetP(relative=True)": "set_relative_P", "SetR": "set_recall", "SetAP": "set_map",
    "SetF": "set_F", "relative_P@3": "relative_P.3", "relative_P@10": "relative_P.10", "utility": "utility",
    "G": "G", "binG": "binG", "Rndcg": "Rndcg", "ndcg_rel": "ndcg_rel", "num_nonrel_judged_ret": "num_nonrel_judged_ret",
    "Success@3": "success.3",
    # the measures semrel had, under the options added with these (-J, --no-complete)
    "nDCG": "ndcg", "nDCG@3": "ndcg_cut.3", "AP": "map", "AP@5": "map_cut.5", "P@5": "P.5", "R@3": "recall.3",
    "RR": "recip_rank", "Rprec": "Rprec", "NumRet": "num_ret", "NumRel": "num_rel", "NumRelRet": "num_rel_ret",
}


def _key(trec: str) -> str:
    base, _, param = trec.partition(".")
    if not param:
        return base
    return f"{base}_{float(param):.2f}" if base in ("iprec_at_recall", "Rprec_mult") else f"{base}_{param}"


@contextlib.contextmanager
def trec_eval_9_rounding():
    saved = measures.TREC_EVAL_9_ROUNDING
    measures.TREC_EVAL_9_ROUNDING = True
    try:
        yield
    finally:
        measures.TREC_EVAL_9_ROUNDING = saved


def _compare(qrels, run, level, *, judged_only=False, complete=True, depth=None, names=tuple(TREC), interleaved=False,
             segment_rows=metrics.SEGMENT_ROWS):
    """semrel against pytrec_eval; `interleaved`: the run's rows shuffled across queries (its queries not in
    blocks); `segment_rows`: the rows semrel joins together (small: each query a segment of its own)."""
    chosen = parse_measures(list(names))
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    if interleaved:
        random.Random(len(rows)).shuffle(rows)
    ours = Run.from_columns(*map(list, zip(*rows))) if rows else Run.from_dict(run)
    with trec_eval_9_rounding(), mock.patch.object(metrics, "SEGMENT_ROWS", segment_rows):
        (result,) = evaluate(Qrels.from_dict(qrels), ours, chosen, rel_level=level,
                             judged_only=judged_only, complete=complete, depth=depth)
    reference_run = {q: d for q, d in run.items() if d}
    if depth is not None:  # -M: trec_eval's own top `depth` of each query, as pytrec_eval has no -M
        ordered = ranked(Run.from_dict(reference_run))
        reference_run = {}
        for q, d, s in zip(ordered.query_ids.to_pylist(), ordered.doc_ids.to_pylist(), ordered.scores.tolist()):
            if len(reference_run.setdefault(q, {})) < depth:
                reference_run[q][d] = s
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {TREC[n] for n in names}, relevance_level=level,
                                               judged_docs_only_flag=judged_only)
    reference = evaluator.evaluate(reference_run)
    for name, m in zip(names, chosen):
        key = _key(TREC[name])
        geometric = name.startswith("gm_")
        per_query = result.per_query(m)
        expected_values = []
        for q in qrels:
            if q not in reference:
                assert complete is (q in per_query), (name, q)
                if complete:  # semrel -c: a query the run lacks scores as an empty ranking
                    expected_values.append(per_query[q])
                continue
            expected = reference[q][key]
            if geometric:  # trec_eval keeps log(max(value, 0.00001)) per query; semrel the value itself
                expected, ours = expected, math.log(max(per_query[q], measures.MIN_GEO_MEAN))
            else:
                ours = per_query[q]
            if math.isnan(expected) and (name.startswith("IPrec") or name == "11pt_avg"):
                # trec_eval 9 divides 0 by 0 for a ranking left empty by -J; semrel scores it as the empty
                # ranking trec_eval 10 scores for a missing query (0), as in trec_eval's out.test.aqc
                assert ours == 0.0, (name, q)
                expected = 0.0
            assert ours == pytest.approx(expected, abs=1e-9), (name, q, ours, expected)
            expected_values.append(math.exp(expected) if geometric else expected)
        if not expected_values:
            continue
        if m.summed:
            expected_all = sum(expected_values)
        elif geometric:
            expected_all = math.exp(sum(math.log(max(v, 1e-5)) for v in expected_values) / len(expected_values))
        else:
            expected_all = sum(expected_values) / len(expected_values)
        assert result.aggregate(m) == pytest.approx(expected_all, abs=1e-9), name
    assert set(result.missing_queries) == set(qrels) - set(reference_run)


@pytest.mark.slow
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_trec_eval_measures_equal_pytrec_eval(data):
    _compare(*data)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_judged_only_equals_trec_eval_J(data):
    _compare(*data, judged_only=True, interleaved=True, segment_rows=3)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections(), st.sampled_from([1, 2, 3, 5]))
def test_depth_equals_trec_eval_M(data, depth):
    _compare(*data, depth=depth, segment_rows=4)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_no_complete_averages_over_the_queries_both_sides_have(data):
    """trec_eval without -c: the 'all' row is over the queries in both the qrels and the run."""
    _compare(*data, complete=False, interleaved=True)


def test_one_case_of_each_check_runs_quickly():
    """The property tests above are slow; one fixed collection keeps the comparison in the quick loop."""
    qrels = {"q1": {"d1": 2, "d2": 0, "d3": 1, "d4": -1, "d10": 1, "d9": 0}, "q2": {"d1": 1, "d5": 0}, "q3": {"d2": 1}}
    run = {"q1": {"d1": 0.5, "d2": 0.9, "d5": 0.7, "d4": 0.9, "d3": 0.1, "d9": 0.1, "d10": 0.1}, "q2": {"d7": 1.0, "d1": 0.5},
           "q9": {"d1": 1.0}}
    for options in ({}, {"judged_only": True}, {"depth": 3}, {"complete": False}):
        _compare(qrels, run, 1, **options)
    _compare(qrels, run, 2)


# ---- trec_eval 10's recall rounding, and the measures pytrec_eval lacks: by hand ------------------------

QRELS = Qrels.from_dict({"q": {"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "x": 0, "u": -1}})
RUN = Run.from_dict({"q": {"a": 9, "x": 8, "b": 7, "n": 6, "u": 5, "c": 4}})  # a x b n(ot judged) u(njudged, -1) c


def _one(name: str, qrels=QRELS, run=RUN, **options):
    m = parse_measure(name)
    (result,) = evaluate(qrels, run, [m], **options)
    return result.values[m][0]


def test_recall_points_round_half_up_as_trec_eval_10():
    # R = 5: IPrec@0.25 needs round(1.25) = 1 relevant document (trec_eval 9: int(1.25 + 0.9) = 2)
    assert _one("IPrec@0.25") == 1.0
    assert _one("IPrec@0.3") == pytest.approx(2 / 3)  # round(1.5) = 2: best precision from the 2nd relevant on
    assert _one("IPrec@0.7") == 0.0  # round(3.5) = 4 relevant: never reached
    with trec_eval_9_rounding():
        assert _one("IPrec@0.25") == pytest.approx(2 / 3)


def test_scores_rank_as_doubles_as_in_trec_eval_10_where_pytrec_eval_rounds_them_to_floats():
    """trec_eval 10 keeps each score as a double (trec_format.h: `double sim`); pytrec_eval (trec_eval 9) as a C float,
    where these pairs tie and the higher document id goes first. Found by fuzzing semrel against pytrec_eval."""
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}, "q3": {"a": 1}}
    run = {"q1": {"a": 1.00000001, "b": 1.0},  # one float
           "q2": {"a": 5e-324, "b": -1e-300},  # both round to (-)0.0 as floats
           "q3": {"a": 1e300, "b": 1e200}}  # both overflow to inf as floats
    (result,) = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), ["RR"])
    assert result.per_query("RR") == {"q1": 1.0, "q2": 1.0, "q3": 1.0}
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)
    assert {q: v["recip_rank"] for q, v in reference.items()} == {"q1": 0.5, "q2": 0.5, "q3": 0.5}


def test_rbp_unjudged_and_residual_by_hand():
    p = 0.9
    gains = [1, 0, 1, 0, 0, 1]  # a x b n u c
    assert _one("rbp") == pytest.approx((1 - p) * sum(g * p**i for i, g in enumerate(gains)))
    assert _one("RBP(p=0.5)") == pytest.approx(0.5 * (1 + 0.25 + 0.5**5))
    assert _one("RBP") == pytest.approx(0.2 * (1 + 0.8**2 + 0.8**5))  # ir_measures' default p = 0.8
    # residual: p^6 (the tail) + (1 - p)(p^3 + p^4) for n (not in the qrels) and u (grade -1)
    assert _one("rbp_resid") == pytest.approx(p**6 + (1 - p) * (p**3 + p**4))
    assert _one("unj@5") == pytest.approx(2 / 5) and _one("unj@10") == pytest.approx(2 / 10) and _one("unj@3") == 0.0
    assert _one("rbp_resid", run=Run.from_dict({"q": {"a": 1.0}})) == 0.0  # all judged: trec_eval prints 0


def test_rbp_scales_graded_gains_into_zero_one_per_query():
    qrels = Qrels.from_dict({"q": {"a": 4, "b": 2, "c": 0}})
    run = Run.from_dict({"q": {"b": 2.0, "a": 1.0}})
    assert _one("rbp", qrels, run) == pytest.approx(0.1 * (2 / 4 + 0.9 * 4 / 4))


def test_relstring_runid_num_q_and_utility_with_collection_size(cli, write):
    assert _one("relstring") == "101-.1" and _one("relstring@3") == "101"
    qrels = write("q.qrels", "q 0 a 1\nq 0 b 1\nq 0 x 0\nq 0 y 12\nr 0 a 1\n")
    run = write("r.run", "q Q0 a 1 3 first\nq Q0 z 2 2 first\nq Q0 x 3 1.5 first\nq Q0 y 4 1 last\n")
    out = cli("eval", qrels, run, "-m", "runid,num_q,relstring,utility.2,-1,-3,1", "-N", "100", "-q", "-f", "trec").stdout
    # q: 2 relevant retrieved (a, y), 2 non-relevant retrieved (z, x), 1 relevant missed (b), and of the
    # 100 documents 100 - 4 retrieved - 3 relevant + 2 = 95 non-relevant not retrieved; r: 1 relevant missed
    assert out.splitlines() == [
        f"{'relstring':<22}\tq\t'1-0>'", f"{'utility_2,-1,-3,1':<22}\tq\t{2 * 2 - 2 - 3 + 95:.4f}",
        f"{'relstring':<22}\tr\t''", f"{'utility_2,-1,-3,1':<22}\tr\t{-3 + 99:.4f}",
        f"{'runid':<22}\tall\tlast", f"{'num_q':<22}\tall\t2", f"{'utility_2,-1,-3,1':<22}\tall\t{(94 + 96) / 2:.4f}",
    ]


def test_ndcg_with_gains_by_hand():
    qrels = Qrels.from_dict({"q": {"a": 1, "b": 2, "c": 0}})
    run = Run.from_dict({"q": {"a": 3.0, "c": 2.0, "b": 1.0}})
    # gains 1 -> 3, 2 -> 9, 0 -> 0.5: run a c b = 3, 0.5, 9; ideal b a c = 9, 3, 0.5
    dcg = 3 + 0.5 / np.log2(3) + 9 / 2
    best = 9 + 3 / np.log2(3) + 0.5 / 2
    assert _one("ndcg.1=3,2=9,0=0.5", qrels, run) == pytest.approx(dcg / best)
    assert _one("nDCG(gains={1: 3, 2: 9, 0: 0.5})", qrels, run) == pytest.approx(dcg / best)
    assert parse_measure("ndcg.1=3,2=9").trec_name == "ndcg_1=3,2=9"


def test_judgment_groups_average_each_groups_score(cli, write):
    """-R qrels_jg: the second column names an assessor; a query's value is the mean over its assessors."""
    qrels = write("jg.qrels", "q 1 a 1\nq 1 b 0\nq 2 a 0\nq 2 b 1\nr 1 c 1\n")
    run = write("r.run", "q Q0 a 1 2 t\nq Q0 b 2 1 t\nr Q0 x 1 1 t\n")
    out = cli("eval", qrels, run, "-R", "qrels_jg", "-m", "map_avgjg,P_avgjg.1,num_q", "-q", "-f", "json").stdout
    values = json.loads(out)["r"]
    # q: assessor 1 finds a at rank 1 (AP 1), assessor 2 finds b at rank 2 (AP 0.5); r: one assessor, nothing found
    assert values["q"]["map_avgjg"] == 0.75 and values["q"]["P_avgjg@1"] == 0.5 and values["r"]["map_avgjg"] == 0.0
    assert values["all"] == {"NumQ": 2, "map_avgjg": 0.375, "P_avgjg@1": 0.25}
    assert_one = cli("eval", qrels, run, "-R", "qrels_jg", "-m", "nDCG@10")
    assert assert_one.exit_code == 2 and "with judgment groups" in assert_one.stderr


def test_judgment_groups_say_which_queries_a_run_lacks_or_adds(cli, write):
    """-R qrels_jg warns as qrels do: q3, judged by g2 only, is not in the run (scores 0); q4 is in the run only."""
    qrels = write("jg.qrels", "q1 g1 d1 1\nq1 g2 d1 0\nq1 g2 d3 1\nq2 g1 d9 1\nq3 g2 d1 1\n")
    run = write("a.run", "q1 Q0 d1 1 0.9 a\nq1 Q0 d3 2 0.8 a\nq2 Q0 d9 1 0.5 a\nq4 Q0 d1 1 1 a\n")
    result = cli("eval", qrels, run, "-R", "qrels_jg", "-m", "map_avgjg,num_q", "-f", "json")
    # q1: g1 finds d1 at 1 (AP 1), g2 finds d3 at 2 (AP 0.5); q2: AP 1; q3: 0
    assert json.loads(result.stdout)["a"]["all"] == {"NumQ": 3, "map_avgjg": pytest.approx((0.75 + 1 + 0) / 3)}
    assert [line for line in result.stderr.splitlines() if "warning" in line] == [
        f"semrel: warning: 1 of 3 queries in {qrels} has no results in {run}; they score 0 (e.g. 'q3')",
        f"semrel: warning: 1 query in {run} is not in {qrels} and is ignored (e.g. 'q4')"]
    counted = cli("eval", qrels, run, "-R", "qrels_jg", "-m", "num_q,runid", "-f", "trec")  # no per-group measure asked for
    assert counted.stdout == f"{'runid':<22}\tall\ta\n{'num_q':<22}\tall\t3\n", counted.output

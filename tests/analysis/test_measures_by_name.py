"""Every library function that takes measures takes names as well as Measure objects, parsed once at its entry."""

from __future__ import annotations

from semrel.analysis.agreement import ranking_agreement
from semrel.analysis.compare import compare_evaluations
from semrel.analysis.lift import lift
from semrel.analysis.ppi import ReviewedSample, corrected_estimates
from semrel.analysis.sensitivity import sensitivity
from semrel.analysis.significance import StatSettings
from semrel.evaluation.measures import parse_measures
from semrel.evaluation.metrics import evaluate, evaluate_gradings
from semrel.records import Judgment, Qrels, Run

# five queries: compare_evaluations warns of fewer (its paired tests would mean little)
QRELS = Qrels.from_dict({"a": {"x": 1, "y": 2}, "b": {"x": 1}, "c": {"z": 1}, "d": {"v": 1}, "e": {"u": 2}})
BASE = Run.from_dict({"a": {"x": 0.9, "y": 0.1, "w": 0.5}, "b": {"w": 0.9, "x": 0.5}, "c": {"z": 0.3}, "d": {"w": 0.8, "v": 0.2},
                      "e": {"u": 0.4}}, "base")
RERANKED = Run.from_dict({"a": {"y": 0.9, "x": 0.1, "w": 0.5}, "b": {"x": 0.9, "w": 0.5}, "c": {"z": 0.3}, "d": {"v": 0.8, "w": 0.2},
                          "e": {"u": 0.4}}, "reranked")
NAMES = ["ndcg_cut.3", "MRR"]
MEASURES = parse_measures(NAMES)
FAST = StatSettings(permutations=50, bootstrap=50)


def test_names_and_measures_give_the_same_results():
    by_name, by_object = evaluate(QRELS, [BASE, RERANKED], NAMES), evaluate(QRELS, [BASE, RERANKED], MEASURES)
    assert [e.aggregates() for e in by_name] == [e.aggregates() for e in by_object] and list(by_name[0].values) == MEASURES
    assert [e.aggregates() for e in evaluate_gradings(QRELS, [QRELS.relevance], BASE, "nDCG@3,RR")[0]] == \
        [by_object[0].aggregates()]
    assert compare_evaluations(by_name, FAST).tests == compare_evaluations(by_object, FAST).tests
    assert lift(QRELS, BASE, RERANKED, NAMES, FAST).rows == lift(QRELS, BASE, RERANKED, MEASURES, FAST).rows
    assert ranking_agreement(QRELS, QRELS, [BASE, RERANKED], NAMES) == ranking_agreement(QRELS, QRELS, [BASE, RERANKED], MEASURES)
    sample = ReviewedSample({("a", "x"): 0, ("b", "x"): 1}, pool=4)
    assert repr(corrected_estimates(QRELS, [BASE], NAMES, sample)) == repr(corrected_estimates(QRELS, [BASE], MEASURES, sample))
    judgments = [Judgment(q, d, 0.5, r, 0.5) for q, d, r in [("a", "x", 0.8), ("a", "y", 0.6), ("b", "x", 0.9), ("c", "z", 0.7)]]
    named = sensitivity(judgments, [BASE, RERANKED], NAMES, [0.6, 0.8], 0.7, settings=FAST)
    assert named.measures == MEASURES
    assert (named.values == sensitivity(judgments, [BASE, RERANKED], MEASURES, [0.6, 0.8], 0.7, settings=FAST).values).all()

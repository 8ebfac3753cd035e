"""Small cases computed by hand, one per measure, plus trec_eval's tie and -c rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

from semrel.evaluation.measures import parse_measure, parse_measures
from semrel.evaluation.metrics import evaluate, evaluate_gradings
from semrel.records import Qrels, Run

QRELS = Qrels.from_dict({"q1": {"d1": 2, "d2": 1, "d3": 0, "d4": 1, "d5": -1}})
# Ranked d1 (rel 2), d3 (0), d2 (1), d5 (-1); d4 (rel 1) is never retrieved.
RUN = Run.from_dict({"q1": {"d1": 0.9, "d3": 0.8, "d2": 0.7, "d5": 0.6}})

IDEAL = 2 + 1 / math.log2(3) + 1 / math.log2(4)
CASES = {
    "P@1": 1.0, "P@2": 0.5, "P@5": 0.4, "R@2": 1 / 3, "R@3": 2 / 3, "RR": 1.0, "RR@1": 1.0,
    "AP": (1 / 1 + 2 / 3) / 3, "AP@2": 1 / 3, "nDCG": (2 + 1 / math.log2(4)) / IDEAL,
    "nDCG@2": 2 / (2 + 1 / math.log2(3)), "Success@1": 1.0, "Rprec": 2 / 3, "Judged@4": 1.0,
    "Judged@10": 1.0, "NumRet": 4, "NumRel": 3, "NumRelRet": 2,
}


@pytest.mark.parametrize("name,expected", CASES.items())
def test_hand_computed(name, expected):
    (result,) = evaluate(QRELS, RUN, parse_measures([name]))
    assert result.values[parse_measures([name])[0]][0] == pytest.approx(expected, abs=1e-12)


def test_relevance_level_changes_relevance_not_ndcg():
    measures = parse_measures(["P@5,nDCG,RR"])
    (level2,) = evaluate(QRELS, RUN, measures, rel_level=2)
    values = {m.name: level2.values[m][0] for m in measures}
    assert values["P@5"] == pytest.approx(0.2)  # only d1 has rel >= 2
    assert values["nDCG"] == pytest.approx(CASES["nDCG"])
    assert values["RR"] == 1.0


def test_ties_broken_by_doc_id_descending_in_byte_order():
    qrels = Qrels.from_dict({"q": {"d10": 1}})
    run = Run.from_dict({"q": {"d10": 1.0, "d9": 1.0, "d1": 1.0}})  # order: d9, d10, d1
    (result,) = evaluate(qrels, run, parse_measures(["RR"]))
    assert result.values[parse_measures(["RR"])[0]][0] == 0.5


def test_rank_column_is_ignored_and_rows_may_come_in_any_order():
    qrels = Qrels.from_dict({"a": {"x": 1}, "b": {"y": 1}})
    shuffled = Run.from_columns(["b", "a", "b", "a"], ["z", "w", "y", "x"], [0.1, 0.9, 0.5, 0.2])
    (result,) = evaluate(qrels, shuffled, parse_measures(["RR"]))
    assert result.values[parse_measures(["RR"])[0]].tolist() == [0.5, 1.0]


def test_missing_queries_score_zero_and_count_and_extra_queries_are_ignored():
    qrels = Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d1": 1}})
    run = Run.from_dict({"q1": {"d1": 1.0}, "q9": {"d1": 1.0}})
    (result,) = evaluate(qrels, run, parse_measures(["P@1,NumRel"]))
    p1, num_rel = parse_measures(["P@1,NumRel"])
    assert result.aggregate(p1) == 0.5
    assert result.aggregate(num_rel) == 2  # counts are summed over queries, as trec_eval prints them
    assert result.missing_queries == ["q2"] and result.ignored_queries == ["q9"]


def test_query_with_no_relevant_documents_scores_zero():
    qrels = Qrels.from_dict({"q": {"d1": 0}})
    run = Run.from_dict({"q": {"d1": 1.0}})
    measures = parse_measures(["R@10,AP,nDCG,Rprec"])
    (result,) = evaluate(qrels, run, measures)
    assert [result.values[m][0] for m in measures] == [0.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    "alias,canonical",
    [("ndcg_cut.10", "nDCG@10"), ("ndcg_cut_10", "nDCG@10"), ("recall.100", "R@100"), ("recip_rank", "RR"),
     ("MRR@10", "RR@10"), ("P.5", "P@5"), ("success.5", "Success@5"), ("hit_rate@5", "Success@5"),
     ("HitRate@5", "Success@5"), ("Recall@100", "R@100"), ("MAP", "AP"), ("map_cut.10", "AP@10"),
     ("num_rel_ret", "NumRelRet"), ("Rprec", "Rprec"), ("NDCG@3", "nDCG@3")],
)
def test_aliases_map_to_canonical_names(alias, canonical):
    assert parse_measures([alias])[0].name == canonical


def test_each_grading_scores_as_it_does_alone():
    """evaluate_gradings keeps each grading's ideal DCG, per cutoff, for the next run, and the pairs sorted for it for one
    grading at a time: under every grading each run scores as under that grading alone, and a run's ideal_dcg is its own."""
    qrels = Qrels.from_dict({"q1": {"d1": 2, "d2": 1, "d3": 0, "d4": 1}, "q2": {"d1": 1, "d5": 0, "d6": 3}})
    gradings = [np.array(g) for g in ([2, 1, 0, 1, 1, 0, 3], [0, 1, 1, 0, 0, 2, 1], [1, 0, 0, 0, 3, 1, 0])]
    runs = [RUN, Run.from_dict({"q1": {"d4": 0.9, "d2": 0.5}, "q2": {"d5": 0.9, "d6": 0.8, "d1": 0.1}}, "other")]
    measures = parse_measures("nDCG@1,nDCG,ideal_dcg,nDCG@2")
    graded = evaluate_gradings(qrels, gradings, runs, measures)
    for grades, results in zip(gradings, graded):
        alone = evaluate(Qrels.from_columns(qrels.query_ids, qrels.doc_ids, grades), runs, measures)
        assert [{m: e.values[m].tolist() for m in measures} for e in results] == \
            [{m: e.values[m].tolist() for m in measures} for e in alone]
    ideal = parse_measure("ideal_dcg")
    graded[0][0].values[ideal][:] = -1.0
    assert (graded[0][1].values[ideal] > 0).all()

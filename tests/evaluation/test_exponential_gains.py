"""nDCG and DCG with Burges' exponential gains (ir_measures' dcg='exp-log2', ranx's ndcg_burges): a grade g gains 2^g - 1.
trec_eval has no such measure; scikit-learn's ndcg_score and dcg_score, given 2^g - 1 as the true relevance, are the
reference, and so is semrel's nDCG with that gain per grade (its gains= form, checked against trec_eval elsewhere)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sklearn.metrics import dcg_score, ndcg_score

from semrel.errors import UsageError
from semrel.evaluation.measures import parse_measure
from semrel.evaluation.metrics import evaluate
from semrel.records import Qrels, Run


def _collection(seed: int) -> tuple[dict, dict]:
    """Queries whose every judged document is ranked (as scikit-learn's ideal needs), among unjudged ones; no tied scores."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(12):
        docs = [f"d{i}" for i in range(rng.randint(3, 30))]
        judged = rng.sample(docs, rng.randint(1, len(docs)))
        qrels[f"q{q}"] = {d: rng.choice([0, 1, 1, 2, 3, 4]) for d in judged} | {judged[0]: rng.randint(1, 4)}
        scores = rng.sample(range(10_000), len(docs))
        run[f"q{q}"] = {d: s / 100 for d, s in zip(docs, scores)}
    return qrels, run


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("cutoff", [None, 1, 5, 10])
def test_exponential_gains_equal_scikit_learns_ndcg_and_dcg(seed, cutoff):
    qrels, run = _collection(seed)
    at = "" if cutoff is None else f"@{cutoff}"
    result = evaluate(Qrels.from_dict(qrels), [Run.from_dict(run)], [f"ndcg_burges{at}", f"dcg_burges{at}",
                                                                      f"nDCG(gains={{1:1,2:3,3:7,4:15}}){at}"])[0]
    ndcg, dcg, mapped = (result.per_query_values()[parse_measure(name)] for name in
                         (f"nDCG(dcg='exp-log2'){at}", f"DCG(dcg='exp-log2'){at}", f"nDCG(gains={{1:1,2:3,3:7,4:15}}){at}"))
    for q, ranked in run.items():
        docs = list(ranked)
        truth = np.array([[2.0 ** qrels[q].get(d, 0) - 1 for d in docs]])
        scores = np.array([[ranked[d] for d in docs]])
        assert ndcg[q] == pytest.approx(ndcg_score(truth, scores, k=cutoff), abs=1e-12)
        assert dcg[q] == pytest.approx(dcg_score(truth, scores, k=cutoff), abs=1e-12)
        assert ndcg[q] == pytest.approx(mapped[q], abs=1e-15)


def test_spellings_and_what_is_refused():
    assert parse_measure("ndcg_burges@10") == parse_measure("nDCG(dcg='exp-log2')@10")
    assert parse_measure("nDCG(dcg='log2')@10") == parse_measure("nDCG@10")  # the default: trec_eval's ndcg_cut_10
    assert parse_measure("nDCG(dcg='log2')@10").trec_name == "ndcg_cut_10"
    assert parse_measure("DCG(dcg='exp-log2')").trec_name == "DCG(dcg='exp-log2')"  # trec_eval's dcg gains the grade
    with pytest.raises(UsageError, match="give gains per grade or dcg='exp-log2' .2\\^grade - 1., not both"):
        parse_measure("nDCG(dcg='exp-log2',gains={1:2})@10")
    with pytest.raises(UsageError, match="dcg is 'log2' or 'exp-log2'"):
        parse_measure("nDCG(dcg='exp')@10")

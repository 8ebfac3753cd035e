"""Every measure equals trec_eval (pytrec_eval) on random qrels and runs, to 1e-9.

Measures trec_eval lacks (RR@k, Judged@k) are checked against ir_measures.
"""

from __future__ import annotations

import ir_measures
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings

from random_collections import collections
from semrel.evaluation.measures import parse_measures
from semrel.evaluation.metrics import evaluate
from semrel.records import Qrels, Run

TREC = {
    "P@1": "P.1", "P@5": "P.5", "P@10": "P.10", "R@3": "recall.3", "R@10": "recall.10",
    "Success@1": "success.1", "Success@5": "success.5", "nDCG": "ndcg", "nDCG@3": "ndcg_cut.3",
    "nDCG@10": "ndcg_cut.10", "AP": "map", "AP@5": "map_cut.5", "RR": "recip_rank", "Rprec": "Rprec",
    "NumRel": "num_rel", "NumRet": "num_ret", "NumRelRet": "num_rel_ret",
}
IR_MEASURES = ["RR@1", "RR@3", "Judged@2", "Judged@5"]


def _ours(qrels, run, names, level):
    (result,) = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), parse_measures(names), rel_level=level)
    return {m.name: dict(zip(result.query_ids, result.values[m].tolist())) for m in result.values}, result


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_measures_equal_trec_eval(data):
    qrels, run, level = data
    ours, result = _ours(qrels, run, list(TREC), level)
    judged_run = {q: d for q, d in run.items() if d}
    ref = pytrec_eval.RelevanceEvaluator(qrels, set(TREC.values()), relevance_level=level).evaluate(judged_run)
    for name, trec in TREC.items():
        key = trec.replace(".", "_")
        for q in qrels:
            expected = ref[q][key] if q in ref else (ours[name][q] if name == "NumRel" else 0.0)
            assert ours[name][q] == pytest.approx(expected, abs=1e-9), (name, q)
        # trec_eval -c: queries without results count as zeros in the mean; counts are summed.
        measure = parse_measures([name])[0]
        values = [ref[q][key] if q in ref else ours[name][q] for q in qrels]
        expected_all = sum(values) if measure.summed else sum(values) / len(values)
        assert result.aggregate(measure) == pytest.approx(expected_all, abs=1e-9), name
    assert set(result.missing_queries) == set(qrels) - set(judged_run)
    assert set(result.ignored_queries) == set(judged_run) - set(qrels)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_measures_trec_eval_lacks_equal_ir_measures(data):
    qrels, run, level = data
    # ir_measures breaks score ties its own way; semrel breaks them as trec_eval does (checked
    # above), so this comparison uses distinct scores.
    run = {q: {d: float(i) for i, d in enumerate(docs)} for q, docs in run.items()}
    ours, _ = _ours(qrels, run, IR_MEASURES, level)
    qrel_rows = [ir_measures.Qrel(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    run_rows = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    # built as objects, not parsed from text: ir_measures parses `RR(rel=2)` with ast.Num, which Python 3.14 removed
    measures = [ir_measures.RR(rel=level) @ 1, ir_measures.RR(rel=level) @ 3, ir_measures.Judged @ 2, ir_measures.Judged @ 5]
    found = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(measures, qrel_rows, run_rows)}
    for name, measure in zip(IR_MEASURES, measures):
        for q in qrels:
            assert ours[name][q] == pytest.approx(found.get((q, str(measure)), 0.0), abs=1e-9), (name, q)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_results_do_not_depend_on_fingerprints(data):
    """Pairs are found by 64-bit fingerprint and confirmed on the ids: with a fingerprint that
    collides all the time, every value is still trec_eval's."""
    import numpy as np

    import semrel.evaluation.metrics

    qrels, run, level = data
    expected, _ = _ours(qrels, run, list(TREC), level)
    weak = staticmethod(lambda query, prints: (query.astype(np.uint64) + prints) % np.uint64(3))
    original = semrel.evaluation.metrics.pair_fingerprints
    semrel.evaluation.metrics.pair_fingerprints = weak.__func__
    try:
        colliding, _ = _ours(qrels, run, list(TREC), level)
    finally:
        semrel.evaluation.metrics.pair_fingerprints = original
    assert colliding == expected


def test_equal_ids_get_equal_fingerprints_in_slices_chunks_and_large_strings():
    """Fingerprints only propose equality, but equal ids must always get equal ones, or a judged pair is missed:
    a slice of an Arrow array starts past its buffers' start, and a column read in blocks comes in chunks."""
    import numpy as np
    import pyarrow as pa

    from semrel.errors import SemrelError
    from semrel.evaluation.hashing import KeyTable, fingerprints, pair_fingerprints

    ids = ["a", "an id longer than 8 bytes", "", "b", "an id longer than 8 bytes", "é" * 9]
    whole = fingerprints(pa.array(ids)).tolist()
    assert whole[1] == whole[4] and len(set(whole)) == 5
    assert fingerprints(pa.array(["x", "yy", *ids]).slice(2)).tolist() == whole
    assert fingerprints(pa.chunked_array([pa.array(ids[:2]), pa.array(["z", *ids[2:]]).slice(1)])).tolist() == whole
    assert fingerprints(pa.array(ids, type=pa.large_string()).slice(0)).tolist() == whole
    keys = pair_fingerprints(np.array([0, 0, 1, 1, 2, 2]), np.array(whole, dtype=np.uint64))
    assert KeyTable(keys).find(np.r_[keys[::-1], keys[0] + np.uint64(1)]).tolist() == [5, 4, 3, 2, 1, 0, -1]
    assert pair_fingerprints(np.array([(1 << 24) - 1]), np.array([7], dtype=np.uint64)).tolist() == [((1 << 24) - 1) << 40]
    with pytest.raises(SemrelError, match="more than 16,777,216 queries in one file"):
        pair_fingerprints(np.array([1 << 24]), np.array([7], dtype=np.uint64))

"""What a hand-made mutation audit of evaluation/metrics.py and evaluation/doclevel.py found the other tests leave open.

Each test fails on a wrong version of the code that the rest of tests/evaluation and tests/cli/test_cli_eval.py let
through. metrics.py: -M cuts the whole ranking before -J condenses it (trec_eval's form_res_rels.c), checked with
pytrec_eval; -M0 is refused; evaluate()'s num_docs reaches utility (-N); the first repeated judgment is named;
the repeat check of queries padded to a power of two (more than 32 query lengths) lets padding sort last;
Evaluation.judged_rows; and pairs whose fingerprints collide told apart by their ids in the quick loop (the property
test doing it is slow). doclevel.py (MaxP): a chunk the corpus does not list is the document before its last '#', a
document listed for two queries stays in both, each document keeps its own best chunk's score, and the run keeps its
tag (trec_eval's runid); a repeat hidden by a colliding pair between its rows, which _repeats (comparing
neighbours alone) missed.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pyarrow as pa
import pytest
import pytrec_eval

from semrel.errors import SemrelError, UsageError, ValidationError
from semrel.evaluation.doclevel import to_documents
from semrel.evaluation.hashing import fingerprints
from semrel.evaluation.measures import parse_measure, parse_measures
from semrel.evaluation.metrics import evaluate, refuse_repeats
from semrel.formats.trec import ranked
from semrel.records import Qrels, Run

# semrel name: pytrec_eval output key
TREC = {"P@1": "P_1", "P@2": "P_2", "AP": "map", "RR": "recip_rank", "nDCG": "ndcg", "NumRet": "num_ret",
        "NumRelRet": "num_rel_ret", "R@3": "recall_3"}


def _top(run: dict[str, dict[str, float]], depth: int) -> dict[str, dict[str, float]]:
    """Each query's top `depth` documents in trec_eval's order: what trec_eval -M keeps (pytrec_eval has no -M)."""
    ordered = ranked(Run.from_dict(run))
    top: dict[str, dict[str, float]] = {}
    for q, d, s in zip(ordered.query_ids.to_pylist(), ordered.doc_ids.to_pylist(), ordered.scores.tolist()):
        if len(top.setdefault(q, {})) < depth:
            top[q][d] = s
    return top


@pytest.mark.parametrize("depth", [1, 2, 3, 4, 6])
def test_depth_cuts_the_ranking_before_judged_only_condenses_it(depth):
    """trec_eval -M -J: the top M of the whole ranking, then its unjudged documents dropped; not the top M judged ones.
    Here the two best documents are unjudged (u not in the qrels, p in the pool with grade -1)."""
    qrels = {"q": {"p": -1, "a": 1, "x": 0, "b": 2, "c": 1}, "r": {"a": 1, "y": 0}}
    run = {"q": {"u": 0.9, "p": 0.8, "a": 0.7, "x": 0.6, "b": 0.5, "v": 0.4, "c": 0.3}, "r": {"z": 2.0, "y": 1.0, "a": 0.5}}
    chosen = parse_measures(list(TREC))
    (result,) = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), chosen, judged_only=True, depth=depth)
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"P.1", "P.2", "map", "recip_rank", "ndcg", "num_ret", "num_rel_ret", "recall.3"},
                                               judged_docs_only_flag=True).evaluate(_top(run, depth))
    for m in chosen:
        for q in qrels:
            expected = reference[q][TREC[m.name]] if q in reference else 0.0
            assert result.per_query(m)[q] == pytest.approx(expected, abs=1e-12), (m.name, q, depth)
    if depth == 2:  # by hand: q's top 2 (u, p) hold no judged document, so nothing is left of it
        assert result.per_query("NumRet")["q"] == 0 and result.per_query("P@1")["q"] == 0.0


def test_depth_of_zero_is_refused():
    """-M0 would score every ranking as empty; trec_eval's -M takes a count of documents, and semrel says so."""
    qrels, run = Qrels.from_dict({"q": {"a": 1}}), Run.from_dict({"q": {"a": 1.0}})
    with pytest.raises(UsageError, match="depth=0: give a whole number of documents, at least 1"):
        evaluate(qrels, run, "P@1", depth=0)
    assert evaluate(qrels, run, "P@1", depth=1)[0].aggregate("P@1") == 1.0


def test_num_docs_reaches_utility_through_evaluate():
    """evaluate(num_docs=N) is trec_eval -N: utility's fourth coefficient counts the non-relevant documents not
    retrieved, N - retrieved - relevant + relevant retrieved (trec_eval's te_calc_utility)."""
    m = parse_measure("utility.2,-1,-3,1")
    qrels = Qrels.from_dict({"q": {"a": 1, "b": 1, "x": 0}})
    run = Run.from_dict({"q": {"a": 3.0, "z": 2.0, "x": 1.0}})  # 1 relevant retrieved, 2 non-relevant retrieved, 1 relevant missed
    (result,) = evaluate(qrels, run, [m], num_docs=100)
    assert result.values[m].tolist() == [2 * 1 - 1 * 2 - 3 * 1 + 1 * (100 - 3 - 2 + 1)]
    (without,) = evaluate(qrels, run, [m])  # -N0, trec_eval's default: the count goes negative, as there
    assert without.values[m].tolist() == [2 * 1 - 1 * 2 - 3 * 1 + 1 * (0 - 3 - 2 + 1)]


def test_the_first_repeated_judgment_is_named():
    """Of two pairs judged twice, the error names the earlier repeat (row 3, 'a'), not the last one (row 4, 'b')."""
    qrels = Qrels.from_columns(["q", "q", "q", "q"], ["a", "b", "a", "b"], [1, 1, 0, 0])
    with pytest.raises(ValidationError, match=r"^duplicate judgment for query 'q' and doc 'a' \(row 3;"):
        evaluate(qrels, Run.from_dict({"q": {"a": 1.0}}), "P@1")


def test_a_repeat_is_found_in_blocks_padded_to_a_power_of_two():
    """With more than 32 query lengths the repeat check lays each query's fingerprints out padded to the next power of
    two; the padding must sort after every real fingerprint. Lengths of 2^k and 2^k - 1 leave at most one padding cell
    per query, so no two padding cells stand side by side, and the one repeat is of the larger fingerprint of its query."""
    lengths = [1, 2] + [n for k in range(2, 18) for n in (2**k - 1, 2**k)][:31]
    assert len(set(lengths)) == 33
    candidates = ["doc0", "doc1"]
    prints = dict(zip(candidates, fingerprints(pa.array(candidates)).tolist()))
    big, small = sorted(candidates, key=prints.__getitem__, reverse=True)
    queries: list[str] = []
    docs: list[str] = []
    for i, n in enumerate(lengths):
        queries += [f"q{i}"] * n
        docs += [big, small, big] if n == 3 else [f"d{j}" for j in range(n)]
    run = Run.from_columns(queries, docs, np.arange(len(docs), 0, -1).astype(float))
    row = docs.index(big, docs.index(big) + 1)
    with pytest.raises(SemrelError, match=f"duplicate document in run for query 'q2' and doc '{big}' \\(row {row + 1};"):
        refuse_repeats(run)


def test_judged_rows_counts_the_run_rows_the_qrels_judge():
    """Evaluation.judged_rows: rows whose (query, doc) the qrels hold, whatever the grade (-1 and 0 too); a query the
    qrels lack has none."""
    qrels = Qrels.from_dict({"q": {"a": 1, "b": 0, "p": -1}, "s": {"a": 1}})
    run = Run.from_dict({"q": {"a": 4.0, "b": 3.0, "p": 2.0, "z": 1.0}, "r": {"a": 1.0}})
    assert evaluate(qrels, run, "P@1")[0].judged_rows == 3


WEAK_FINGERPRINTS = {
    "three values": lambda query, prints: (query.astype(np.uint64) + prints) % np.uint64(3),
    "the doc's alone": lambda query, prints: prints,  # one doc's pairs for every query collide, side by side once sorted
}


@pytest.mark.parametrize("weak", WEAK_FINGERPRINTS.values(), ids=WEAK_FINGERPRINTS.keys())
def test_pairs_sharing_a_fingerprint_are_told_apart_by_their_ids(monkeypatch, weak):
    """A quick, fixed case of the slow property test in test_metrics_reference.py: with fingerprints that collide all the
    time the values must still be those of the real fingerprints. d1 is judged for all four queries, with other grades
    (q1 and q4, query codes 0 and 3, share a fingerprint of three values): no repeat, and each run row gets its own
    query's grade."""
    import semrel.evaluation.metrics as metrics

    qrels = Qrels.from_dict({"q1": {"d1": 2, "d2": 0, "d3": 1, "d4": -1, "d10": 1, "d9": 0}, "q2": {"d1": 1, "d5": 0, "d3": 0},
                             "q3": {"d2": 1, "d1": 0}, "q4": {"d1": 0, "d3": 1, "d2": 2}})
    run = Run.from_dict({"q1": {"d1": 0.5, "d2": 0.9, "d5": 0.7, "d4": 0.9, "d3": 0.1, "d9": 0.1, "d10": 0.1},
                         "q2": {"d7": 1.0, "d1": 0.5, "d2": 0.4, "d3": 0.3}, "q3": {"d3": 1.0, "d1": 0.9, "d2": 0.8},
                         "q4": {"d1": 1.0, "d6": 0.9, "d3": 0.8}})
    names = "P@2,R@3,AP,nDCG,RR,NumRelRet,Judged@3"
    (expected,) = evaluate(qrels, run, names)
    monkeypatch.setattr(metrics, "pair_fingerprints", weak)
    (colliding,) = evaluate(qrels, run, names)
    assert colliding.per_query_values() == expected.per_query_values()
    assert colliding.judged_rows == expected.judged_rows == 12  # q1: 6, q2: d1 and d3, q3: d1 and d2, q4: d1 and d3


def _colliding_docs() -> tuple[str, str]:
    """Two doc ids whose pairs with one query share a fingerprint of three values (WEAK_FINGERPRINTS)."""
    ids = [f"d{i}" for i in range(20)]
    prints = fingerprints(pa.array(ids)).tolist()
    return ids[0], next(d for d, p in zip(ids[1:], prints[1:]) if p % 3 == prints[0] % 3)


@pytest.mark.parametrize("side", ["qrels", "run"])
def test_a_repeat_is_refused_even_with_a_colliding_pair_between_its_rows(monkeypatch, side):
    """Rows (q, a), (q, b), (q, a) with one fingerprint: trec_eval refuses the repeated a, and so does semrel with its
    real fingerprints; results should not depend on the hash (the docstring of _repeats says they do not)."""
    import semrel.evaluation.metrics as metrics

    a, b = _colliding_docs()
    three = Qrels.from_columns(["q"] * 3, [a, b, a], [1, 0, 0])
    run = Run.from_columns(["q"] * 3, [a, b, a], [3.0, 2.0, 1.0])
    qrels, ranking = (three, Run.from_dict({"q": {a: 1.0}})) if side == "qrels" else (Qrels.from_dict({"q": {a: 1}}), run)
    with pytest.raises(ValidationError, match="duplicate"):
        evaluate(qrels, ranking, "P@3")  # the real fingerprints refuse it
    monkeypatch.setattr(metrics, "pair_fingerprints", WEAK_FINGERPRINTS["three values"])
    with pytest.raises(ValidationError, match=f"duplicate (judgment|document in run) for query 'q' and doc '{a}'"):
        evaluate(qrels, ranking, "P@3")


# ---- document level (MaxP) ------------------------------------------------------------------------


def test_a_chunk_the_corpus_does_not_list_is_taken_as_the_document_before_its_last_hash():
    mapping = (pa.array(["c1", "c2"]), pa.array(["A", "B"]))
    run = Run.from_dict({"q": {"c1": 0.9, "C#7": 0.8, "s#1#2": 0.7}})
    assert to_documents(run, mapping).to_dict() == {"q": {"A": 0.9, "C": 0.8, "s#1": 0.7}}


def test_two_queries_listing_one_document_each_keep_it():
    """Each (query, document) keeps its best chunk, whatever the codes: q2's A (the first document, code 0) is not q1's C
    (the last, code 2), which a key of query code x (documents - 1) + document code would take it for."""
    run = Run.from_columns(["q1", "q1", "q1", "q2", "q2"], ["A#0", "B#0", "C#0", "A#1", "C#1"], [0.9, 0.8, 0.75, 0.7, 0.6])
    assert to_documents(run).to_dict() == {"q1": {"A": 0.9, "B": 0.8, "C": 0.75}, "q2": {"A": 0.7, "C": 0.6}}


def test_each_document_keeps_the_score_of_its_own_best_chunk():
    """B's score is its chunk's 0.5, not the 0.8 of A's second chunk that ranks before it: taking the ranked scores in
    turn would tie B with C (0.8 each), and C would go first on the tie."""
    run = Run.from_dict({"q": {"A#1": 0.9, "A#2": 0.8, "C#0": 0.8, "B#0": 0.5}})
    documents = to_documents(run)
    assert documents.doc_ids.to_pylist() == ["A", "C", "B"] and documents.scores.tolist() == [0.9, 0.8, 0.5]
    (result,) = evaluate(Qrels.from_dict({"q": {"B": 1}}), documents, "RR")
    assert result.aggregate("RR") == pytest.approx(1 / 3)


def test_the_document_run_keeps_the_run_tag(cli, write):
    """trec_eval's runid is the run's tag (its sixth column), at document level as at chunk level."""
    assert to_documents(dataclasses.replace(Run.from_dict({"q": {"A#0": 1.0}}), tag="t1")).tag == "t1"
    qrels, run = write("docs.qrels", "q1 0 A 1\n"), write("chunks.run", "q1 Q0 A#0 1 0.9 mytag\nq1 Q0 B#1 2 0.8 mytag\n")
    out = cli("eval", qrels, run, "--doc-level", "-m", "runid,num_ret", "-f", "trec")
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines() == [f"{'runid':<22}\tall\tmytag", f"{'num_ret':<22}\tall\t2"]


def test_depth_past_int64_cuts_nothing():
    """-M 100000000000000000000 ran into numpy's int64 and ended in an OverflowError traceback; a depth past every
    ranking keeps it whole, as trec_eval -M does (pytrec_eval, which has no -M, scores the whole run)."""
    qrels = {"q": {"a": 1, "b": 0, "c": 2}}
    run = {"q": {"b": 0.9, "a": 0.8, "x": 0.7, "c": 0.6}}
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"map", "num_ret"}).evaluate(run)["q"]
    (result,) = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), parse_measures(["AP", "NumRet"]), depth=10**20)
    assert result.per_query("AP")["q"] == pytest.approx(reference["map"], abs=1e-12)
    assert result.per_query("NumRet")["q"] == reference["num_ret"]

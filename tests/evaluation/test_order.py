"""Runs are ranked as trec_eval ranks them (score descending, ties by doc id descending in byte order)
whatever order their rows come in, and a document listed twice for a query is refused, on every path
the sort takes: rows already in order, blocks of equal or of many lengths, queries interleaved, ties,
and the threaded sort of big runs."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from semrel.errors import ValidationError
from semrel.evaluation import metrics
from semrel.evaluation.metrics import _order, evaluate, query_codes
from semrel.records import Qrels, Run


def _expected(query: np.ndarray, scores: np.ndarray, docs: list[str]) -> list[tuple[int, float, str]]:
    """The ranking by its definition: per query (in code order), score descending, doc id descending by bytes."""
    rows = sorted(range(len(scores)), key=lambda i: (query[i], -scores[i], [-b for b in docs[i].encode()] + [1]))
    return [(int(query[i]), float(scores[i]), docs[i]) for i in rows]


def _ranked(query: np.ndarray, scores: np.ndarray, docs: list[str], chunked: bool = False, threads: int = 2):
    ids = pa.chunked_array([docs[: len(docs) // 2], docs[len(docs) // 2 :]]) if chunked else pa.array(docs)
    names, codes, starts = query_codes(pa.array([f"q{q}" for q in query]))
    order = _order(codes, scores, ids, threads=threads, starts=starts)
    rows = np.arange(len(scores)) if order is None else order
    return [(int(query[i]), float(scores[i]), docs[i]) for i in rows], codes


def _run(rng, queries: int, lengths, ties: bool, interleave: bool):
    query = np.repeat(np.arange(queries), lengths)
    scores = rng.integers(0, 4, len(query)).astype(float) if ties else rng.random(len(query))
    docs = [f"d{rng.integers(0, 10**6)}" for _ in range(len(query))]
    for q in range(queries):  # distinct doc ids within a query
        rows = np.flatnonzero(query == q)
        for k, i in enumerate(rows):
            docs[i] = f"d{k * 7 % (len(rows) + 3)}x{k}" if ties else docs[i] + f"_{k}"
    if interleave:
        shuffle = rng.permutation(len(query))
        query, scores, docs = query[shuffle], scores[shuffle], [docs[i] for i in shuffle]
    else:
        for q in range(queries):  # rows out of order within each query's block
            rows = np.flatnonzero(query == q)
            mixed = rng.permutation(rows)
            scores[rows], docs_block = scores[mixed], [docs[i] for i in mixed]
            for i, d in zip(rows, docs_block):
                docs[i] = d
    return query, scores, docs


@pytest.mark.parametrize("lengths", ["equal", "few", "many"])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("interleave", [False, True])
def test_order_is_trec_eval_ranking(lengths, ties, interleave):
    rng = np.random.default_rng(hash((lengths, ties, interleave)) % 2**32)
    queries = 60
    sizes = {"equal": np.full(queries, 20), "few": rng.choice([3, 17, 40], queries),
             "many": rng.integers(1, 200, queries)}[lengths]  # "many": more lengths than share one array
    query, scores, docs = _run(rng, queries, sizes, ties, interleave)
    got, codes = _ranked(query, scores, docs, chunked=ties)
    assert _same_per_query(got, query, scores, docs)
    blocks = [q for i, (q, _, _) in enumerate(got) if i == 0 or got[i - 1][0] != q]
    assert len(blocks) == len(set(blocks)), "each query's rows come together"


def _same_per_query(got, query, scores, docs) -> bool:
    """Each query's ranking equals the definition's."""
    by_query: dict[int, list] = {}
    for q, s, d in got:
        by_query.setdefault(q, []).append((s, d))
    expected: dict[int, list] = {}
    for q, s, d in _expected(query, scores, docs):
        expected.setdefault(q, []).append((s, d))
    return by_query == expected


def test_rows_already_ranked_are_not_sorted():
    scores = np.array([3.0, 2.0, 2.0, 5.0, 1.0])
    docs = ["a", "d9", "d10", "x", "y"]  # d9 above d10 on the tie: already trec_eval's order
    names, codes, starts = query_codes(pa.array(["q1", "q1", "q1", "q2", "q2"]))
    assert _order(codes, scores, pa.array(docs), starts=starts) is None
    swapped = ["a", "d10", "d9", "x", "y"]
    order = _order(codes, scores, pa.array(swapped), starts=starts)
    assert [swapped[i] for i in order] == ["a", "d9", "d10", "x", "y"]


def test_big_unsorted_run_uses_threads_and_equals_the_definition():
    rng = np.random.default_rng(7)
    queries, depth = 300, 400  # 120,000 rows: the sort is split over threads
    query, scores, docs = _run(rng, queries, np.full(queries, depth), ties=False, interleave=False)
    scores = np.round(scores, 2)  # some ties too
    got_threads, codes = _ranked(query, scores, docs, threads=2)
    got_one, _ = _ranked(query, scores, docs, threads=1)
    assert got_threads == got_one and _same_per_query(got_threads, query, scores, docs)


@pytest.mark.parametrize("segment_rows", [1, 2, metrics.SEGMENT_ROWS])
@pytest.mark.parametrize("interleave", [False, True])
def test_a_document_twice_for_one_query_is_refused_with_its_line(interleave, segment_rows, monkeypatch):
    monkeypatch.setattr(metrics, "SEGMENT_ROWS", segment_rows)  # the run joined in segments of whole queries
    query_ids = ["q1", "q1", "q2", "q2", "q1"] if interleave else ["q1", "q1", "q1", "q2", "q2"]
    docs = ["a", "b", "a", "c", "a"] if interleave else ["a", "b", "a", "a", "c"]
    run = Run.from_columns(query_ids, docs, [1.0, 2.0, 3.0, 4.0, 5.0])
    qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"c": 1}})
    with pytest.raises(ValidationError, match="duplicate document in run for query 'q1' and doc 'a' \\(row 5" if interleave
                       else "duplicate document in run for query 'q1' and doc 'a' \\(row 3"):
        evaluate(qrels, run, "P@5")
    fine = Run.from_columns(["q1", "q2"], ["a", "a"], [1.0, 1.0])  # one doc for two queries: allowed
    assert evaluate(qrels, fine, "P@5")[0].aggregate("P@5") == pytest.approx(0.1)


@pytest.mark.parametrize("cuts", [[], [2], [3], [0, 3, 3, 6], [1, 2, 4, 5, 6]])
def test_query_blocks_are_the_same_however_the_ids_are_chunked(cuts):
    """Arrow's reader hands query ids over in chunks; a block may start, end or continue across a chunk boundary."""
    ids = ["q2", "q2", "q2", "q1", "q1", "q2", "q3"]  # q2 comes back: two blocks of it
    bounds = [0, *cuts, len(ids)]
    chunked = pa.chunked_array([pa.array(ids[a:b], pa.string()) for a, b in zip(bounds[:-1], bounds[1:])], pa.string())
    names, codes, starts = query_codes(chunked)
    assert names.to_pylist() == ["q2", "q1", "q3"]
    assert codes.tolist() == [0, 0, 0, 1, 1, 0, 2] and starts.tolist() == [0, 3, 5, 6]

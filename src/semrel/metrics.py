"""trec_eval-exact ranked metrics, computed for all queries at once with numpy.

Semantics follow trec_eval 10.0 (with -c): a run is ordered by score descending, ties by doc
id descending in byte order; relevant means rel >= the relevance level; nDCG uses the graded
rel as a linear gain and ignores the level; queries in the qrels but not in the run score 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .measures import Measure
from .records import Qrels, Run


@dataclass(frozen=True)
class Evaluation:
    """Per-query values of each measure for one run, over the qrels' queries."""

    run_name: str
    query_ids: list[str]
    values: dict[Measure, np.ndarray]
    missing_queries: list[str] = field(default_factory=list)  # in the qrels, not in the run: scored 0
    ignored_queries: list[str] = field(default_factory=list)  # in the run, not in the qrels: not scored

    def aggregate(self, measure: Measure) -> float:
        column = self.values[measure]
        if measure.summed:
            return float(column.sum())
        return float(column.mean()) if len(column) else 0.0


@dataclass(frozen=True)
class _Ranked:
    """A run joined to the qrels: rows grouped by query and in rank order."""

    query: np.ndarray  # index into the qrels' query list
    rank: np.ndarray  # 0-based rank within the query
    gain: np.ndarray  # graded rel, 0 for unjudged or negative
    relevant: np.ndarray  # rel >= level
    judged: np.ndarray


class _QrelsIndex:
    """Qrels prepared once, for evaluating any number of runs."""

    def __init__(self, qrels: Qrels):
        self.query_names = pc.unique(qrels.query_ids).sort()
        self.n = len(self.query_names)
        self.query = pc.index_in(qrels.query_ids, value_set=self.query_names).to_numpy().astype(np.int64)
        self.docs = qrels.doc_ids
        self.relevance = qrels.relevance

    def num_relevant(self, level: int) -> np.ndarray:
        return np.bincount(self.query[self.relevance >= level], minlength=self.n).astype(np.float64)

    def ideal_dcg(self, cutoff: int | None) -> np.ndarray:
        gain = np.maximum(self.relevance, 0).astype(np.float64)
        order = np.lexsort((-gain, self.query))
        query, gain = self.query[order], gain[order]
        rank = _ranks_within(query)
        keep = gain > 0 if cutoff is None else (gain > 0) & (rank < cutoff)
        return np.bincount(query[keep], weights=gain[keep] / np.log2(rank[keep] + 2.0), minlength=self.n)


def _ranks_within(groups: np.ndarray) -> np.ndarray:
    """0-based position of each row within its run of equal, contiguous group values."""
    n = len(groups)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    lengths = np.diff(np.r_[starts, n])
    return np.arange(n, dtype=np.int64) - np.repeat(starts, lengths)


def _order(run_query: np.ndarray, scores: np.ndarray, doc_ids: pa.Array) -> np.ndarray | None:
    """Row order grouping queries with scores descending and ties by doc id descending.

    None when the rows are already in that order (the common case for files written by
    retrieval systems), which saves the sort.
    """
    same_query = run_query[1:] == run_query[:-1]
    step = np.diff(scores)
    if len(scores) < 2 or (
        np.all(run_query[1:] >= run_query[:-1]) and not np.any(same_query & (step >= 0))
    ):
        return None
    order = np.lexsort((-scores, run_query))
    q, s = run_query[order], scores[order]
    if np.any((q[1:] == q[:-1]) & (s[1:] == s[:-1])):
        doc_rank = pc.rank(doc_ids, sort_keys="descending", tiebreaker="first").to_numpy()
        order = np.lexsort((doc_rank, -scores, run_query))
    return order


def _join(index: _QrelsIndex, run: Run, level: int) -> tuple[_Ranked, list[str], list[str]]:
    run_queries = pc.dictionary_encode(run.query_ids)
    known = pc.index_in(run_queries.dictionary, value_set=index.query_names).to_numpy(zero_copy_only=False)
    known = np.where(np.isnan(known.astype(np.float64)), -1, known).astype(np.int64)
    ignored = [q for q, k in zip(run_queries.dictionary.to_pylist(), known) if k < 0]
    local = run_queries.indices.to_numpy().astype(np.int64)
    order = _order(local, run.scores, run.doc_ids)
    doc_ids = run.doc_ids if order is None else run.doc_ids.take(order)
    if order is not None:
        local = local[order]
    query = known[local]
    keep = query >= 0
    if not keep.all():
        query, doc_ids = query[keep], doc_ids.filter(pa.array(keep))
    # Look each (query, doc) pair up in the qrels through one shared doc dictionary.
    docs = pc.dictionary_encode(pa.chunked_array([index.docs, doc_ids]).combine_chunks())
    codes = docs.indices.to_numpy().astype(np.int64)
    ndocs = len(docs.dictionary)
    qrel_keys = index.query * ndocs + codes[: len(index.docs)]
    run_keys = query * ndocs + codes[len(index.docs):]
    by_key = np.argsort(qrel_keys, kind="stable")
    sorted_keys = qrel_keys[by_key]
    at = np.searchsorted(sorted_keys, run_keys).clip(max=max(len(sorted_keys) - 1, 0))
    judged = sorted_keys[at] == run_keys if len(sorted_keys) else np.zeros(len(run_keys), dtype=bool)
    rel = np.where(judged, index.relevance[by_key[at]] if len(sorted_keys) else 0, 0)
    present = np.zeros(index.n, dtype=bool)
    present[query] = True
    missing = [q for q, p in zip(index.query_names.to_pylist(), present) if not p]
    ranked = _Ranked(
        query=query, rank=_ranks_within(query), gain=np.maximum(rel, 0).astype(np.float64),
        relevant=judged & (rel >= level), judged=judged,
    )
    return ranked, missing, ignored


def _compute(m: Measure, r: _Ranked, index: _QrelsIndex, num_rel: np.ndarray, level: int) -> np.ndarray:
    n = index.n

    def count(mask: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        return np.bincount(r.query[mask], weights=None if weights is None else weights[mask], minlength=n).astype(
            np.float64
        )

    def per_relevant(numerator: np.ndarray) -> np.ndarray:
        return np.divide(numerator, num_rel, out=np.zeros(n), where=num_rel > 0)

    top = np.ones(len(r.rank), dtype=bool) if m.cutoff is None else r.rank < m.cutoff
    f = m.family
    if f == "P":
        return count(top & r.relevant) / m.cutoff
    if f == "R":
        return per_relevant(count(top & r.relevant))
    if f == "Success":
        return (count(top & r.relevant) > 0).astype(np.float64)
    if f == "Judged":  # as ir_measures: over the documents returned in the top k
        return np.divide(count(top & r.judged), count(top), out=np.zeros(n), where=count(top) > 0)
    if f == "NumRet":
        return count(top)
    if f == "NumRelRet":
        return count(top & r.relevant)
    if f == "NumRel":
        return num_rel.copy()
    if f == "Rprec":
        return per_relevant(count(r.relevant & (r.rank < num_rel[r.query])))
    if f == "RR":
        hits = top & r.relevant
        first = np.zeros(n)
        q, at = np.unique(r.query[hits], return_index=True)
        first[q] = 1.0 / (r.rank[hits][at] + 1.0)
        return first
    if f == "AP":
        rel = r.relevant.astype(np.int64)
        cumulative = np.cumsum(rel)
        before = np.repeat(np.r_[0, cumulative][np.flatnonzero(r.rank == 0)], np.diff(np.r_[np.flatnonzero(r.rank == 0), len(rel)]))
        precision = (cumulative - before) / (r.rank + 1.0)
        return per_relevant(count(top & r.relevant, precision))
    if f == "nDCG":
        dcg = count(top & (r.gain > 0), r.gain / np.log2(r.rank + 2.0))
        ideal = index.ideal_dcg(m.cutoff)
        return np.divide(dcg, ideal, out=np.zeros(n), where=ideal > 0)
    raise ValueError(f"no computation for {m}")


def evaluate(qrels: Qrels, runs: Run | Iterable[Run], measures: Iterable[Measure], rel_level: int = 1) -> list[Evaluation]:
    """Evaluate each run on the qrels; one Evaluation per run, in the order given."""
    runs = [runs] if isinstance(runs, Run) else list(runs)
    measures = list(measures)
    index = _QrelsIndex(qrels)
    num_rel = index.num_relevant(rel_level)
    names = index.query_names.to_pylist()
    results = []
    for run in runs:
        ranked, missing, ignored = _join(index, run, rel_level)
        values = {m: _compute(m, ranked, index, num_rel, rel_level) for m in measures}
        results.append(Evaluation(run.name, names, values, missing, ignored))
    return results

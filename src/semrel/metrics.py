"""trec_eval-exact ranked metrics, computed for all queries at once with numpy.

Semantics follow trec_eval 10.0 (with -c): a run is ordered by score descending, ties by doc
id descending in byte order; relevant means rel >= the relevance level; nDCG uses the graded
rel as a linear gain and ignores the level; queries in the qrels but not in the run score 0.
"""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .formats.columns import duplicate_error, first_duplicate
from .hashing import fingerprints, pair_fingerprints
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
        self.relevance = qrels.relevance
        docs = pc.dictionary_encode(qrels.doc_ids)
        self.doc_names = docs.dictionary
        keys = self.query * len(self.doc_names) + docs.indices.to_numpy()
        _refuse_duplicates(keys, qrels, "judgment")
        self.by_key = np.argsort(keys)
        self.sorted_keys = keys[self.by_key]

    def codes(self, doc_ids: pa.Array) -> np.ndarray:
        """Each doc's index in `doc_names`, or len(doc_names) for a doc no query judged."""
        found = pc.index_in(doc_ids, value_set=self.doc_names).fill_null(len(self.doc_names))
        return found.to_numpy().astype(np.int64)

    def rows_of(self, query: np.ndarray, doc_codes: np.ndarray) -> np.ndarray:
        """The qrels row judging each (query, doc) pair, or -1; doc codes index `doc_names` (others: unjudged)."""
        rows = np.full(len(query), -1, dtype=np.int64)
        named = np.flatnonzero(doc_codes < len(self.doc_names))  # only these can have a judgment
        if len(named):
            keys = query[named] * len(self.doc_names) + doc_codes[named]
            at = np.searchsorted(self.sorted_keys, keys).clip(max=len(self.sorted_keys) - 1)
            found = self.sorted_keys[at] == keys
            rows[named[found]] = self.by_key[at[found]]
        return rows

    def regraded(self, relevance: np.ndarray) -> "_QrelsIndex":
        """The same judged pairs with other grades (one per qrels row): nothing is re-indexed."""
        other = copy.copy(self)
        other.relevance = relevance
        return other

    def num_relevant(self, level: int) -> np.ndarray:
        return np.bincount(self.query[self.relevance >= level], minlength=self.n).astype(np.float64)

    def ideal_dcg(self, cutoff: int | None) -> np.ndarray:
        gain = np.maximum(self.relevance, 0).astype(np.float64)
        order = np.lexsort((-gain, self.query))
        query, gain = self.query[order], gain[order]
        rank = _ranks_within(query)
        keep = gain > 0 if cutoff is None else (gain > 0) & (rank < cutoff)
        return np.bincount(query[keep], weights=gain[keep] / np.log2(rank[keep] + 2.0), minlength=self.n)


def _refuse_duplicates(keys: np.ndarray, records: Qrels | Run, what: str) -> None:
    row = first_duplicate(keys)
    if row is not None:
        query, doc = records.query_ids[row].as_py(), records.doc_ids[row].as_py()
        raise duplicate_error(records.source, row, query, doc, what)


def _ranks_within(groups: np.ndarray) -> np.ndarray:
    """0-based position of each row within its run of equal, contiguous group values."""
    n = len(groups)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    lengths = np.diff(np.r_[starts, n])
    return np.arange(n, dtype=np.int64) - np.repeat(starts, lengths)


def _order(run_query: np.ndarray, scores: np.ndarray, doc_ids: pa.Array) -> np.ndarray | None:
    """Row order grouping queries, scores descending, ties by doc id descending (byte order).

    None when the rows are already in that order (the common case for files written by
    retrieval systems), which saves the sort. Only tied rows have their doc ids compared.
    """
    if len(scores) < 2 or (
        np.all(run_query[1:] >= run_query[:-1]) and not np.any((run_query[1:] == run_query[:-1]) & (np.diff(scores) >= 0))
    ):
        return None
    order = np.lexsort((-scores, run_query))
    q, s = run_query[order], scores[order]
    tie = (q[1:] == q[:-1]) & (s[1:] == s[:-1])
    if not tie.any():
        return order
    tied = order[np.flatnonzero(np.r_[tie, False] | np.r_[False, tie])]
    doc_rank = np.zeros(len(scores), dtype=np.int64)
    doc_rank[tied] = pc.rank(doc_ids.take(tied), sort_keys="descending", tiebreaker="first").to_numpy()
    return np.lexsort((doc_rank, -scores, run_query))


def _refuse_repeated_documents(query: np.ndarray, doc_ids: pa.Array, run: Run, rows: np.ndarray | None) -> None:
    """A document listed twice for one query is an error, as in trec_eval.

    Fingerprints find candidate repeats in one cheap pass; candidates are confirmed on the ids.
    """
    keys = pair_fingerprints(query, fingerprints(doc_ids))
    if len(keys) < 2 or len(pc.unique(pa.array(keys))) == len(keys):
        return
    order = np.argsort(keys, kind="stable")
    pairs = np.flatnonzero(keys[order[1:]] == keys[order[:-1]])
    later = [
        int(max(a, b)) for a, b in zip(order[pairs].tolist(), order[pairs + 1].tolist())
        if query[a] == query[b] and doc_ids[a] == doc_ids[b]
    ]
    if later:
        row = min(later) if rows is None else int(rows[min(later)])
        raise duplicate_error(run.source, row, run.query_ids[row].as_py(), run.doc_ids[row].as_py(), "document in run")


@dataclass(frozen=True)
class _Joined:
    """A run joined to the judged pairs: each kept row's query, rank and qrels row (-1: unjudged)."""

    query: np.ndarray
    rank: np.ndarray
    qrels_row: np.ndarray

    def graded(self, relevance: np.ndarray, level: int) -> _Ranked:
        judged = self.qrels_row >= 0
        rel = np.where(judged, relevance[self.qrels_row], 0)
        return _Ranked(query=self.query, rank=self.rank, gain=np.maximum(rel, 0).astype(np.float64),
                       relevant=judged & (rel >= level), judged=judged)


def _join(index: _QrelsIndex, run: Run) -> tuple[_Joined, list[str], list[str]]:
    """Each run row's query, rank and judgment; plus the qrels queries it lacks and those it adds."""
    run_queries = pc.dictionary_encode(run.query_ids)
    local = run_queries.indices.to_numpy().astype(np.int64)
    known = pc.index_in(run_queries.dictionary, value_set=index.query_names).fill_null(-1).to_numpy().astype(np.int64)
    ignored = [q for q, k in zip(run_queries.dictionary.to_pylist(), known) if k < 0]
    rows = _order(local, run.scores, run.doc_ids)
    grouped = local if rows is None else local[rows]
    doc_ids = run.doc_ids if rows is None else run.doc_ids.take(rows)
    with ThreadPoolExecutor(2) as pool:  # both halves release the GIL: two cores, half the wait
        checked = pool.submit(_refuse_repeated_documents, grouped, doc_ids, run, rows)
        codes = index.codes(doc_ids)
        checked.result()
    query = known[grouped]
    if (query < 0).any():
        keep = query >= 0
        query, codes = query[keep], codes[keep]
    present = np.zeros(index.n, dtype=bool)
    present[query] = True
    missing = [q for q, p in zip(index.query_names.to_pylist(), present) if not p]
    return _Joined(query, _ranks_within(query), index.rows_of(query, codes)), missing, ignored


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
    if f == "AP":  # precision at each relevant document: (its number among the hits) / rank
        hits = top & r.relevant
        nth = _ranks_within(r.query[hits]) + 1.0
        return per_relevant(np.bincount(r.query[hits], weights=nth / (r.rank[hits] + 1.0), minlength=n))
    if f == "nDCG":
        dcg = count(top & (r.gain > 0), r.gain / np.log2(r.rank + 2.0))
        ideal = index.ideal_dcg(m.cutoff)
        return np.divide(dcg, ideal, out=np.zeros(n), where=ideal > 0)
    raise ValueError(f"no computation for {m}")


def evaluate(qrels: Qrels, runs: Run | Iterable[Run], measures: Iterable[Measure], rel_level: int = 1) -> list[Evaluation]:
    """Evaluate each run on the qrels, in the order given.

    Runs are consumed one at a time, so a generator of runs keeps only one in memory.
    """
    return evaluate_gradings(qrels, [qrels.relevance], runs, measures, rel_level)[0]


def evaluate_gradings(
    qrels: Qrels, gradings: Sequence[np.ndarray], runs: Run | Iterable[Run], measures: Iterable[Measure], rel_level: int = 1
) -> list[list[Evaluation]]:
    """Evaluate each run under each grading of the qrels' pairs (`gradings[k][i]`: the grade of
    qrels row i), as result[k][run]. Each run is ordered and joined to the pairs once, so another
    grading (a relabelling at another threshold) costs only the measures."""
    measures = list(measures)
    index = _QrelsIndex(qrels)
    graded = [index.regraded(np.asarray(g, dtype=np.int64)) for g in gradings]
    if any(len(g.relevance) != len(qrels) for g in graded):
        raise ValueError(f"each grading needs one grade per qrels row ({len(qrels)})")
    num_rel = [g.num_relevant(rel_level) for g in graded]
    names = index.query_names.to_pylist()
    results: list[list[Evaluation]] = [[] for _ in graded]
    for run in [runs] if isinstance(runs, Run) else runs:
        joined, missing, ignored = _join(index, run)
        for k, g in enumerate(graded):
            ranked = joined.graded(g.relevance, rel_level)
            values = {m: _compute(m, ranked, g, num_rel[k], rel_level) for m in measures}
            results[k].append(Evaluation(run.name, names, values, missing, ignored))
    return results

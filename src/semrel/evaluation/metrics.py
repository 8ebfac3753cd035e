"""trec_eval-exact ranked metrics, computed for all queries at once with numpy.

Semantics follow trec_eval 10.0 (with -c): a run is ordered by score descending, ties by doc
id descending in byte order; relevant means rel >= the relevance level; nDCG uses the graded
rel as a linear gain and ignores the level; queries in the qrels but not in the run score 0.

This module orders each run, joins it to the qrels and hands the joined arrays to each measure's
compute function; which measures exist and how each is computed is the registry's business
(measures.py, one entry per family).
"""

from __future__ import annotations

import copy
import dataclasses
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UsageError
from ..formats.columns import duplicate_error
from ..records import Qrels, Run, dictionary_codes
from .hashing import fingerprints, pair_fingerprints
from .measures import Context, Kind, Measure, Ranked, parse_measure, parse_measures, ranks_within


@dataclass(frozen=True)
class Evaluation:
    """Per-query values of each measure for one run, over the qrels' queries (sorted by id)."""

    run_name: str
    query_ids: list[str]
    values: dict[Measure, np.ndarray]
    missing_queries: list[str] = field(default_factory=list)  # in the qrels, not in the run: scored as an empty ranking
    ignored_queries: list[str] = field(default_factory=list)  # in the run, not in the qrels: not scored
    run_tag: str | None = None  # the run file's tag (trec_eval's runid)
    complete: bool = True  # the 'all' row is over every qrels query (trec_eval -c); False: those the run has
    zscored: bool = False  # values are standardised (trec_eval -Z; see zscores.py)

    def label(self, measure: Measure, trec: bool = False) -> str:
        """The measure's name as printed: trec_eval's or semrel's, with a Z before standardised values."""
        name = measure.trec_name if trec else measure.name
        return f"Z{name}" if self.zscored and measure.kind is not Kind.TEXT else name

    @property
    def scored(self) -> np.ndarray:
        """Which of `query_ids` the 'all' row is over: all of them, or (complete=False) those the run has."""
        if self.complete or not self.missing_queries:
            return np.ones(len(self.query_ids), dtype=bool)
        return ~np.isin(np.array(self.query_ids, dtype=object), np.array(self.missing_queries, dtype=object))

    @property
    def scored_ids(self) -> list[str]:
        return [q for q, keep in zip(self.query_ids, self.scored.tolist()) if keep]

    def aggregate(self, measure: Measure | str) -> Any:
        """The 'all' row: the mean over the scored queries (the sum for counts such as NumRet, the
        geometric mean for gm_map)."""
        m = parse_measure(measure)
        return m.entry.aggregate(self.values[m][self.scored])

    def aggregates(self) -> dict[str, Any]:
        """{measure name: its 'all' value}, in the order the measures were given."""
        return {m.name: self.aggregate(m) for m in self.values}

    def per_query(self, measure: Measure | str) -> dict[str, Any]:
        """{query id: value} of one measure, every scored query included (with complete=True, those
        the run lacks score what an empty ranking scores)."""
        m = parse_measure(measure)
        keep = self.scored
        return {q: v for q, v, k in zip(self.query_ids, self.values[m].tolist(), keep.tolist()) if k}

    def per_query_values(self) -> dict[Measure, dict[str, Any]]:
        """{measure: {query id: value}} over the scored queries."""
        return {m: self.per_query(m) for m in self.values}

    def per_query_rows(self, measures: Sequence[Measure] | None = None) -> list[tuple[str, list[tuple[Measure, Any]]]]:
        """[(query id, [(measure, value), ...]), ...] over the scored queries, in query order."""
        chosen = list(self.values) if measures is None else list(measures)
        columns = [self.values[m].tolist() for m in chosen]
        return [(q, [(m, column[i]) for m, column in zip(chosen, columns)])
                for i, (q, keep) in enumerate(zip(self.query_ids, self.scored.tolist())) if keep]


class _QrelsIndex:
    """Qrels prepared once, for evaluating any number of runs.

    (query, doc) pairs are found by 64-bit fingerprint and confirmed on the ids, so a run's
    ten million doc ids are hashed once instead of being put in a hash table of strings.
    """

    def __init__(self, qrels: Qrels):
        self.query_names = pc.unique(qrels.query_ids).sort()
        self.n = len(self.query_names)
        self.query = pc.index_in(qrels.query_ids, value_set=self.query_names).to_numpy().astype(np.int64)
        self.doc_ids = qrels.doc_ids
        self.relevance = qrels.relevance
        keys = pair_fingerprints(self.query, fingerprints(qrels.doc_ids))
        self.by_key = np.argsort(keys, kind="stable")
        self.sorted_keys = keys[self.by_key]
        repeats, self.shared = _repeats(self.by_key, self.sorted_keys, self.query, qrels.doc_ids)
        if repeats:
            row = min(repeats)
            raise duplicate_error(qrels.source, row, qrels.query_ids[row].as_py(), qrels.doc_ids[row].as_py(), "judgment")

    def rows_of(self, query: np.ndarray, prints: np.ndarray, doc_ids: pa.Array | pa.ChunkedArray) -> np.ndarray:
        """The qrels row judging each (query index, doc) pair, or -1; given the docs' fingerprints."""
        rows = np.full(len(query), -1, dtype=np.int64)
        if not len(self.sorted_keys) or not len(query):
            return rows
        keys = pair_fingerprints(query, prints)
        at = np.searchsorted(self.sorted_keys, keys)
        np.minimum(at, len(self.sorted_keys) - 1, out=at)
        found = np.flatnonzero(self.sorted_keys[at] == keys)
        candidates = self.by_key[at[found]]
        same = (self.query[candidates] == query[found]) & _equal(doc_ids.take(found), self.doc_ids.take(candidates))
        rows[found[same]] = candidates[same]
        for i in np.flatnonzero(np.isin(keys, np.fromiter(self.shared, dtype=np.uint64))) if self.shared else ():
            for row in self.shared[int(keys[i])]:  # two judged pairs share a fingerprint: compare each
                if self.query[row] == query[i] and self.doc_ids[row] == doc_ids[int(i)]:
                    rows[i] = row
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
        rank = ranks_within(query)
        keep = gain > 0 if cutoff is None else (gain > 0) & (rank < cutoff)
        return np.bincount(query[keep], weights=gain[keep] / np.log2(rank[keep] + 2.0), minlength=self.n)


def _equal(a: pa.Array | pa.ChunkedArray, b: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return pc.equal(a, b).to_numpy(zero_copy_only=False).astype(bool)


def _repeats(order: np.ndarray, sorted_keys: np.ndarray, query: np.ndarray, doc_ids) -> tuple[list[int], dict[int, list[int]]]:
    """Rows whose (query, doc) repeats an earlier row, and the fingerprints that distinct pairs share.

    `order` sorts the pairs' fingerprints (stably) into `sorted_keys`; equal neighbours are
    candidates, confirmed on the ids. Distinct pairs with one fingerprint are astronomically
    rare but handled, so results never depend on the hash.
    """
    repeats: list[int] = []
    shared: dict[int, list[int]] = {}
    for c in np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1]).tolist():
        a, b = int(order[c]), int(order[c + 1])
        if query[a] == query[b] and doc_ids[a] == doc_ids[b]:
            repeats.append(max(a, b))
        else:
            shared[int(sorted_keys[c])] = sorted({*shared.get(int(sorted_keys[c]), []), a, b})
    return repeats, shared


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


def _refuse_repeated_documents(query: np.ndarray, prints: np.ndarray, doc_ids, run: Run, rows: np.ndarray | None) -> None:
    """A document listed twice for one query is an error, as in trec_eval."""
    keys = pair_fingerprints(query, prints)
    if len(keys) < 2 or not np.any((ordered := np.sort(keys))[1:] == ordered[:-1]):
        return
    order = np.argsort(keys, kind="stable")
    repeats, _ = _repeats(order, keys[order], query, doc_ids)
    if repeats:
        row = min(repeats) if rows is None else int(rows[min(repeats)])
        raise duplicate_error(run.source, row, run.query_ids[row].as_py(), run.doc_ids[row].as_py(), "document in run")


@dataclass(frozen=True)
class Options:
    """How runs are scored besides the measures: trec_eval's -l, -c, -J, -M and -N."""

    rel_level: int = 1  # -l: the lowest grade that counts as relevant
    complete: bool = True  # -c: the 'all' row over every qrels query (False: only those the run has)
    judged_only: bool = False  # -J: drop unjudged documents before scoring (condensed lists)
    depth: int | None = None  # -M: score only each query's top `depth` documents
    num_docs: int = 0  # -N: documents in the collection (utility's non-relevant missed)

    def check(self) -> "Options":
        if self.depth is not None and self.depth < 1:
            raise UsageError(f"the depth (-M) must be at least 1, got {self.depth}")
        if self.num_docs < 0:
            raise UsageError(f"the collection size (-N) cannot be negative, got {self.num_docs}")
        return self


@dataclass(frozen=True)
class _Joined:
    """A run joined to the judged pairs: each kept row's query, rank and qrels row (-1: unjudged)."""

    query: np.ndarray
    rank: np.ndarray
    qrels_row: np.ndarray

    def graded(self, relevance: np.ndarray, options: Options) -> Ranked:
        query, rank, rows = self.query, self.rank, self.qrels_row
        if options.depth is not None and len(rank) and rank.max() >= options.depth:
            keep = rank < options.depth
            query, rank, rows = query[keep], rank[keep], rows[keep]
        judged = rows >= 0
        grade = np.where(judged, relevance[rows], 0)
        if options.judged_only:  # condensed lists: only documents judged with a grade >= 0, ranked among themselves
            keep = judged & (grade >= 0)
            query, rows, judged, grade = query[keep], rows[keep], judged[keep], grade[keep]
            rank = ranks_within(query)
        return Ranked(query=query, rank=rank, gain=np.maximum(grade, 0).astype(np.float64),
                      relevant=judged & (grade >= options.rel_level), judged=judged, grade=grade)


def _join(index: _QrelsIndex, run: Run) -> tuple[_Joined, list[str], list[str]]:
    """Each run row's query, rank and judgment; plus the qrels queries it lacks and those it adds."""
    names, local = dictionary_codes(run.query_ids)
    known = pc.index_in(names, value_set=index.query_names).fill_null(-1).to_numpy().astype(np.int64)
    ignored = [q for q, k in zip(names.to_pylist(), known) if k < 0]
    rows = _order(local, run.scores, run.doc_ids)
    grouped = local if rows is None else local[rows]
    doc_ids = run.doc_ids if rows is None else run.doc_ids.take(rows)
    prints = fingerprints(doc_ids)
    query = known[grouped]
    keep = np.flatnonzero(query >= 0) if (query < 0).any() else None
    with ThreadPoolExecutor(2) as pool:  # both halves release the GIL: two cores, half the wait
        checked = pool.submit(_refuse_repeated_documents, grouped, prints, doc_ids, run, rows)
        if keep is not None:
            query, prints, doc_ids = query[keep], prints[keep], doc_ids.take(keep)
        qrels_rows = index.rows_of(query, prints, doc_ids)
        checked.result()
    present = np.zeros(index.n, dtype=bool)
    present[query] = True
    missing = [q for q, p in zip(index.query_names.to_pylist(), present) if not p]
    return _Joined(query, ranks_within(query), qrels_rows), missing, ignored


def evaluate(
    qrels: Qrels, runs: Run | Iterable[Run], measures: Iterable[Measure | str] | str | None = None, rel_level: int = 1,
    *, complete: bool = True, judged_only: bool = False, depth: int | None = None, num_docs: int = 0,
) -> list[Evaluation]:
    """Evaluate each run on the qrels, in the order given. `measures`: Measure objects or names
    (`"nDCG@10"`, `"ndcg_cut.10"`, `"nDCG@10,RR"`); none given means DEFAULT_MEASURES. The keywords
    are trec_eval's -c, -J, -M and -N (see Options).

    Runs are consumed one at a time, so a generator of runs keeps only one in memory.
    """
    options = Options(rel_level, complete, judged_only, depth, num_docs)
    return evaluate_gradings(qrels, [qrels.relevance], runs, measures, options=options)[0]


def evaluate_gradings(
    qrels: Qrels, gradings: Sequence[np.ndarray], runs: Run | Iterable[Run],
    measures: Iterable[Measure | str] | str | None = None, rel_level: int = 1, *, options: Options | None = None,
) -> list[list[Evaluation]]:
    """Evaluate each run under each grading of the qrels' pairs (`gradings[k][i]`: the grade of
    qrels row i), as result[k][run]. Each run is ordered and joined to the pairs once, so another
    grading (a relabelling at another threshold) costs only the measures."""
    options = (options or Options(rel_level)).check()
    measures = parse_measures(measures)
    index = _QrelsIndex(qrels)
    graded = [index.regraded(np.asarray(g, dtype=np.int64)) for g in gradings]
    if any(len(g.relevance) != len(qrels) for g in graded):
        raise ValueError(f"each grading needs one grade per qrels row ({len(qrels)})")
    contexts = [Context(g, g.num_relevant(options.rel_level), options.rel_level, options.num_docs) for g in graded]
    names = index.query_names.to_pylist()
    results: list[list[Evaluation]] = [[] for _ in graded]
    for run in [runs] if isinstance(runs, Run) else runs:
        joined, missing, ignored = _join(index, run)
        tag = run.tag if run.tag is not None else run.name
        for k, ctx in enumerate(contexts):
            ranked = joined.graded(ctx.qrels.relevance, options)
            scoped = dataclasses.replace(ctx, run_tag=tag)
            values = {m: m.entry.compute(m, ranked, scoped) for m in measures}
            results[k].append(Evaluation(run.name, names, values, missing, ignored, tag, options.complete))
    return results

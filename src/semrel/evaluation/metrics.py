"""trec_eval-exact ranked metrics, computed for all queries at once with numpy.

Semantics follow trec_eval 10.0 (with -c): a run is ordered by score descending, ties by doc
id descending in byte order; relevant means rel >= the relevance level; nDCG uses the graded
rel as a linear gain and ignores the level; queries in the qrels but not in the run score 0.

This module orders each run, joins it to the qrels and hands the joined arrays to each measure's
compute function; which measures exist and how each is computed is the registry's business
(measures.py, one entry per family).
"""

from __future__ import annotations

import contextlib
import copy
import ctypes
import dataclasses
import numbers
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UsageError, check_kind
from ..formats.columns import duplicate_error
from ..records import Qrels, Run, dictionary_codes
from ..terminal import quantity
from .hashing import KeyTable, fingerprints, pair_fingerprints
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
    judged_rows: int | None = None  # the run's rows judged in the qrels (None: not counted)

    def __repr__(self) -> str:  # a notebook shows the object, not thousands of per-query values
        measures = ", ".join(m.name for m in self.values)
        return f"Evaluation({self.run_name!r}: {quantity(len(self.query_ids), 'query')}; {measures})"

    def label(self, measure: Measure, trec: bool = False) -> str:
        """The measure's name as printed: trec_eval's or semrel's, with a Z before standardised values."""
        name = measure.trec_name if trec else measure.name
        return f"Z{name}" if self.zscored and measure.kind is not Kind.TEXT else name

    @property
    def held(self) -> np.ndarray:
        """Which of `query_ids` the run has (the others are scored as empty rankings)."""
        missing = set(self.missing_queries)  # np.isin compares object arrays pair by pair: 24 s for 50,000 queries each
        return np.fromiter((q not in missing for q in self.query_ids), dtype=bool, count=len(self.query_ids))

    @property
    def scored(self) -> np.ndarray:
        """Which of `query_ids` the 'all' row is over: all of them, or (complete=False) those the run has."""
        if self.complete or not self.missing_queries:
            return np.ones(len(self.query_ids), dtype=bool)
        return self.held

    @property
    def scored_ids(self) -> list[str]:
        return [q for q, keep in zip(self.query_ids, self.scored.tolist()) if keep]

    def aggregate(self, measure: Measure | str) -> Any:
        """The 'all' row: the mean over the scored queries (the sum for counts such as NumRet, the
        geometric mean for gm_map), taken in trec_eval's order: the run's queries, then (-c) those it lacks."""
        m = parse_measure(measure)
        values = self.values[m]
        if self.missing_queries:  # held costs a lookup of every query id: only where the order moves
            held = self.held  # also what `scored` is where the 'all' row is over the run's queries alone
            values = np.concatenate([values[held], values[~held]]) if self.complete else values[held]
        return m.entry.aggregate(values)

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


DOC_BITS = 24  # a 16 MB table of judged doc fingerprints lets most unjudged run rows skip the pair lookup


def own_measures(measures, scored: Callable[[Measure], bool], relation: str, names: str) -> list[Measure]:
    """The measures for judgments other than qrels (judgment groups, preferences): those `scored` by
    them, plus num_q and runid; any other is refused, naming what these judgments take."""
    chosen = parse_measures(measures)
    other = [m for m in chosen if not scored(m) and m.family not in ("NumQ", "runid")]
    if other:
        raise UsageError(f"with {relation} the measures are {names}, num_q and runid; {other[0].name} is not one of them")
    return chosen


def own_evaluation(run: Run, chosen: Sequence[Measure], queries: list[str], value: Callable[[Measure], np.ndarray],
                   missing: list[str], ignored: list[str], complete: bool) -> Evaluation:
    """An Evaluation over `queries` whose measures' values come from `value`; num_q and runid as trec_eval prints them."""
    tag = run.tag if run.tag is not None else run.name
    values: dict[Measure, np.ndarray] = {}
    for m in chosen:
        if m.family == "NumQ":
            values[m] = np.ones(len(queries))
        elif m.family == "runid":
            values[m] = np.full(len(queries), tag, dtype=object)
        else:
            values[m] = value(m)
    return Evaluation(run.name, queries, values, missing, ignored, tag, complete)


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
        doc_prints = fingerprints(qrels.doc_ids)
        keys = pair_fingerprints(self.query, doc_prints)
        self.by_key = np.argsort(keys, kind="stable")
        self.sorted_keys = keys[self.by_key]
        repeats, self.shared = _repeats(self.by_key, self.sorted_keys, self.query, qrels.doc_ids)
        if repeats:
            row = min(repeats)
            raise duplicate_error(qrels.source, row, qrels.query_ids[row].as_py(), qrels.doc_ids[row].as_py(), "judgment")
        self.table = KeyTable(keys)
        self._sorted: list[tuple | None] = [None]  # the pairs in ideal order, of one grading at a time: shared by regraded copies
        self._ideal: dict[int | None, np.ndarray] = {}  # each cutoff's ideal DCG under this grading
        self.doc_bits = np.zeros(1 << DOC_BITS, dtype=bool)  # which doc fingerprints (their top bits) the qrels hold
        self.doc_bits[(doc_prints >> np.uint64(64 - DOC_BITS)).astype(np.intp)] = True

    def rows_of(self, query: np.ndarray, prints: np.ndarray, doc_ids: pa.Array | pa.ChunkedArray,
                positions: np.ndarray | None = None) -> np.ndarray:
        """The qrels row judging each (query index, doc) pair, or -1; given the docs' fingerprints.
        `positions`: where each pair's doc is in `doc_ids` (None: pair i is doc_ids[i])."""
        rows = np.full(len(query), -1, dtype=np.int64)
        if not len(self.sorted_keys) or not len(query):
            return rows
        maybe = np.flatnonzero(self.doc_bits[(prints >> np.uint64(64 - DOC_BITS)).view(np.int64)])  # the rest: unjudged docs
        keys = pair_fingerprints(query[maybe], prints[maybe])
        candidates = self.table.find(keys)
        hit = np.flatnonzero(candidates >= 0)
        found, candidates = maybe[hit], candidates[hit]
        at = found if positions is None else positions[found]
        same = (self.query[candidates] == query[found]) & _equal(doc_ids.take(at), self.doc_ids.take(candidates))
        rows[found[same]] = candidates[same]
        for k in np.flatnonzero(np.isin(keys, np.fromiter(self.shared, dtype=np.uint64))) if self.shared else ():
            i = int(maybe[k])
            for row in self.shared[int(keys[k])]:  # two judged pairs share a fingerprint: compare each
                where = i if positions is None else int(positions[i])
                if self.query[row] == query[i] and self.doc_ids[row] == doc_ids[where]:
                    rows[i] = row
        return rows

    def regraded(self, relevance: np.ndarray) -> "_QrelsIndex":
        """The same judged pairs with other grades (one per qrels row): nothing is re-indexed."""
        other = copy.copy(self)
        other.relevance, other._ideal = relevance, {}
        return other

    def num_relevant(self, level: int) -> np.ndarray:
        return np.bincount(self.query[self.relevance >= level], minlength=self.n).astype(np.float64)

    def ideal_dcg(self, cutoff: int | None) -> np.ndarray:
        """Per query: the DCG of its judged pairs in the best order (cut at `cutoff`). Each cutoff's is kept for the next
        run; the pairs, sorted once per grading, are kept for one grading at a time (a sweep's 20 gradings held 24 bytes a
        pair each)."""
        if cutoff not in self._ideal:
            held = self._sorted[0]
            if held is None or held[0] is not self.relevance:
                gain = np.maximum(self.relevance, 0).astype(np.float64)
                order = np.lexsort((-gain, self.query))
                held = self._sorted[0] = (self.relevance, self.query[order], gain[order], ranks_within(self.query[order]))
            _, query, gain, rank = held
            keep = gain > 0 if cutoff is None else (gain > 0) & (rank < cutoff)
            self._ideal[cutoff] = np.bincount(query[keep], weights=gain[keep] / np.log2(rank[keep] + 2.0), minlength=self.n)
        return self._ideal[cutoff].copy()  # each run's values its own array


def _equal(a: pa.Array | pa.ChunkedArray, b: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return pc.equal(a, b).to_numpy(zero_copy_only=False).astype(bool)


def _repeats(order: np.ndarray, sorted_keys: np.ndarray, query: np.ndarray,
             doc_ids: pa.Array | pa.ChunkedArray) -> tuple[list[int], dict[int, list[int]]]:
    """Rows whose (query, doc) repeats an earlier row, and the fingerprints that distinct pairs share.

    `order` sorts the pairs' fingerprints (stably) into `sorted_keys`; the rows of a run of equal
    fingerprints are candidates, compared on the ids all together (neighbours alone missed a repeat
    with another pair of its fingerprint between its rows). Distinct pairs with one fingerprint are
    astronomically rare but handled, so results never depend on the hash.
    """
    repeats: list[int] = []
    shared: dict[int, list[int]] = {}
    same = sorted_keys[1:] == sorted_keys[:-1]
    for start in np.flatnonzero(same & ~np.concatenate([[False], same[:-1]])).tolist():  # each run's first row
        end = start + 1
        while end < len(sorted_keys) and sorted_keys[end] == sorted_keys[start]:
            end += 1
        rows = sorted(int(r) for r in order[start:end])
        first: dict[tuple, int] = {}
        for row in rows:
            pair = (int(query[row]), doc_ids[row].as_py())
            if first.setdefault(pair, row) != row:
                repeats.append(row)
        if len(first) > 1:
            shared[int(sorted_keys[start])] = rows
    return repeats, shared


def _order(run_query: np.ndarray, scores: np.ndarray, doc_ids: pa.Array | pa.ChunkedArray, threads: int = 2,
           starts: np.ndarray | None = None) -> np.ndarray | None:
    """Row order grouping queries, scores descending, ties by doc id descending (byte order), as
    trec_eval ranks; None when the rows are already in that order (the common case for files
    written by retrieval systems), which saves the sort.

    `run_query` numbers queries by first appearance, so a run whose queries come in contiguous
    blocks (nearly all) needs no grouping: each block is sorted on its own, blocks of one size
    together as the rows of one array, split over `threads`. Only tied rows have their doc ids compared.
    """
    n = len(scores)
    if n < 2:
        return None
    if starts is None:  # the first row of each block of equal query codes
        starts, _ = _blocks(run_query)
    block_codes = run_query[starts]
    contiguous = bool(np.all(block_codes[1:] > block_codes[:-1]))  # codes count up: one block per query
    if contiguous:
        step = np.diff(scores)
        step[starts[1:] - 1] = -1.0  # the step into the next query's block is not compared
        if not np.any(step > 0):
            tied = np.flatnonzero(step == 0)
            if not len(tied) or _doc_ids_descend(doc_ids, tied):
                return None
        grouped = None
    else:
        grouped = np.argsort(run_query, kind="stable")  # interleaved queries: gather each query's rows first
    query = run_query if grouped is None else run_query[grouped]
    keys = -scores if grouped is None else -scores[grouped]
    if grouped is not None:
        starts, lengths = _blocks(query)
    else:
        lengths = np.diff(np.r_[starts, n])
    within = _sort_blocks(keys, starts, lengths, threads)
    order = within if grouped is None else grouped[within]
    sorted_scores = scores[order]
    tie = (query[1:] == query[:-1]) & (sorted_scores[1:] == sorted_scores[:-1])
    if tie.any():
        order = _break_ties(order, tie, doc_ids)
    return order


def rank_order(run: Run) -> np.ndarray:
    """The run's row numbers in trec_eval's rank order: each query's rows together (queries in order
    of first appearance), score descending, ties by doc id descending in byte order."""
    _, codes, starts = query_codes(run.query_ids)
    order = _order(codes, run.scores, run.doc_ids, starts=starts)
    return np.arange(len(run)) if order is None else order


def _blocks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    return starts, np.diff(np.r_[starts, len(values)])


def _doc_ids_descend(doc_ids: pa.Array | pa.ChunkedArray, tied: np.ndarray) -> bool:
    """Whether each tied row's doc id comes after the next row's in byte order (already ranked)."""
    first, second = doc_ids.take(tied), doc_ids.take(tied + 1)
    return bool(pc.all(pc.greater(first, second)).as_py())


def _grids(starts: np.ndarray, lengths: np.ndarray) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """Blocks of rows laid out as 2-D arrays: per group of blocks, (row numbers as a 2-D array, which
    cells are inside a block, None where all are). Blocks of one length share an array; with many
    lengths, blocks are padded to the next power of two."""
    distinct = np.unique(lengths)
    exact = len(distinct) <= 32
    width = lengths if exact else np.maximum(1, 1 << np.ceil(np.log2(np.maximum(lengths, 1))).astype(np.int64))
    grids: list[tuple[np.ndarray, np.ndarray | None]] = []
    for size in (distinct if exact else np.unique(width)).tolist():
        chosen = np.flatnonzero(width == size)
        column = np.arange(size)
        rows = starts[chosen][:, None] + column[None, :]
        if exact:
            grids.append((rows, None))
        else:
            inside = column[None, :] < lengths[chosen][:, None]
            grids.append((np.where(inside, rows, 0), inside))
    return grids


def _split(count: int, threads: int) -> list[slice]:
    step = max(1, -(-count // max(threads, 1)))
    return [slice(i, i + step) for i in range(0, count, step)]


def _sort_blocks(keys: np.ndarray, starts: np.ndarray, lengths: np.ndarray, threads: int) -> np.ndarray:
    """A permutation sorting each block of rows by `keys`, blocks kept in place (equal keys in any
    order): the blocks as the rows of 2-D arrays (see _grids), each sorted along its rows, the
    arrays split over `threads` (numpy's sort releases the GIL)."""
    order = np.empty(len(keys), dtype=np.int64)
    for rows, inside in _grids(starts, lengths):

        def sort(part: slice, rows=rows, inside=inside) -> None:
            block = rows[part]
            if inside is None:
                first, count, size = int(block[0, 0]), block.shape[0], block.shape[1]
                if int(block[-1, 0]) == first + (count - 1) * size:  # blocks back to back: a view, no gather
                    ranked = np.argsort(keys[first : first + count * size].reshape(count, size), axis=1)
                    ranked += np.arange(first, first + count * size, size)[:, None]
                    order[first : first + count * size] = ranked.ravel()
                else:
                    order[block] = np.take_along_axis(block, np.argsort(keys[block], axis=1), axis=1)
                return
            cells = inside[part]
            ranked = np.argsort(np.where(cells, keys[block], np.inf), axis=1)  # padding sorts last
            picked = np.take_along_axis(block, ranked, axis=1)
            order[block[cells]] = picked[np.take_along_axis(cells, ranked, axis=1)]

        parts = _split(len(rows), threads if len(keys) > 100_000 else 1)
        if len(parts) > 1:
            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(sort, parts))
        else:
            sort(parts[0])
    return order


def _break_ties(order: np.ndarray, tie: np.ndarray, doc_ids: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Within each run of tied (query, score) rows of `order`, doc ids descending in byte order."""
    tied = np.flatnonzero(np.r_[tie, False] | np.r_[False, tie])  # positions in `order` within a tie
    group = np.cumsum(np.r_[True, tied[1:] != tied[:-1] + 1] | np.r_[True, ~tie[tied[1:] - 1]])
    table = pa.table({"group": group, "doc": doc_ids.take(order[tied])})
    ranked = pc.sort_indices(table, sort_keys=[("group", "ascending"), ("doc", "descending")]).to_numpy()
    fixed = order.copy()
    fixed[tied] = order[tied[ranked]]
    return fixed


def _repeated_rows(block: np.ndarray, prints: np.ndarray, doc_ids, starts: np.ndarray, lengths: np.ndarray) -> list[int]:
    """Rows that list a document already listed for their query (trec_eval refuses such a run), for rows
    in blocks of one query each (`block`: each row's block; `starts`, `lengths`: the blocks). Each
    block's fingerprints are sorted on their own; only where two are equal are the ids compared."""
    if len(prints) < 2 or not _blocks_repeat(prints, starts, lengths):
        return []
    return _repeated_pairs(block, prints, doc_ids)


def repeated_rows(query_code: np.ndarray, doc_ids: pa.Array | pa.ChunkedArray) -> list[int]:
    """Rows whose (query, doc) repeats an earlier row, for rows in any order (`query_code`: each row's query).
    Each query's fingerprints are first sorted on their own (_blocks_repeat): the whole run is sorted only
    where one repeats."""
    prints = fingerprints(doc_ids)
    grouped = None if not len(query_code) or np.all(query_code[1:] >= query_code[:-1]) else np.argsort(query_code, kind="stable")
    codes, ordered = (query_code, prints) if grouped is None else (query_code[grouped], prints[grouped])
    starts, lengths = _blocks(codes)
    if len(prints) < 2 or not _blocks_repeat(ordered, starts, lengths):
        return []
    return _repeated_pairs(query_code, prints, doc_ids)


def refuse_repeats(run: Run, query_code: np.ndarray | None = None) -> None:
    """A document listed twice for one query is an error (trec_eval's rule): every step that reads a
    ranking (eval, fuse, pool, fill) would count it twice. Names the first row that repeats an earlier one
    (`query_code`: each row's query, where the caller has it)."""
    repeats = repeated_rows(dictionary_codes(run.query_ids)[1] if query_code is None else query_code, run.doc_ids)
    if repeats:
        row = min(repeats)
        raise duplicate_error(run.source, row, run.query_ids[row].as_py(), run.doc_ids[row].as_py(), "document in run")


def _repeated_pairs(group: np.ndarray, prints: np.ndarray, doc_ids) -> list[int]:
    keys = pair_fingerprints(group, prints)
    order = np.argsort(keys, kind="stable")
    return _repeats(order, keys[order], group, doc_ids)[0]


def _blocks_repeat(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> bool:
    """Whether a block of rows holds one value twice (each block sorted on its own, see _grids)."""
    for rows, inside in _grids(starts, lengths):
        if rows.shape[1] < 2:
            continue
        if inside is None:
            first, count, size = int(rows[0, 0]), rows.shape[0], rows.shape[1]
            back_to_back = int(rows[-1, 0]) == first + (count - 1) * size
            grid = values[first : first + count * size].reshape(count, size).copy() if back_to_back else values[rows]
            grid.sort(axis=1)
            if np.any(grid[:, 1:] == grid[:, :-1]):
                return True
            continue
        grid = np.where(inside, values[rows], np.uint64(2**64 - 1))
        grid.sort(axis=1)  # padding (the largest value) sorts last
        if np.any((grid[:, 1:] == grid[:, :-1]) & inside[:, 1:]):
            return True
    return False


@dataclass(frozen=True)
class Options:
    """How runs are scored besides the measures: trec_eval's -l, -c, -J, -M and -N."""

    rel_level: int = 1  # -l: the lowest grade that counts as relevant
    complete: bool = True  # -c: the 'all' row over every qrels query (False: only those the run has)
    judged_only: bool = False  # -J: drop unjudged documents before scoring (condensed lists)
    depth: int | None = None  # -M: score only each query's top `depth` documents
    num_docs: int = 0  # -N: documents in the collection (utility's non-relevant missed)

    def check(self) -> "Options":
        check_kind("depth", self.depth, (numbers.Integral,), "a whole number of documents, at least 1")
        check_kind("num_docs", self.num_docs, (numbers.Integral,), "the collection size, a whole number of 0 or more", required=True)
        check_kind("rel_level", self.rel_level, (numbers.Integral,), "the lowest relevant grade, a whole number", required=True)
        if self.depth is not None and self.depth < 1:
            raise UsageError(f"depth={self.depth!r}: give a whole number of documents, at least 1")
        if self.num_docs < 0:
            raise UsageError(f"num_docs={self.num_docs!r}: give the collection size, a whole number of 0 or more")
        if self.rel_level < 0:  # a negative grade marks a document unjudged, never relevant
            raise UsageError(f"rel_level={self.rel_level!r}: give the lowest relevant grade, a whole number of 0 or more")
        return self


@dataclass(frozen=True)
class _Joined:
    """A run joined to the judged pairs: its judged rows' query, rank and qrels row, grouped by query in
    rank order, and how many documents each qrels query returned."""

    query: np.ndarray
    rank: np.ndarray
    qrels_row: np.ndarray
    retrieved: np.ndarray

    def graded(self, relevance: np.ndarray, options: Options) -> Ranked:
        query, rank, rows, retrieved = self.query, self.rank, self.qrels_row, self.retrieved
        if options.depth is not None:
            depth = min(options.depth, np.iinfo(np.int64).max)  # a deeper -M (-M 1e20) cuts nothing, and numpy's int64 holds no more
            keep = rank < depth
            query, rank, rows, retrieved = query[keep], rank[keep], rows[keep], np.minimum(retrieved, depth)
        grade = relevance[rows]
        if options.judged_only:  # condensed lists: only documents judged with a grade >= 0, ranked among themselves
            keep = grade >= 0
            query, grade = query[keep], grade[keep]
            rank, retrieved = ranks_within(query), np.bincount(query, minlength=len(retrieved))
        return Ranked(query=query, rank=rank, grade=grade, relevant=grade >= options.rel_level, retrieved=retrieved)


SEGMENT_ROWS = 1 << 17  # rows joined together: their temporaries stay in cache and are reused, not faulted in


def _join(index: _QrelsIndex, run: Run) -> tuple[_Joined, list[str], list[str]]:
    """The run's judged rows (query, rank, qrels row) and each query's length; plus the qrels queries
    it lacks and those it adds.

    The rows are joined a segment of whole queries at a time, two segments at once (numpy and Arrow
    release the GIL): fingerprints, the repeated-document check, the order within each query and the
    qrels lookup of a million rows fit in cache, and only the judged rows (a small share of a deep run)
    outlive their segment."""
    names, codes, starts = query_blocks(run.query_ids)
    known = pc.index_in(names, value_set=index.query_names).fill_null(-1).to_numpy().astype(np.int64)
    ignored = [q for q, k in zip(names.to_pylist(), known) if k < 0]
    lengths = np.diff(np.r_[starts, len(run)])
    doc_ids, scores, source = run.doc_ids, run.scores, None
    if len(codes) and not np.all(codes[1:] > codes[:-1]):  # a query's rows in several blocks: gather them
        source = np.argsort(np.repeat(codes, lengths), kind="stable")
        doc_ids, scores = doc_ids.take(pa.array(source)), scores[source]
        lengths = np.bincount(codes, weights=lengths, minlength=len(names)).astype(np.int64)
        codes, starts = np.arange(len(names)), np.r_[0, np.cumsum(lengths)[:-1]].astype(np.int64)
    part = partial(_join_segment, index, known[codes], starts, lengths, doc_ids, scores)
    with ThreadPoolExecutor(2) as pool:
        parts = list(pool.map(part, _segments_of(lengths, SEGMENT_ROWS)))
    repeats = [row for *_, rows in parts for row in rows]
    if repeats:
        row = min(repeats if source is None else source[repeats].tolist())
        raise duplicate_error(run.source, row, run.query_ids[row].as_py(), run.doc_ids[row].as_py(), "document in run")
    retrieved = np.zeros(index.n, dtype=np.int64)
    judged = known[codes] >= 0
    retrieved[known[codes][judged]] = lengths[judged]
    missing = [q for q, count in zip(index.query_names.to_pylist(), retrieved.tolist()) if not count]
    query, rank, qrels_rows = (np.concatenate([p[i] for p in parts]) if parts else np.zeros(0, dtype=np.int64) for i in range(3))
    return _Joined(query, rank, qrels_rows, retrieved), missing, ignored


def _segments_of(lengths: np.ndarray, rows: int) -> list[slice]:
    """Consecutive blocks in groups of about `rows` rows (a longer block alone)."""
    ends = np.cumsum(lengths)
    cuts = np.unique(np.searchsorted(ends, np.arange(rows, int(ends[-1]) if len(ends) else 0, rows), side="left"))
    bounds = [0, *(cuts + 1).tolist(), len(lengths)]
    return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def _join_segment(index: _QrelsIndex, query_of_block: np.ndarray, starts: np.ndarray, lengths: np.ndarray, doc_ids,
                  scores: np.ndarray, blocks: slice) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
    """One segment of whole queries (`blocks`): its judged rows (qrels query, rank, qrels row) in rank
    order, and the rows (of the whole run) that repeat a document of their query."""
    first, size = int(starts[blocks.start]), int(lengths[blocks].sum())
    within, counts = starts[blocks] - first, lengths[blocks]
    docs = doc_ids.slice(first, size)
    block = np.repeat(np.arange(len(counts)), counts)
    prints = fingerprints(docs)
    repeats = [first + row for row in _repeated_rows(block, prints, docs, within, counts)]
    order = _order(block, scores[first : first + size], docs, threads=1, starts=within)
    query = np.repeat(query_of_block[blocks], counts)
    if (query < 0).any():  # queries the qrels lack: never judged
        keep = np.flatnonzero(query >= 0)
        qrels_rows = np.full(size, -1, dtype=np.int64)
        qrels_rows[keep] = index.rows_of(query[keep], prints[keep], docs, keep)
    else:
        qrels_rows = index.rows_of(query, prints, docs)
    place = np.flatnonzero(qrels_rows >= 0 if order is None else (qrels_rows >= 0)[order])  # judged rows, in rank order
    row = place if order is None else order[place]
    return query[row], place - within[block[row]], qrels_rows[row], repeats


def query_blocks(query_ids: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """(distinct query ids in order of first appearance, the code of each block of equal ids, the first
    row of each block). Runs list each query's rows together, so only the first id of each block is hashed."""
    chunks = [c for c in (query_ids.chunks if isinstance(query_ids, pa.ChunkedArray) else [query_ids]) if len(c)]
    with ThreadPoolExecutor(2) as pool:  # Arrow's comparison releases the GIL: the chunks two at a time
        inside = list(pool.map(lambda c: np.flatnonzero(pc.not_equal(c.slice(1), c.slice(0, len(c) - 1)).to_numpy(
            zero_copy_only=False)) + 1, chunks))
    changes, offset, previous = [], 0, None
    for chunk, at in zip(chunks, inside):
        new = previous is None or chunk[0].as_py() != previous
        changes.append(np.r_[[0] if new else [], at].astype(np.int64) + offset)
        offset, previous = offset + len(chunk), chunk[len(chunk) - 1].as_py()
    starts = np.concatenate(changes) if changes else np.zeros(0, dtype=np.int64)
    names, codes = dictionary_codes(query_ids.take(pa.array(starts)))
    return names, codes, starts


def query_codes(query_ids: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """(distinct query ids in order of first appearance, each row's index into them, the first row of
    each block of equal ids): query_blocks with a code per row."""
    names, codes, starts = query_blocks(query_ids)
    return names, np.repeat(codes, np.diff(np.r_[starts, len(query_ids)])), starts


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
    checked: Callable[[Run, Evaluation], None] | None = None,
) -> list[list[Evaluation]]:
    """Evaluate each run under each grading of the qrels' pairs (`gradings[k][i]`: the grade of
    qrels row i), as result[k][run]. Each run is ordered and joined to the pairs once, so another
    grading (a relabelling at another threshold) costs only the measures. `checked(run, result)` (the
    first grading's) is called as each run is scored, while that run is in memory: runs given one at a
    time are gone once the next is read."""
    options = (options or Options(rel_level)).check()
    measures = parse_measures(measures)
    index = _QrelsIndex(qrels)
    graded = [index.regraded(np.asarray(g, dtype=np.int64)) for g in gradings]
    if any(len(g.relevance) != len(qrels) for g in graded):
        raise ValueError(f"each grading needs one grade per qrels row ({len(qrels)})")
    contexts = [Context(g, g.num_relevant(options.rel_level), options.rel_level, options.num_docs) for g in graded]
    names = index.query_names.to_pylist()
    results: list[list[Evaluation]] = [[] for _ in graded]
    with small_pages():
        for run in [runs] if isinstance(runs, Run) else runs:
            _evaluate_run(run, index, contexts, measures, options, names, results)
            if checked is not None:
                checked(run, results[0][-1])
    return results


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
_GLIBC_DEFAULT = 128 * 1024  # glibc's default for both thresholds


def _glibc() -> Any:
    try:
        libc = ctypes.CDLL(None)
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


_scoring = 0  # evaluations under way (nested or on other threads): only the outermost one sets and restores


@contextlib.contextmanager
def small_pages() -> Iterator[None]:
    """Allocator settings for the many short-lived 10M-row arrays of an evaluation, while runs are
    scored. numpy asks the kernel for transparent huge pages for big arrays, and glibc's malloc hands
    each block over 128 KiB back to the kernel when freed, so the next array faults its pages in
    again: together about half the CPU time of a 10M-row evaluation goes to the kernel (page faults,
    zeroing, compaction). Huge pages are turned off (numpy's own switch) and glibc keeps freed blocks
    for reuse (its mmap and trim thresholds raised); afterwards the memory kept is returned
    (malloc_trim) and both are put back (the thresholds at glibc's 128 KiB default)."""
    global _scoring
    try:
        from numpy._core.multiarray import _set_madvise_hugepage  # type: ignore[attr-defined]
    except ImportError:  # numpy's private switch moved or went: keep numpy's default
        _set_madvise_hugepage = None
    libc = _glibc() if sys.platform.startswith("linux") else None
    outermost = _scoring == 0
    _scoring += 1
    previous = _set_madvise_hugepage(False) if _set_madvise_hugepage is not None and outermost else None
    if libc is not None and outermost:
        libc.mallopt(M_MMAP_THRESHOLD, 1 << 30)
        libc.mallopt(M_TRIM_THRESHOLD, 1 << 30)
    try:
        yield
    finally:
        _scoring -= 1
        if outermost:
            if previous is not None and _set_madvise_hugepage is not None:
                _set_madvise_hugepage(previous)
            if libc is not None:
                libc.mallopt(M_MMAP_THRESHOLD, _GLIBC_DEFAULT)
                libc.mallopt(M_TRIM_THRESHOLD, _GLIBC_DEFAULT)
                libc.malloc_trim(0)


def _evaluate_run(run: Run, index: _QrelsIndex, contexts: list[Context], measures: list[Measure], options: Options,
                  names: list[str], results: list[list[Evaluation]]) -> None:
    """One run ordered and joined to the pairs once, then scored under each grading (appended to `results`)."""
    joined, missing, ignored = _join(index, run)
    tag = run.tag if run.tag is not None else run.name
    judged_rows = len(joined.qrels_row)
    for k, ctx in enumerate(contexts):
        ranked = joined.graded(ctx.qrels.relevance, options)
        scoped = dataclasses.replace(ctx, run_tag=tag)
        values = {m: m.entry.compute(m, ranked, scoped) for m in measures}
        results[k].append(Evaluation(run.name, names, values, missing, ignored, tag, options.complete, judged_rows=judged_rows))

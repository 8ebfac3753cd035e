"""Fusing runs: reciprocal rank fusion and score combination (CombSUM, CombMNZ, weighted sum), with
the per-query score normalisations ranx offers. Hybrid retrieval (retrieve.py) fuses through here too.

Every method works on one run's (query, doc) pairs at a time, in trec_eval's rank order (score
descending, ties by doc id descending), per query:

- rrf: each run gives a document 1 / (k + rank), rank from 1, k = 60 (Cormack et al.); the scores
  and the normalisation play no part.
- combsum: the sum of the document's normalised scores over the runs that hold it.
- combmnz: that sum times the number of runs that hold it.
- wsum: the sum of weight x normalised score (weights default to 1 / number of runs).

Normalisations, per run and query, as ranx defines them: none; minmax (s - min) / (max - min);
zscore (s - mean) / standard deviation; sum (s - min) / (sum of s - min x count); a zero
denominator is taken as 1e-9, as ranx does. Each document's contributions are added smallest first,
whatever the order of the runs: float addition is not associative, and summed in run order two documents
whose contributions are the same numbers (rrf ranks 1, 7, 2 and 2, 1, 7 in three runs) could differ in the
last bit, the tie broken by rounding instead of by doc id (ranx sums in run order; its scores differ by an
ulp at most). rrf's k is at most 10^9, well inside where float64 keeps ranks apart: the contributions of ranks
1 apart differ by about 1 / k^2 and a sum rounds by about 1e-16 / k, which meet near k = 1e15 (past 2^63 the
command crashed, and near it k + rank wrapped negative, reversing the ranks).
A query whose scores pass 2^400 in size is first scaled down by a power of two (exact, and every
normalisation is scale-free), so that its span, sum and squares stay within float64.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pyarrow as pa

from ..errors import UsageError, ValidationError
from ..evaluation.measures import ranks_within
from ..evaluation.metrics import query_codes, rank_order
from ..formats.columns import duplicate_error
from ..records import Run, dictionary_codes, one_array

METHODS = ("rrf", "combsum", "combmnz", "wsum")
NORMS = ("none", "minmax", "zscore", "sum")
RRF_K = 60
RRF_K_MAX = 10**9  # see the module docstring: far past any k in use, and far below where float64 loses ranks
_TINY = 1e-9
_LARGEST = 400  # log2 of the largest score normalised as it is


@dataclass(frozen=True)
class FusionSpec:
    """How runs are fused; every field is recorded in the fused run's manifest."""

    method: str = "rrf"
    norm: str | None = None  # None: minmax for the score methods, none for rrf
    weights: tuple[float, ...] | None = None  # wsum: one per run
    rrf_k: int = RRF_K
    depth: int | None = None  # keep each query's top `depth` fused documents (None: all)

    @property
    def normalisation(self) -> str:
        return self.norm if self.norm is not None else "none" if self.method == "rrf" else "minmax"  # '' is no default

    def check(self, runs: int) -> "FusionSpec":
        """This spec, when it can fuse `runs` runs; else a UsageError naming the parameters (`semrel fuse`
        names its options instead, see cli.base.in_flags). The one check of a fusion, for `semrel fuse`
        (before it reads a file), `semrel.fuse` and hybrid retrieval alike."""
        if runs < 2:
            raise UsageError("fuse needs at least two runs")
        if self.method not in METHODS:
            raise UsageError(f"method={self.method!r}: choose one of {', '.join(METHODS)}")
        if self.normalisation not in NORMS:
            raise UsageError(f"norm={self.norm!r}: choose one of {', '.join(NORMS)}")
        if self.method == "rrf" and self.normalisation != "none":
            raise UsageError("norm= does not apply to method='rrf' (it uses ranks only)")
        if self.weights is not None and self.method != "wsum":
            raise UsageError("weights= go with method='wsum'")
        if self.weights is not None and len(self.weights) != runs:
            raise UsageError(f"give one weight per run in weights= ({runs} runs, {len(self.weights)} given)")
        if self.weights is not None and not all(math.isfinite(w) and w >= 0 for w in self.weights):
            raise UsageError(f"weights='{','.join(f'{w:g}' for w in self.weights)}': weights must be finite numbers of 0 or more")
        if self.weights is not None and not any(self.weights):  # every score 0: the order would be the doc ids' alone
            raise UsageError(f"weights='{','.join(f'{w:g}' for w in self.weights)}': give at least one weight above 0")
        if self.rrf_k < 0:
            raise UsageError(f"rrf_k={self.rrf_k}: give 0 or more")
        if self.rrf_k > RRF_K_MAX:  # past int64 it crashed; near it k + rank wrapped negative and the ranks reversed
            raise UsageError(f"rrf_k={self.rrf_k}: give at most {RRF_K_MAX:,} (far larger, 1 / (k + rank) stops telling ranks apart)")
        if self.depth is not None and self.depth < 1:
            raise UsageError(f"depth={self.depth}: give a positive number of documents per query")
        return self

    def params(self, names: Sequence[str]) -> dict:
        return {"method": self.method, "norm": None if self.method == "rrf" else self.normalisation,
                "weights": dict(zip(names, self.weights or [1.0 / len(names)] * len(names))) if self.method == "wsum" else None,
                "rrf_k": self.rrf_k if self.method == "rrf" else None, "depth": self.depth, "runs": list(names),
                "rank_order": "score descending, ties by doc id descending (trec_eval's)",
                "sum_order": "each document's contributions added smallest first (the same numbers, the same sum)"}


@dataclass(frozen=True)
class Ranking:
    """One run as integer arrays grouped by query in rank order: query and doc codes, 0-based rank, score."""

    query: np.ndarray
    doc: np.ndarray
    rank: np.ndarray
    score: np.ndarray


def _blocks(query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if not len(query):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    return starts, np.diff(np.r_[starts, len(query)])


def normalised(ranking: Ranking, norm: str) -> np.ndarray:
    """The ranking's scores normalised per query (see the module docstring)."""
    scores = ranking.score.astype(np.float64)
    if norm == "none" or not len(scores):
        return scores
    starts, lengths = _blocks(ranking.query)
    exponent = np.frexp(np.maximum.reduceat(np.abs(scores), starts))[1]
    if exponent.max() > _LARGEST:
        scores = scores * np.repeat(np.ldexp(1.0, -np.maximum(exponent - _LARGEST, 0)), lengths)
    low = np.repeat(np.minimum.reduceat(scores, starts), lengths)
    if norm == "minmax":
        high = np.repeat(np.maximum.reduceat(scores, starts), lengths)
        return (scores - low) / np.maximum(high - low, _TINY)
    if norm == "zscore":
        mean = np.repeat(np.add.reduceat(scores, starts) / lengths, lengths)
        spread = np.sqrt(np.repeat(np.add.reduceat((scores - mean) ** 2, starts) / lengths, lengths))
        return (scores - mean) / np.maximum(spread, _TINY)
    if norm == "sum":
        total = np.repeat(np.add.reduceat(scores, starts), lengths)
        return (scores - low) / np.maximum(total - low * np.repeat(lengths, lengths), _TINY)
    raise UsageError(f"unknown normalisation {norm!r}; choose one of {', '.join(NORMS)}")


@np.errstate(over="ignore", invalid="ignore")  # scores past float64's range: refused at the end
def fuse_rankings(rankings: Sequence[Ranking], spec: FusionSpec, documents: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query, doc, fused score) of every pair any ranking holds, grouped by query (doc codes below
    `documents`); the core both `fuse_runs` and hybrid retrieval use."""
    spec = spec.check(len(rankings))
    weights = spec.weights or (1.0 / len(rankings),) * len(rankings)
    parts_query, parts_doc, parts_value = [], [], []
    for ranking, weight in zip(rankings, weights):
        if spec.method == "rrf":
            value = 1.0 / (ranking.rank + (spec.rrf_k + 1.0))
        else:
            value = normalised(ranking, spec.normalisation)
            if spec.method == "wsum":
                value = weight * value
        parts_query.append(ranking.query)
        parts_doc.append(ranking.doc)
        parts_value.append(value)
    key = np.concatenate(parts_query).astype(np.int64) * max(documents, 1) + np.concatenate(parts_doc)
    value = np.concatenate(parts_value)
    order = np.lexsort((value, key))  # by pair, each pair's contributions smallest first (module docstring)
    key, value = key[order], value[order]
    first = np.r_[True, key[1:] != key[:-1]] if len(key) else np.zeros(0, dtype=bool)
    pairs, inverse = key[first], np.cumsum(first) - 1
    total = np.bincount(inverse, weights=value, minlength=len(pairs))  # bincount adds in the order given
    if spec.method == "combmnz":
        total = total * np.bincount(inverse, minlength=len(pairs))
    if not np.all(np.isfinite(total)):
        fix = "scale the runs' scores with norm=minmax, zscore or sum" if spec.normalisation == "none" else "give smaller weights="
        raise UsageError(f"method={spec.method!r} norm={spec.normalisation!r} gives fused scores past float64's range: {fix}")
    return pairs // max(documents, 1), pairs % max(documents, 1), total


def _ranking(run: Run, query_codes: np.ndarray, doc_codes: np.ndarray, documents: int) -> Ranking:
    """A run's rows in trec_eval's rank order as codes (`*_codes`: each of the run's rows' code, doc codes
    below `documents`). A document listed twice for one query is refused, as `semrel eval` refuses it: it
    would add two contributions from one run (and count as two runs in combmnz)."""
    _, first = np.unique(query_codes.astype(np.int64) * max(documents, 1) + doc_codes, return_index=True)
    if len(first) < len(run):
        once = np.zeros(len(run), dtype=bool)
        once[first] = True
        row = int(np.argmin(once))  # the first row that repeats an earlier one
        raise duplicate_error(run.source, row, run.query_ids[row].as_py(), run.doc_ids[row].as_py(), "document in run")
    with np.errstate(over="ignore"):  # rank_order compares neighbours' differences: past float64 (1e308 - -1e308) still signed
        order = rank_order(run)
    query = query_codes[order]
    return Ranking(query, doc_codes[order], ranks_within(query), run.scores[order])


def fuse_runs(runs: Sequence[Run], spec: FusionSpec = FusionSpec(), name: str = "fused",
              warn: Callable[[str], None] | None = None) -> Run:
    """The fused run of `runs` (see the module docstring); each query's documents scored once.
    A query any run holds is in the fused run. `warn` hears of a run with no rows (it adds nothing, as
    `pool` says of such a run); when every run has none there is nothing to fuse, and that is an error (an empty
    fused run, written with exit 0, failed only at `semrel eval`, as rerank refuses an empty rerank)."""
    spec = spec.check(len(runs))
    if not any(len(run) for run in runs):
        raise ValidationError(f"nothing to fuse: no run holds a row ({', '.join(run.name for run in runs)})")
    for run in runs:
        if not len(run) and warn:
            warn(f"run {run.name} holds no row: it adds nothing to the fusion")
    query_names, query_all = dictionary_codes(pa.chunked_array([one_array(r.query_ids) for r in runs]).combine_chunks())
    doc_names, doc_all = dictionary_codes(pa.chunked_array([one_array(r.doc_ids) for r in runs]).combine_chunks())
    bounds = np.cumsum([0] + [len(r) for r in runs])
    rankings = [_ranking(r, query_all[a:b], doc_all[a:b], len(doc_names)) for r, a, b in zip(runs, bounds[:-1], bounds[1:])]
    query, doc, score = fuse_rankings(rankings, spec, len(doc_names))
    fused = Run(query_names.take(pa.array(query)), doc_names.take(pa.array(doc)), score, name)
    return top_per_query(fused, spec.depth) if spec.depth else fused


def top_per_query(run: Run, depth: int) -> Run:
    """Each query's `depth` best documents (trec_eval's order)."""
    order = rank_order(run)
    _, codes, _ = query_codes(run.query_ids.take(pa.array(order)))
    keep = order[ranks_within(codes) < depth]
    return Run(run.query_ids.take(pa.array(keep)), run.doc_ids.take(pa.array(keep)), run.scores[keep], run.name)


def fuse_files(paths: Sequence[str | os.PathLike], output: str, spec: FusionSpec = FusionSpec(),
               warn: Callable[[str], None] | None = None) -> Run:
    """Fuse run files into `output` (a TREC run named after it) with its manifest."""
    from ..evaluation.files import read_runs, require_distinct_names, run_names
    from ..formats.manifest import outputs_with_manifests, write_manifest
    from ..formats.trec import run_name, write_run

    require_distinct_names(run_names(paths), paths)  # before reading: one file given twice would count twice
    runs = read_runs(paths)  # named apart, so that the manifest keeps each run's weight
    names = [r.name for r in runs]
    fused = fuse_runs(runs, spec, run_name(output) if output != "-" else "fused", warn)
    with outputs_with_manifests([output]) as staged:
        write_run(fused, staged[output])
        write_manifest(output, inputs=list(paths), params={"fusion": spec.params(names)}, rows=len(fused), staged=staged,
                       holds="run")
    return fused

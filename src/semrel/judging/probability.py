"""What the judge needs for each pair's probability of relevance p (semrel.judging.labels has the model).

The null sample: the NULL_SAMPLE non-blank corpus chunks with the smallest seeded hash of their id
(the judge's one streaming pass keeps them, as it keeps `--rescale corpus` candidates), encoded
once and scored against every judged query's reference(s), leaving out the query's own judged
chunks: (query, null chunk) pairs scored like any other, so they resume from the checkpoint too.

Per judged pair the judge keeps, until its query's pool is complete, each reference token's best
cosine over the chunk (a row of the query's table; per query its reference tokens' idf) for
`own_idf`, then drops them: memory follows the pool, not the corpus. Everything else p needs (R, P,
F, the idf-weighted recall, the null statistics, token counts) is a number per pair or query.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from . import labels
from .bertscore import weighted_mean
from .checkpoint import pack, unpack

Pair = tuple[str, str, tuple[str, ...]]


def idf_sample(candidates: Sequence[tuple[int, str]], texts: Mapping[str, str]) -> list[str]:
    """The texts the idf weights of p are counted on: the first IDF_SAMPLE candidates (seeded hash order)."""
    return [texts[c] for _, c in candidates[: labels.IDF_SAMPLE]]


def null_pairs(queries: Sequence[str], candidates: Sequence[tuple[int, str]], judged: Mapping[str, set[str]]) -> list[tuple[str, str]]:
    """(query, chunk) for every query and null chunk (`candidates`, smallest hash first) that the
    query's own pool does not hold."""
    return [(q, c) for q in queries for _, c in candidates if c not in judged.get(q, ())]


def _standing(values: np.ndarray, null_mean: np.ndarray, best: np.ndarray, floor: float) -> np.ndarray:
    """Where each pair stands between its query's null mean (0) and its pool's best (1): relR_idf on the
    idf-weighted R, lexR_rel on the exact-token share; the denominator at least `floor`."""
    return (values - null_mean) / np.maximum(best - null_mean, floor)


class PoolFeatures:
    """The per-pair inputs of p, gathered as pairs are scored (in any order) or resumed.

    `add` takes a pair's token bests (the tokens of its query's references one after another), its
    query's references' token idf (one array each, 0 for the special tokens), its chunk's token count
    and its query's mean reference length. A query's token bests fill one table, a row a pair, made
    when its first pair arrives: one array copy a pair, where an array per pair and reference, stacked
    at the end, cost p a few percent of the judge's time. Once the last pair arrives, `own_idf` is
    computed for the query's pairs and the table is dropped.
    """

    def __init__(self, work: Sequence[Pair], with_gold: Mapping[str, bool]):
        self.queries = list(dict.fromkeys(q for q, _, _ in work))
        self.index = {q: k for k, q in enumerate(self.queries)}
        self.of = [self.index[q] for q, _, _ in work]  # each pair's query, as a list: `add` reads it a pair at a time
        self.query_of = np.array(self.of, dtype=np.int64)
        self.with_gold = np.array([bool(with_gold.get(q)) for q in self.queries])
        counts = np.bincount(self.query_of, minlength=len(self.queries))
        firsts = np.cumsum(counts) - counts
        order = np.argsort(self.query_of, kind="stable")
        self.members = [order[first : first + count] for first, count in zip(firsts.tolist(), counts.tolist())]  # in work order
        slot = np.empty(len(work), dtype=np.int64)
        slot[order] = np.arange(len(work)) - np.repeat(firsts, counts)
        self.slot = slot.tolist()  # each pair's row in its query's table
        self.left = counts.tolist()  # per query: its pairs still to come
        self.tokens: dict[int, np.ndarray] = {}  # per query with pairs to come: (its pairs, its reference tokens)
        self.idf: dict[int, list[np.ndarray]] = {}  # per query: its references' token idf (the same for each of its pairs)
        self.chunk_tokens = [0] * len(work)  # a list: set a pair at a time, where a numpy slot costs a scalar conversion each
        self.ref_tokens = np.full(len(self.queries), np.nan)
        self.own = np.full(len(work), np.nan)
        self.held = self.peak = 0  # rows of token bests held, and the most at once (for the manifest: memory follows the pool)
        self.written: set[int] = set()  # queries whose idf weights a checkpoint row of this run holds

    def add(self, i: int, bests: np.ndarray, weights: list[np.ndarray], chunk_tokens: int, ref_tokens: float) -> None:
        k = self.of[i]
        table = self.tokens.get(k)
        if table is None:
            table = self.tokens[k] = np.empty((len(self.members[k]), len(bests)), dtype=np.float32)
            self.idf[k], self.ref_tokens[k] = weights, ref_tokens
            self.held += len(table)
            self.peak = max(self.peak, self.held)
        table[self.slot[i]] = bests
        self.chunk_tokens[i] = chunk_tokens
        self.left[k] -= 1
        if self.left[k] == 0:
            self._own(k)

    def _own(self, k: int) -> None:
        """own_idf = max over references of the idf-weighted share of tokens where the pair is within
        OWN_MARGIN of the pool's best; tokens of weight 0 (the special ones) count for nothing, so they
        are left out."""
        pairs, table, end = self.members[k], self.tokens.pop(k), 0
        self.held -= len(table)
        for r, weights in enumerate(self.idf.pop(k)):
            counted = weights > 0
            bests, end = table[:, end : end + len(weights)][:, counted], end + len(weights)  # (pairs, the reference's tokens)
            hit = (bests >= bests.max(axis=0) - labels.OWN_MARGIN).astype(np.float64)
            share = weighted_mean(hit, weights[counted].astype(np.float64), np.zeros(1, dtype=np.int64), axis=1)[:, 0] \
                if hit.shape[1] else np.zeros(len(pairs))
            self.own[pairs] = share if r == 0 else np.maximum(self.own[pairs], share)

    def row(self, i: int, bests: np.ndarray, weights: list[np.ndarray], chunk_tokens: int, ref_tokens: float) -> dict[str, Any]:
        """What a checkpoint row keeps for the pair (restored by `restore`). The idf weights and the mean
        reference length are the same for every pair of a query, so only the query's first row of each run
        holds them."""
        row = {"tok": pack(bests, "<f4"), "tokens": int(chunk_tokens)}
        k = self.of[i]
        if k not in self.written:
            self.written.add(k)
            row["tokw"], row["ref_tokens"] = [pack(w, "<f4") for w in weights], float(ref_tokens)
        return row

    def restore(self, i: int, row: Mapping[str, Any]) -> bool:
        """A checkpoint row's features back in; False when the row has none (or the per-reference token
        lists of an older semrel), or lacks the query's weights and no earlier row of its query gave them
        (then the pair is rescored)."""
        k = self.of[i]
        try:
            bests, tokens = unpack(row["tok"], "<f4"), int(row["tokens"])
            if "tokw" in row:
                weights, ref_tokens = [unpack(t, "<f4") for t in row["tokw"]], float(row["ref_tokens"])
            else:
                weights, ref_tokens = self.idf[k], float(self.ref_tokens[k])
        except (KeyError, TypeError, ValueError):
            return False
        if len(bests) != sum(len(w) for w in weights):
            return False
        self.add(i, bests, weights, tokens, ref_tokens)
        return True

    def compute(self, scores: np.ndarray, null_scores: np.ndarray, null_queries: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(features (pairs, len(FEATURES) + 1: with_gold last), p (NaN where the query has no null chunk)).

        `scores`: the pairs' raw P, R, F, idf-weighted R and exact-token share; `null_scores`: the same of
        the null pairs, whose queries are `null_queries`."""
        nq = len(self.queries)
        at = np.array([self.index[q] for q in null_queries], dtype=np.int64)
        count = np.bincount(at, minlength=nq).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):  # Ri and lex: their mean over each query's null chunks
            mean = np.column_stack([np.bincount(at, weights=null_scores[:, c], minlength=nq) / count for c in (3, 4)])
        highest = np.full((nq, 5), -np.inf)
        if len(at):
            np.maximum.at(highest, at, null_scores)
        highest[count == 0] = np.nan
        q = self.query_of
        p_, f_, ri, lex = scores[:, 0], scores[:, 2], scores[:, 3], scores[:, 4]
        best = np.full((nq, 2), -np.inf)  # Ri and lex: their best over each query's pool
        np.maximum.at(best, q, scores[:, 3:5])
        with np.errstate(divide="ignore"):  # a reference of special tokens alone: log(0), -inf, so the pair gets no p (below)
            lenratio = np.log(self.ref_tokens[q] / np.maximum(np.array(self.chunk_tokens, dtype=np.int64), 1))
        columns = {
            "relR_idf": _standing(ri, mean[q, 0], best[q, 0], 1e-3),
            "R_idf_max": ri - highest[q, 3], "F_max": f_ - highest[q, 2], "P_max": p_ - highest[q, 0],
            "own_idf": self.own,
            "lenratio": lenratio,
            "lexR_rel": np.clip(_standing(lex, mean[q, 1], best[q, 1], labels.LEX_FLOOR), -1.0, 1.0),
        }
        features = np.column_stack([columns[name] for name in labels.FEATURES] + [self.with_gold[q].astype(np.float64)])
        with np.errstate(invalid="ignore"):
            p = labels.probability(features[:, :-1], self.with_gold[q])
        p[~np.isfinite(features).all(axis=1)] = np.nan
        return features, p

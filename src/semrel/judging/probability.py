"""What the judge needs for each pair's probability of relevance p (semrel.judging.labels has the model).

The null sample: the NULL_SAMPLE non-blank corpus chunks with the smallest seeded hash of their id
(the judge's one streaming pass keeps them, as it keeps `--rescale corpus` candidates), encoded
once and scored against every judged query's reference(s), leaving out the query's own judged
chunks: (query, null chunk) pairs scored like any other, so they resume from the checkpoint too.

Per judged pair the judge keeps, until its query's pool is complete, each reference token's best
cosine over the chunk (for `own`), then drops them: memory follows the pool, not the corpus.
Everything else p needs (R, P, F, the null statistics, token counts) is a number per pair or query.
"""

from __future__ import annotations

import base64
from collections import Counter
from typing import Any, Mapping, Sequence

import numpy as np

from . import labels

Pair = tuple[str, str, tuple[str, ...]]


def null_pairs(queries: Sequence[str], candidates: Sequence[tuple[int, str]], judged: Mapping[str, set[str]]) -> list[tuple[str, str]]:
    """(query, chunk) for every query and null chunk (`candidates`, smallest hash first) that the
    query's own pool does not hold."""
    return [(q, c) for q in queries for _, c in candidates if c not in judged.get(q, ())]


def pack(values: np.ndarray) -> str:
    """float32 values as base64 (exact, and a quarter the size of JSON numbers) for the checkpoint."""
    return base64.b64encode(np.ascontiguousarray(values, dtype="<f4").tobytes()).decode("ascii")


def unpack(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f4").astype(np.float32)


class PoolFeatures:
    """The per-pair inputs of p, gathered as pairs are scored (in any order) or resumed.

    `add` takes a pair's token bests (one float32 array per reference, non-special reference
    tokens only), its chunk's token count and its query's mean reference length; once the last
    pair of a query arrives, `own` is computed for the query's pairs and the arrays are dropped.
    """

    def __init__(self, work: Sequence[Pair], with_gold: Mapping[str, bool]):
        self.queries = list(dict.fromkeys(q for q, _, _ in work))
        index = {q: k for k, q in enumerate(self.queries)}
        self.query_of = np.array([index[q] for q, _, _ in work], dtype=np.int64)
        self.with_gold = np.array([bool(with_gold.get(q)) for q in self.queries])
        self.members: list[list[int]] = [[] for _ in self.queries]
        for i, k in enumerate(self.query_of.tolist()):
            self.members[k].append(i)
        self.left = Counter(self.query_of.tolist())
        self.tokens: dict[int, list[np.ndarray]] = {}
        self.chunk_tokens = np.zeros(len(work), dtype=np.int64)
        self.ref_tokens = np.full(len(self.queries), np.nan)
        self.own = np.full(len(work), np.nan)
        self.peak = 0  # most token arrays held at once (for the manifest: memory follows the pool)

    def add(self, i: int, bests: list[np.ndarray], chunk_tokens: int, ref_tokens: float) -> None:
        k = int(self.query_of[i])
        self.tokens[i], self.chunk_tokens[i], self.ref_tokens[k] = bests, chunk_tokens, ref_tokens
        self.peak = max(self.peak, len(self.tokens))
        self.left[k] -= 1
        if self.left[k] == 0:
            self._own(k)

    def _own(self, k: int) -> None:
        """own = max over references of the share of tokens where the pair is within OWN_MARGIN of the pool's best."""
        pairs = self.members[k]
        arrays = [self.tokens.pop(i) for i in pairs]
        for r in range(len(arrays[0])):
            best = np.max(np.stack([a[r] for a in arrays]), axis=0)
            for i, a in zip(pairs, arrays):
                share = float(np.mean(a[r] >= best - labels.OWN_MARGIN)) if len(best) else 0.0
                self.own[i] = share if r == 0 else max(self.own[i], share)

    @staticmethod
    def row(bests: list[np.ndarray], chunk_tokens: int, ref_tokens: float) -> dict[str, Any]:
        """What a checkpoint row keeps for the pair (restored by `restore`)."""
        return {"tok": [pack(b) for b in bests], "tokens": int(chunk_tokens), "ref_tokens": float(ref_tokens)}

    def restore(self, i: int, row: Mapping[str, Any]) -> bool:
        """A checkpoint row's features back in; False when the row has none (then the pair is rescored)."""
        try:
            bests = [unpack(t) for t in row["tok"]]
            tokens, ref_tokens = int(row["tokens"]), float(row["ref_tokens"])
        except (KeyError, TypeError, ValueError):
            return False
        self.add(i, bests, tokens, ref_tokens)
        return True

    def compute(self, scores: np.ndarray, null_scores: np.ndarray, null_queries: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(features (pairs, len(FEATURES) + 1: with_gold last), p (NaN where the query has no null chunk)).

        `scores`: the pairs' raw P, R, F; `null_scores`: raw P, R, F of the null pairs, whose queries
        are `null_queries`."""
        index = {q: k for k, q in enumerate(self.queries)}
        nq = len(self.queries)
        at = np.array([index[q] for q in null_queries], dtype=np.int64)
        count = np.bincount(at, minlength=nq).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_r = np.bincount(at, weights=null_scores[:, 1], minlength=nq) / count
        highest = np.full((nq, 3), -np.inf)
        if len(at):
            np.maximum.at(highest, at, null_scores)
        highest[count == 0] = np.nan
        q = self.query_of
        p_, r_, f_ = scores[:, 0], scores[:, 1], scores[:, 2]
        best = np.full(nq, -np.inf)
        np.maximum.at(best, q, r_)
        mu = mean_r[q]
        columns = {
            "relR": (r_ - mu) / np.maximum(best[q] - mu, 1e-3),
            "R_max": r_ - highest[q, 1], "F_max": f_ - highest[q, 2], "P_max": p_ - highest[q, 0],
            "own": self.own,
            "lenratio": np.log(self.ref_tokens[q] / np.maximum(self.chunk_tokens, 1)),
        }
        features = np.column_stack([columns[name] for name in labels.FEATURES] + [self.with_gold[q].astype(np.float64)])
        with np.errstate(invalid="ignore"):
            p = labels.probability(features[:, :-1], self.with_gold[q])
        p[~np.isfinite(features).all(axis=1)] = np.nan
        return features, p

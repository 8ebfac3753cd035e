"""The order in which pairs are shown: the judge's least certain first, mixed with a seeded
uniform random sample, so agreement is measured on the whole range and the sample supports
unbiased corrected estimates (semrel.analysis.ppi)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

ORDERS = ("uncertain", "random", "query", "query-sample")
RANDOM_SHARE = 0.25  # uncertain order: the share of positions a seeded random sample takes (unbiased estimates)


def distance_to_threshold(scores: np.ndarray, thresholds: Sequence[float]) -> np.ndarray:
    """How far each score is from the nearest threshold: small means the judge is unsure."""
    gaps = np.abs(np.asarray(scores, dtype=np.float64)[:, None] - np.asarray(thresholds, dtype=np.float64)[None, :])
    return gaps.min(axis=1)


@dataclass(frozen=True)
class Queue:
    """Item indices in review order; sample_rank[i] is the item's place in the uniform random
    sample (-1 for items that are not in it)."""

    order: np.ndarray
    sample_rank: np.ndarray


def review_queue(
    distance: np.ndarray, query_ids: Sequence[str], order: str = "uncertain", random_share: float = RANDOM_SHARE,
    seed: int = 0, limit: int | None = None,
) -> Queue:
    """The first `limit` items (default all) in review order.

    uncertain: a fraction `random_share` of the positions, spread evenly, is taken by a seeded
    random permutation of all items; the rest by increasing distance to a threshold. Items the
    permutation reaches that are already queued count as sampled without taking a position, so
    the sampled items in any prefix of the queue are a prefix of the permutation: a simple
    random sample of the whole pool (ranks are given only up to the limit, so every sampled
    item is in the queue). random: the permutation itself. query: by query, then distance (no
    random sample). query-sample: whole queries in a seeded random order, each by distance; every item of a query
    takes the query's place in that order as its sample rank (none where the limit cuts the query), so the queries
    reviewed whole are a simple random sample of the pool's queries (semrel.analysis.ppi corrects by them).
    """
    n = len(distance)
    size = n if limit is None else min(n, limit)
    permutation = np.random.default_rng(seed).permutation(n)
    sample_rank = np.full(n, -1, dtype=np.int64)
    if order == "random":
        sample_rank[permutation[:size]] = np.arange(size)
        return Queue(permutation[:size], sample_rank)
    if order in ("query", "query-sample"):
        names, codes = np.unique(np.asarray(query_ids, dtype=object), return_inverse=True)
        if order == "query":
            return Queue(np.lexsort((distance, codes))[:size], sample_rank)
        place = np.empty(len(names), dtype=np.int64)
        place[np.random.default_rng(seed).permutation(len(names))] = np.arange(len(names))
        ranked = np.lexsort((distance, place[codes]))
        whole = ~np.isin(codes, codes[ranked[size:]])  # the queries the limit leaves whole
        sample_rank[whole] = place[codes[whole]]
        return Queue(ranked[:size], sample_rank)
    if order != "uncertain":
        raise ValueError(f"unknown order {order!r}")
    by_distance = np.argsort(distance, kind="stable")
    queued = np.zeros(n, dtype=bool)
    result: list[int] = []
    next_sample = next_certain = 0
    for position in range(size):
        if np.floor((position + 1) * random_share) > np.floor(position * random_share):
            while queued[permutation[next_sample]]:  # already queued by distance: sampled in place
                sample_rank[permutation[next_sample]] = next_sample
                next_sample += 1
            item = permutation[next_sample]
            sample_rank[item] = next_sample
            next_sample += 1
        else:
            while queued[by_distance[next_certain]]:
                next_certain += 1
            item = by_distance[next_certain]
        queued[item] = True
        result.append(int(item))
    return Queue(np.asarray(result, dtype=np.int64), sample_rank)

"""Near-duplicate queries (by sentence embedding) and what depends on them: dedup and split.

Both use one grouping, so a split never puts two near-duplicates on different sides and dedup
removes exactly what the split would have kept together.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np

from ..errors import UsageError
from ..progress import Steps, no_progress
from ..records import GoldenItem
from .validate import normalised_query

BLOCK = 1024


@dataclass(frozen=True)
class NearDuplicates:
    """Groups of text indices (each sorted, groups ordered by first index) and the embeddings."""

    groups: list[list[int]]
    embeddings: np.ndarray

    def similarity(self, i: int, j: int) -> float:
        return float(self.embeddings[i] @ self.embeddings[j])


def _find(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def _join(parent: list[int], i: int, j: int) -> None:
    a, b = _find(parent, i), _find(parent, j)
    if a != b:
        parent[max(a, b)] = min(a, b)


def near_duplicate_groups(
    texts: Sequence[str], threshold: float, model: str | None = None, steps: Steps = no_progress
) -> NearDuplicates:
    """Texts joined (transitively) when their embeddings' cosine is >= `threshold`, or when they
    are equal after case and spacing are ignored."""
    from ..encoding.sentences import sentence_embeddings

    if not 0 < threshold <= 1:
        raise UsageError(f"threshold= must be in (0, 1], not {threshold}")
    with steps("embedding queries", len(texts)) as advance:
        embeddings = sentence_embeddings(list(texts), model, advance)
    parent = list(range(len(texts)))
    first: dict[str, int] = {}
    for i, text in enumerate(texts):
        _join(parent, first.setdefault(normalised_query(text), i), i)
    for lo in range(0, len(texts), BLOCK):
        similar = embeddings[lo : lo + BLOCK] @ embeddings.T >= threshold - 1e-6
        for a, b in zip(*np.nonzero(similar)):
            if lo + a < b:
                _join(parent, lo + int(a), int(b))
    groups: dict[int, list[int]] = {}
    for i in range(len(texts)):
        groups.setdefault(_find(parent, i), []).append(i)
    return NearDuplicates(sorted(groups.values()), embeddings)


def dedup_report(items: Sequence[GoldenItem], found: NearDuplicates) -> list[dict[str, Any]]:
    """One row per group with duplicates: the item kept (the first) and the others with their
    similarity to it."""
    rows = []
    for group in found.groups:
        if len(group) < 2:
            continue
        keep = items[group[0]]
        rows.append({
            "keep": {"query_id": keep.query_id, "query": keep.query},
            "duplicates": [
                {"query_id": items[i].query_id, "query": items[i].query, "similarity": round(found.similarity(group[0], i), 4)}
                for i in group[1:]
            ],
        })
    return rows


def deduplicated(items: Sequence[GoldenItem], found: NearDuplicates) -> list[GoldenItem]:
    """The first item of each group, in the original order; the ids it stands for go in its meta."""
    kept = []
    for group in sorted(found.groups, key=lambda g: g[0]):
        item = items[group[0]]
        if len(group) > 1:
            item = replace(item, meta={**item.meta, "duplicates_removed": [items[i].query_id for i in group[1:]]})
        kept.append(item)
    return kept


def split_targets(total: int, ratios: Sequence[float] | None, sizes: Sequence[int] | None) -> list[int]:
    """How many items each part should get: `sizes` as given, or `ratios` of `total` (a missing
    last ratio is the rest, so `0.8` means 80/20)."""
    if sizes:
        if any(s <= 0 for s in sizes):
            raise UsageError(f"sizes={','.join(map(str, sizes))!r}: sizes must be positive query counts")
        if sum(sizes) > total:
            raise UsageError(f"sizes={','.join(map(str, sizes))!r} ask for more than the {total} queries there are")
        return list(sizes)
    ratios = list(ratios or [0.8])
    if any(r <= 0 for r in ratios) or sum(ratios) > 1 + 1e-9:
        raise UsageError("ratio= values must be positive and sum to at most 1")
    if sum(ratios) < 1 - 1e-9:
        ratios.append(1 - sum(ratios))
    targets = [int(round(r * total)) for r in ratios[:-1]]
    return [*targets, total - sum(targets)]


def split_groups(groups: Sequence[Sequence[int]], targets: Sequence[int], seed: int) -> list[list[int]]:
    """Item indices per part: groups are shuffled by `seed` and each goes whole to the first part
    with room for it (else the one with most room left, when the targets cover every item);
    indices are sorted within parts. With `--sizes` summing below the total, the rest is left out."""
    order = np.random.default_rng(seed).permutation(len(groups))
    parts: list[list[int]] = [[] for _ in targets]
    covers_all = sum(targets) == sum(len(g) for g in groups)
    for g in order:
        group = groups[g]
        room = [t - len(p) for t, p in zip(targets, parts)]
        fits = [k for k, r in enumerate(room) if r >= len(group)]
        if fits:
            parts[fits[0]].extend(group)
        elif covers_all:
            parts[int(np.argmax(room))].extend(group)
    return [sorted(p) for p in parts]

"""Near-duplicate queries (by sentence embedding) and what depends on them: dedup and split.

Both use one grouping, so a split never puts two near-duplicates on different sides and dedup
removes exactly what the split would have kept together.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, replace
from typing import Any, Iterable, Sequence

import numpy as np

from ..errors import UsageError
from ..progress import Steps, no_progress
from ..records import GoldenItem
from ..terminal import agreeing
from .validate import normalised_query

NEAR_DUPLICATE = 0.95  # the cosine of two queries' vectors at which they count as one (dedup, split)
BLOCK = 1024
PAIRS = 1 << 22  # the most similarities compared at once: bounds the memory of a block's similar pairs


@dataclass(frozen=True)
class NearDuplicates:
    """Groups of text indices (each sorted, groups ordered by first index) and the embeddings."""

    groups: list[list[int]]
    embeddings: np.ndarray

    def similarity(self, i: int, j: int) -> float:
        return float(self.embeddings[i] @ self.embeddings[j])


class _Groups:
    """Each text's group as the smallest index in it, kept in a numpy array and merged a block of
    pairs at a time by scipy's connected components: no Python loop over pairs, which made a cluster
    of k near-identical queries cost k * k union-find steps."""

    def __init__(self, n: int) -> None:
        self.root = np.arange(n)

    def join(self, a: np.ndarray, b: np.ndarray) -> None:
        """Join text a[k] with text b[k] for every k."""
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        ra, rb = self.root[a], self.root[b]
        apart = ra != rb
        if not apart.any():
            return
        touched, ends = np.unique(np.concatenate([ra[apart], rb[apart]]), return_inverse=True)
        edges = len(ends) // 2
        graph = coo_matrix((np.ones(edges, dtype=bool), (ends[:edges], ends[edges:])), shape=(len(touched), len(touched)))
        _, component = connected_components(graph, directed=False)
        _, first = np.unique(component, return_index=True)  # touched is sorted: a component's first is its smallest
        moved = np.arange(len(self.root))
        moved[touched] = touched[first][component]
        self.root = moved[self.root]

    def groups(self) -> list[list[int]]:
        if not len(self.root):
            return []
        order = np.argsort(self.root, kind="stable")
        starts = np.flatnonzero(np.diff(self.root[order], prepend=-1))
        return [part.tolist() for part in np.split(order, starts[1:])]


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
    found = _Groups(len(texts))
    first: dict[str, int] = {}
    found.join(np.array([first.setdefault(normalised_query(text), i) for i, text in enumerate(texts)], dtype=np.int64),
               np.arange(len(texts)))
    step = max(1, min(BLOCK, PAIRS // max(1, len(texts))))
    for lo in range(0, len(texts), step):
        similar = embeddings[lo : lo + step] @ embeddings.T >= threshold - 1e-6
        rows, columns = np.nonzero(similar & (found.root[lo : lo + step, None] != found.root))
        found.join(rows + lo, columns)
    return NearDuplicates(found.groups(), embeddings)


def joined_by(groups: Sequence[Sequence[int]], keys: Sequence[Iterable[str]]) -> list[list[int]]:
    """`groups` (of item indices) joined, transitively, where two items share one of their `keys` (gold chunks, their
    documents): what `golden split --together` keeps in one part."""
    found = _Groups(len(keys))
    first: dict[str, int] = {}
    pairs = [(group[0], i) for group in groups for i in group[1:]]
    pairs += [(first.setdefault(key, i), i) for i, of_item in enumerate(keys) for key in of_item]
    if pairs:
        found.join(*(np.array(side, dtype=np.int64) for side in zip(*pairs)))
    return found.groups()


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


def _union(*sequences: Sequence[str]) -> tuple[str, ...]:
    """Every value of the sequences once, in the order first seen."""
    return tuple(dict.fromkeys(v for seq in sequences for v in seq))


REMOVED_FIELDS = "duplicates_removed_fields"
MERGED_META = ("grades", "duplicates_removed", REMOVED_FIELDS)  # merged into the kept query's own


def _removed_fields(keep: GoldenItem, removed: Sequence[GoldenItem]) -> dict[str, Any]:
    """{query id: {"meta", "extra"}} of each removed query's fields no merge keeps (COVID-QA's doc_id and answer_spans, a
    user's own top-level keys), and those an earlier dedup kept so: dropped, they were lost with the query."""
    fields: dict[str, Any] = {}
    for item in (keep, *removed):
        if isinstance(earlier := item.meta.get(REMOVED_FIELDS), dict):
            fields.update(earlier)
    for item in removed:
        own = {"meta": {k: v for k, v in item.meta.items() if k not in MERGED_META}, "extra": dict(item.extra)}
        if own := {k: v for k, v in own.items() if v}:
            fields[item.query_id] = own
    return fields


def _merged(keep: GoldenItem, removed: Sequence[GoldenItem]) -> tuple[GoldenItem, list[str]]:
    """`keep` standing for itself and `removed`: the gold chunk ids and reference answers `keep` lacks
    added after its own (in order, each once), grades too where any of them has grades, the removed
    ids in `meta.duplicates_removed` and their other fields in `meta.duplicates_removed_fields`; with one note per removed
    item that brought something."""
    brought = [(r.query_id, [c for c in _union(r.gold_chunk_ids) if c not in keep.gold_chunk_ids],
                [a for a in _union(r.reference_answers) if a.strip() and a not in keep.reference_answers])
               for r in removed]  # what each removed item has that `keep` lacks
    extra_gold = _union(*(gold for _, gold, _ in brought))
    extra_answers = _union(*(answers for _, _, answers in brought))
    answers = keep.reference_answers
    if extra_answers:  # an empty answer of the kept query ("no answer given") makes way for the others'
        answers = (*(a for a in answers if a.strip()), *extra_answers)
    earlier = [str(q) for i in (keep, *removed) if isinstance(i.meta.get("duplicates_removed"), list)
               for q in i.meta["duplicates_removed"]]  # from an earlier dedup: still removed, still listed
    meta: dict[str, Any] = {**keep.meta, "duplicates_removed": list(_union([r.query_id for r in removed], earlier))}
    if extra_answers:  # the kept query has an answer now: a no_answer left beside it said it had none
        meta.pop("no_answer", None)
    if fields := _removed_fields(keep, removed):
        meta[REMOVED_FIELDS] = fields
    if any(isinstance(i.meta.get("grades"), dict) and i.meta["grades"] for i in (keep, *removed)):
        grades: dict[str, int] = {}
        for i in (keep, *removed):  # the kept query's grade wins; gold without grades counts as 1, as in qrels
            own = i.meta.get("grades")
            for chunk, grade in (own.items() if isinstance(own, dict) and own else ((c, 1) for c in i.gold_chunk_ids)):
                grades.setdefault(str(chunk), grade)
        meta["grades"] = grades
    notes = []
    for query_id, new_gold, new_answers in brought:
        said = ([f"gold chunks {', '.join(new_gold)}"] if new_gold else []) + \
               ([f"reference answers {', '.join(map(repr, new_answers))}"] if new_answers else [])
        if said:
            notes.append(f"query {query_id!r}, removed as a near-duplicate of {keep.query_id!r}, had "
                         f"{' and '.join(said)} that {keep.query_id!r} lacked: merged into {keep.query_id!r}")
    return replace(keep, gold_chunk_ids=(*keep.gold_chunk_ids, *extra_gold), reference_answers=answers, meta=meta), notes


def deduplicated(items: Sequence[GoldenItem], found: NearDuplicates,
                 notes: list[str] | None = None) -> list[GoldenItem]:
    """The first item of each group, in the original order, standing for the whole group: the gold
    chunk ids and reference answers of the others are merged into it (nothing is lost) and their ids
    listed in its `meta.duplicates_removed`. With `notes`, one line is appended to it for each removed
    item that brought gold chunks or answers the kept one lacked."""
    kept = []
    for group in sorted(found.groups, key=lambda g: g[0]):
        item = items[group[0]]
        if len(group) > 1:
            item, said = _merged(item, [items[i] for i in group[1:]])
            if notes is not None:
                notes.extend(said)
        kept.append(item)
    return kept


def split_targets(total: int, ratios: Sequence[float] | None, sizes: Sequence[int] | None) -> list[int]:
    """How many items each part should get: `sizes` as given, or `ratios` of `total` (a missing
    last ratio is the rest, so `0.8` means 80/20). NaN and infinity are refused: NaN passes no
    comparison, so it would slip past every range check below."""
    if sizes:
        if any(not math.isfinite(s) or s != int(s) or s <= 0 for s in sizes):
            raise UsageError(f"sizes={','.join(map(str, sizes))!r}: sizes must be positive query counts")
        if sum(sizes) > total:
            asked = f"sizes={','.join(map(str, sizes))!r} {agreeing(len(sizes), 'ask')}"
            raise UsageError(f"{asked} for more than the {total} queries there are")
        return [int(s) for s in sizes]  # numpy's ints too: they go into manifests
    ratios = list(ratios or [0.8])
    if not all(math.isfinite(r) for r in ratios):
        raise UsageError(f"ratio={','.join(map(str, ratios))!r}: ratios must be finite numbers, e.g. 0.8")
    if any(r <= 0 for r in ratios) or sum(ratios) > 1 + 1e-9:
        raise UsageError("ratio= values must be positive and sum to at most 1")
    if sum(ratios) < 1 - 1e-9:
        ratios.append(1 - sum(ratios))
    targets = [int(round(r * total)) for r in ratios[:-1]]
    return [*targets, total - sum(targets)]


def split_groups(groups: Sequence[Sequence[int]], targets: Sequence[int], seed: int, keys: Sequence[str]) -> list[list[int]]:
    """Item indices per part: groups are ordered by a seeded hash of their smallest key (the query id),
    and each goes whole to the first part with room for it (else the one with most room left, when the
    targets cover every item); indices are sorted within parts. With `--sizes` summing below the total,
    the rest is left out. A hash, not a shuffle of the file's order: the same queries in another order
    split alike, and a query added moves about one other across each boundary (a shuffle moved most)."""
    def rank(g: int) -> tuple[bytes, int]:
        key = min(keys[i] for i in groups[g])
        return hashlib.blake2b(f"{seed}\n{key}".encode("utf-8", "surrogatepass"), digest_size=8).digest(), g

    parts: list[list[int]] = [[] for _ in targets]
    covers_all = sum(targets) == sum(len(g) for g in groups)
    for g in sorted(range(len(groups)), key=rank):
        group = groups[g]
        room = [t - len(p) for t, p in zip(targets, parts)]
        fits = [k for k, r in enumerate(room) if r >= len(group)]
        if fits:
            parts[fits[0]].extend(group)
        elif covers_all:
            parts[int(np.argmax(room))].extend(group)
    return [sorted(p) for p in parts]

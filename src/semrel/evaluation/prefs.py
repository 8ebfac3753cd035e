"""Preference judgments and the prefs_* measures (trec_eval -R prefs and -R qrels_prefs).

A judgment group (one user's view of a query) states preferences through its subgroups: in each, a
document is preferred to every one with a lower value. A group with one subgroup is a set of levels; with
several, a partial order, closed under transitivity here (A>B in one subgroup, B>C in another: A>C) and
refused where it contradicts itself. Groups may disagree with each other. qrels read as preferences
(-R qrels_prefs) are one subgroup per group: each grade is preferred to every lower one.

A preference A>B is fulfilled where the run ranks A above B, or retrieves A and not B; it is counted
among the preferences with both documents retrieved, with one (implied), or with neither. The prefs_*
measures are ratios of those counts (measures.PREFS_MEASURES says what each is). As trec_eval does, the
run is ranked here by score with ties broken by ascending doc id (not descending, as for qrels), and
a value of 0 marks a non-relevant document, which the *_Rnonrel measures cap at as many as the relevant ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyarrow.compute as pc

from ..errors import FormatError, ValidationError
from ..formats.columns import duplicate_error, line_number
from ..formats.files import display_name
from ..records import Preferences, Run, dictionary_codes
from .metrics import Evaluation, Options, own_evaluation, own_measures


@dataclass(frozen=True)
class _Group:
    """One judgment group's preferences on a query: the documents (ids in the query's order: retrieved
    ones first, by rank), which is preferred to which, and each one's value."""

    docs: np.ndarray  # query-wide ids, ascending
    prefer: np.ndarray  # prefer[i, j]: docs[i] is preferred to docs[j]
    value: np.ndarray
    levels: bool  # one subgroup: the values are levels (trec_eval's equivalence classes)
    retrieved: int  # the query's retrieved judged documents (ids below it)


@dataclass(frozen=True)
class _Tally:
    """One query's counts: per judgment group, the preferences fulfilled and failed by scope (both
    retrieved, one, neither), its two *_Rnonrel ratios; per document pair, the summed share of its
    preferences fulfilled and the number of pairs, by scope."""

    counts: np.ndarray  # (groups, 5): fulfilled both-retrieved, failed both-retrieved, fulfilled one, failed one, neither
    rnonrel: list[float]
    rnonrel_ret: list[float]
    pairs: tuple[float, int, float, int, int]  # share sum and pairs both retrieved, same with one retrieved, pairs with neither


def evaluate_preferences(prefs: Preferences, run: Run, measures, options: Options = Options()) -> Evaluation:
    """The run scored on preference judgments, per query of `prefs` (sorted by id); queries only in the
    run are ignored, those it lacks score as an empty ranking. `options.depth` (-M) cuts each ranking."""
    chosen = own_measures(measures, lambda m: m.entry.prefs, "preference judgments (relation='prefs' or relation='qrels_prefs')",
                          "the prefs_* ones (all_prefs)")
    rows: dict[str, list[int]] = {}
    for row, q in enumerate(prefs.query_ids):
        rows.setdefault(q, []).append(row)
    queries = sorted(rows, key=str.encode)
    rankings = _rankings(run, options.depth)
    scores = [_scores(_tally(prefs, q, rows[q], rankings.get(q, []))) for q in queries]
    return own_evaluation(run, chosen, queries, lambda m: np.array([s[m.family] for s in scores]),
                          [q for q in queries if q not in rankings], [q for q in rankings if q not in rows], options.complete)


def _rankings(run: Run, depth: int | None) -> dict[str, list[str]]:
    """Each query's doc ids in trec_eval's preference order (score descending, doc id ascending), cut at `depth`."""
    names, codes = dictionary_codes(run.query_ids)
    by_doc = pc.rank(run.doc_ids, sort_keys="ascending", tiebreaker="dense").to_numpy()
    order = np.lexsort((by_doc, -run.scores, codes))
    starts = np.flatnonzero(np.r_[True, codes[order][1:] != codes[order][:-1]]) if len(order) else order
    docs = run.doc_ids.take(order).to_pylist()
    rankings = {}
    for query, start, end in zip(names.take(codes[order[starts]]).to_pylist(), starts, [*starts[1:], len(order)]):
        ranking = docs[start:end]
        if len(set(ranking)) < len(ranking):
            twice = next(i for i in range(start, end) if docs[i] in docs[start:i])
            raise duplicate_error(run.source, int(order[twice]), query, docs[twice], "document in run")
        rankings[query] = ranking[:depth]
    return rankings


def _tally(prefs: Preferences, query: str, rows: list[int], ranking: list[str]) -> _Tally:
    """Count the preferences of one query's judgment groups against its ranking."""
    judged = {prefs.doc_ids[r] for r in rows}
    retrieved = [d for d in ranking if d in judged]
    kept = set(retrieved)
    order = retrieved + sorted((d for d in judged if d not in kept), key=str.encode)
    ident = {d: i for i, d in enumerate(order)}
    together = np.zeros((len(order), len(order)), dtype=np.int64)  # per pair, the groups preferring i to j
    groups: dict[str, list[int]] = {}
    for r in rows:
        groups.setdefault(prefs.groups[r], []).append(r)
    counts, rnonrel, rnonrel_ret = [], [], []
    for name in sorted(groups, key=str.encode):
        group = _group(prefs, f"query {query!r}, group {name!r}", groups[name], ident, len(retrieved))
        together[np.ix_(group.docs, group.docs)] += group.prefer
        areas = _areas(group, group.prefer)
        counts.append(areas)
        rnonrel.append(_rnonrel(group, areas, retrieved_only=False))
        rnonrel_ret.append(_rnonrel(group, areas, retrieved_only=True))
    return _Tally(np.array(counts, dtype=np.int64).reshape(-1, 5), rnonrel, rnonrel_ret, _pairs(together, len(retrieved)))


def _group(prefs: Preferences, where: str, rows: list[int], ident: dict[str, int], retrieved: int) -> _Group:
    """One judgment group's preference relation, checked: a document once per subgroup and, across
    several subgroups, never both non-relevant (0) and relevant (> 0), nor preferred both ways."""
    subgroups: dict[str, list[int]] = {}
    for r in sorted(rows, key=lambda r: prefs.subgroups[r].encode()):
        subgroups.setdefault(prefs.subgroups[r], []).append(r)
    ids = np.array([ident[prefs.doc_ids[r]] for r in rows], dtype=np.int64)
    docs = np.unique(ids)
    prefer = np.zeros((len(docs), len(docs)), dtype=bool)
    value = np.zeros(len(docs))
    zero, positive = np.zeros(len(docs), dtype=bool), np.zeros(len(docs), dtype=bool)
    for name, members in subgroups.items():
        local = np.searchsorted(docs, [ident[prefs.doc_ids[r]] for r in members])
        if len(set(local.tolist())) < len(local):
            twice = next(r for k, r in enumerate(members) if local[k] in local[:k])
            raise _format_error(prefs, twice, f"{where}: doc {prefs.doc_ids[twice]!r} is twice in subgroup {name!r}")
        given = prefs.values[members]
        prefer[np.ix_(local, local)] |= given[:, None] > given[None, :]
        value[local] = given  # across subgroups, the last one's value (by name), as trec_eval keeps it
        zero[local] |= given == 0
        positive[local] |= given > 0
    levels = len(subgroups) == 1
    if not levels:
        if (zero & positive).any():
            doc = docs[np.flatnonzero(zero & positive)[0]]
            mine = [r for r in sorted(rows) if ident[prefs.doc_ids[r]] == doc]
            given = prefs.values[mine]
            row = mine[int(np.argmax(np.logical_or.accumulate(given == 0) & np.logical_or.accumulate(given > 0)))]
            raise _format_error(prefs, row, f"{where}: doc {prefs.doc_ids[row]!r} is non-relevant (0) in one subgroup "
                                            "and relevant (> 0) in another")
        prefer = _closure(prefer)
        clash = np.argwhere(prefer & prefer.T)
        if len(clash):
            names = {i: d for d, i in ident.items()}
            a, b = (names[int(docs[k])] for k in clash[0])
            raise ValidationError(f"{display_name(prefs.source or 'preferences')}: {where} prefers {a!r} to {b!r} "
                                  f"and {b!r} to {a!r}")
    return _Group(docs, prefer, value, levels, retrieved)


def _format_error(prefs: Preferences, row: int, message: str) -> Exception:
    """A bad preference line: named by file and line where the preferences were read from a file."""
    if prefs.source is None:
        return ValidationError(f"{message} (row {row + 1})")
    return FormatError(display_name(prefs.source), message, line=line_number(prefs.source, row))


def _closure(prefer: np.ndarray) -> np.ndarray:
    """A>B and B>C give A>C: squared until nothing changes (each round doubles the chains' length)."""
    while True:
        step = prefer.astype(np.float32)
        grown = prefer | (step @ step > 0)
        if (grown == prefer).all():
            return prefer
        prefer = grown


def _areas(g: _Group, prefer: np.ndarray, keep: np.ndarray | None = None) -> list[int]:
    """Preferences of `prefer` (among `keep`'s documents) by outcome: fulfilled and failed with both
    documents retrieved, fulfilled and failed with one, and with neither."""
    if keep is not None:
        prefer = prefer & keep[:, None] & keep[None, :]
    first = g.docs[:, None] < g.retrieved
    second = g.docs[None, :] < g.retrieved
    above = g.docs[:, None] < g.docs[None, :]
    won = prefer & first & above
    return [int((won & second).sum()), int((prefer & first & ~above).sum()), int((won & ~second).sum()),
            int((prefer & ~first & second).sum()), int((prefer & ~first & ~second).sum())]


def _rnonrel(g: _Group, areas: list[int], retrieved_only: bool) -> float:
    """prefs_avgjg_Rnonrel's ratio for one group (retrieved_only: prefs_avgjg_Rnonrel_ret's), as trec_eval
    computes it from the group's `areas`: with fewer non-relevant documents N than relevant R, each
    relevant one retrieved fulfils R - N more preferences (and each relevant one adds R - N to those
    judged); with more, only the first R non-relevant ones count. 0/0 is NaN: the query then scores 0."""
    ret = g.docs < g.retrieved
    relevant = g.value > 0
    nonrelevant = g.value <= 0 if g.levels else g.value == 0  # negative values: non-relevant levels, else neither
    num_rel = int(relevant.sum())
    scope = ret if retrieved_only else np.ones(len(ret), dtype=bool)
    big_r, big_n = int((relevant & scope).sum()), int((nonrelevant & scope).sum())
    if big_r >= big_n:
        won = areas[0] + (0 if retrieved_only else areas[2]) + int((relevant & ret).sum()) * (big_r - big_n)
        return _ratio(won, sum(areas[:2] if retrieved_only else areas) + num_rel * (big_r - big_n))
    if g.levels:
        return _ratio(*_capped_levels(g, big_r, retrieved_only))
    dropped = nonrelevant & scope
    dropped &= np.cumsum(dropped) > num_rel  # past the first num_rel non-relevant documents (in scope)
    capped = _areas(g, g.prefer, ~dropped & scope)
    return _ratio(capped[0] + (0 if retrieved_only else capped[2]), sum(capped))


def _capped_levels(g: _Group, cap: int, retrieved_only: bool) -> tuple[int, int]:
    """(fulfilled, judged) for a group of levels whose lowest level keeps its first `cap` documents, as
    trec_eval computes it: the preferences among the other levels, then each document (retrieved, with
    retrieved_only) against each kept one, those of the lowest level itself included (trec_eval's loop
    counts them as judged, and as fulfilled where the first ranks above the second)."""
    last = g.value == g.value.min()
    ret = g.docs < g.retrieved
    kept = g.docs[last][:cap]
    mine = g.docs[ret] if retrieved_only else g.docs
    if retrieved_only:
        kept = kept[kept < g.retrieved]
    upper = ~last & (ret if retrieved_only else True)
    inner = g.prefer & upper[:, None] & upper[None, :]
    won = int((inner & (g.docs[:, None] < g.docs[None, :]) & ret[:, None]).sum())
    won += int(((mine[:, None] < kept[None, :]) & (mine[:, None] < g.retrieved)).sum())
    return won, int(inner.sum()) + len(mine) * len(kept)


def _pairs(together: np.ndarray, retrieved: int) -> tuple[float, int, float, int, int]:
    """Per pair of documents, the share of its preferences that the earlier one wins, summed over the
    pairs with both retrieved and with one, and the number of pairs with both, one and neither."""
    total = together + together.T
    share = np.divide(together, total, out=np.zeros(total.shape), where=total > 0)
    upper = np.triu(np.ones(total.shape, dtype=bool), 1)
    both, one, neither = upper.copy(), upper.copy(), upper.copy()
    both[:, retrieved:] = False
    both[retrieved:, :] = False
    one[:, :retrieved] = False
    one[retrieved:, :] = False
    neither[:retrieved, :] = False
    judged = total > 0
    return (float(share[both].sum()), int((judged & both).sum()), float(share[one].sum()), int((judged & one).sum()),
            int((judged & neither).sum()))


def _ratio(part: float, whole: float, empty: float = math.nan) -> float:
    return part / whole if whole else empty


def _over_groups(ratios: list[float], groups: int) -> float:
    """The mean over the judgment groups, where the sum is positive (NaN or 0: 0), as trec_eval averages."""
    total = sum(ratios)
    return total / groups if total > 0 else 0.0


def _scores(t: _Tally) -> dict[str, float]:
    """Every prefs_* measure of one query."""
    won_both, lost_both, won_one, lost_one, neither = t.counts.T
    share_both, pairs_both, share_one, pairs_one, pairs_neither = t.pairs
    scopes = {  # suffix: fulfilled and judged per group, share sum and pairs
        "": (won_both + won_one, won_both + lost_both + won_one + lost_one + neither,
             share_both + share_one, pairs_both + pairs_one + pairs_neither),
        "_ret": (won_both, won_both + lost_both, share_both, pairs_both),
        "_imp": (won_both + won_one, won_both + lost_both + won_one + lost_one, share_both + share_one, pairs_both + pairs_one),
    }
    groups = len(t.counts)
    values = {"prefs_num_prefs_poss": float(scopes[""][1].sum()), "prefs_num_prefs_ful": float(scopes[""][0].sum()),
              "prefs_num_prefs_ful_ret": float(won_both.sum()),
              "prefs_avgjg_Rnonrel": _over_groups(t.rnonrel, groups), "prefs_avgjg_Rnonrel_ret": _over_groups(t.rnonrel_ret, groups)}
    for suffix, (won, judged, share, pairs) in scopes.items():
        values["prefs_simp" + suffix] = _ratio(won.sum(), judged.sum(), 0.0)
        values["prefs_pair" + suffix] = _ratio(share, pairs, 0.0)
        values["prefs_avgjg" + suffix] = _over_groups([w / j for w, j in zip(won.tolist(), judged.tolist()) if j], groups)
    return values

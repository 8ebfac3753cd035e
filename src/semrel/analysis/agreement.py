"""Agreement between two labellings, and between the system rankings two qrels give: Cohen's
kappa (plain, linear, quadratic), confusion matrices, Kendall's tau-b and seeded bootstrap
intervals, all vectorized with numpy; the pairs of systems whose order swaps.

Kappa functions take confusion matrices with any leading batch shape, so a bootstrap or a
threshold search computes thousands of kappas in one call.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Literal, Mapping, Sequence

import numpy as np

from ..errors import UsageError, ValidationError, tell
from ..evaluation.doclevel import require_overlap
from ..evaluation.files import coverage_warnings
from ..evaluation.measures import Measure, numeric_measures, parse_measures
from ..evaluation.metrics import evaluate
from ..formats.files import display_name
from ..formats.tables import Cell, Table, render
from ..formats.trec import graded_pairs, read_judgment_groups
from ..records import Qrels, Run, is_number
from ..terminal import quantity
from .significance import batch_sizes

AGREE_MEASURES = ("nDCG@10", "AP", "RR", "P@10")
"""The measures `semrel agree` ranks runs by unless told."""
Weights = Literal["none", "linear", "quadratic"]
WEIGHTS: tuple[Weights, ...] = ("none", "linear", "quadratic")
Labels = Sequence[int] | np.ndarray  # one label per item
Values = Sequence[float] | np.ndarray


def on_scale(grades: Labels, top: int | None = None) -> np.ndarray:
    """Grades on a scale of 0..top: a grade above top counts as top, so binary labels and grades 0-3 compare as relevant
    or not, rather than a pair graded 3 and labelled 1 counting as a disagreement; a negative grade (trec_eval's -1 of
    junk, or a document in the pool left unjudged) counts as 0, not relevant, as calibrate counts it. top None: no top."""
    return np.clip(np.asarray(grades, dtype=np.int64), 0, top)


def label_codes(a: Labels, b: Labels, labels: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Both labellings as indices into the sorted label list: the labels given (all a scale
    holds, used or not) plus any other value either labelling uses."""
    first, second = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    if first.shape != second.shape:
        raise ValueError(f"labellings differ in length ({len(first)} and {len(second)})")
    names = sorted(set(labels or ()) | set(first.tolist()) | set(second.tolist()))
    lookup = np.asarray(names, dtype=np.int64)
    return np.searchsorted(lookup, first), np.searchsorted(lookup, second), names


def confusion_matrix(a: Labels, b: Labels, labels: Sequence[int] | None = None) -> tuple[np.ndarray, list[int]]:
    """(counts[i, j] = items labelled labels[i] by a and labels[j] by b, labels)."""
    ca, cb, names = label_codes(a, b, labels)
    k = len(names)
    return np.bincount(ca * k + cb, minlength=k * k).reshape(k, k), names


def weight_matrix(k: int, weights: Weights = "none") -> np.ndarray:
    """Disagreement weights between label positions (as scikit-learn: by position, not value)."""
    i, j = np.indices((k, k))
    if weights == "none":
        return (i != j).astype(np.float64)
    if weights == "linear":
        return np.abs(i - j).astype(np.float64)
    if weights == "quadratic":
        return ((i - j) ** 2).astype(np.float64)
    raise ValueError(f"unknown weights {weights!r}; use one of {', '.join(WEIGHTS)}")


def kappa_from_confusion(confusion: np.ndarray, weights: Weights = "none") -> np.ndarray | float:
    """Cohen's kappa of each k x k matrix in `confusion` (shape (..., k, k)); nan where the
    expected disagreement is zero (both raters constant on one label)."""
    counts = np.asarray(confusion, dtype=np.float64)
    k = counts.shape[-1]
    w = weight_matrix(k, weights)
    total = counts.sum(axis=(-2, -1), keepdims=True)
    expected = counts.sum(axis=-1, keepdims=True) * counts.sum(axis=-2, keepdims=True) / np.where(total > 0, total, 1)
    observed_d = (w * counts).sum(axis=(-2, -1))
    expected_d = (w * expected).sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(expected_d > 0, 1.0 - observed_d / np.where(expected_d > 0, expected_d, 1), np.nan)
    return float(kappa) if kappa.ndim == 0 else kappa


def cohen_kappa(a: Labels, b: Labels, weights: Weights = "none", labels: Sequence[int] | None = None) -> float:
    """Cohen's kappa of two labellings of the same items (equal to scikit-learn's cohen_kappa_score)."""
    confusion, _ = confusion_matrix(a, b, labels)
    return float(kappa_from_confusion(confusion, weights))


TIE = 1e-12  # relative: the mean of the same per-query values summed in another order differs in its last bits


def settled(values: Values) -> np.ndarray:
    """`values` (runs' aggregates) with those that differ by no more than a sum's rounding made one, the smallest of
    them: two runs with the same per-query values in another query order tie, not one ahead in the 17th digit."""
    settled_values = np.array(values, dtype=np.float64)
    order = np.argsort(settled_values, kind="stable")
    for before, i in zip(order, order[1:]):
        if abs(settled_values[i] - settled_values[before]) <= TIE * max(abs(settled_values[i]), abs(settled_values[before])):
            settled_values[i] = settled_values[before]
    return settled_values


def kendall_tau_b(x: Values, y: Values) -> float:
    """Kendall's tau-b (ties counted as in scipy.stats.kendalltau); nan when either side is constant."""
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    i, j = np.triu_indices(len(xs), k=1)
    dx, dy = np.sign(xs[i] - xs[j]), np.sign(ys[i] - ys[j])
    concordance = float((dx * dy).sum())
    untied_x, untied_y = float(np.count_nonzero(dx)), float(np.count_nonzero(dy))
    if untied_x == 0 or untied_y == 0:
        return float("nan")
    return concordance / np.sqrt(untied_x * untied_y)


def bootstrap_interval(
    statistic: Callable[[np.ndarray], np.ndarray | float], n: int, resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile interval of `statistic`, which gives one value per row of a (batch, n) matrix of row indices drawn with
    replacement, called a batch of resamples at a time (batch_sizes: the whole matrix of 1,000 resamples of a million pairs
    is 8 GB); nan values (degenerate resamples) are left out."""
    if n == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)  # batches draw the same indices as one (resamples, n) draw
    values = np.concatenate([np.asarray(statistic(rng.integers(0, n, size=(size, n))), dtype=np.float64).reshape(-1)
                             for size in batch_sizes(resamples, n)])
    values = values[np.isfinite(values)]
    if not len(values):
        return float("nan"), float("nan")
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return float(low), float(high)


def batched_confusion(codes_a: np.ndarray, codes_b: np.ndarray, k: int, rows: np.ndarray) -> np.ndarray:
    """One k x k confusion matrix per row of `rows` (item indices), shape (len(rows), k, k)."""
    cells = codes_a[rows] * k + codes_b[rows] + (np.arange(len(rows)) * k * k)[:, None]
    return np.bincount(cells.ravel(), minlength=len(rows) * k * k).reshape(len(rows), k, k)


@dataclass(frozen=True)
class Agreement:
    """How two labellings of the same items agree."""

    n: int
    percent: float  # share of items with equal labels, 0..100
    kappa: float
    low: float  # bootstrap interval of kappa
    high: float
    weights: Weights
    labels: list[int]
    confusion: list[list[int]]  # rows: first labelling, columns: second
    queries: int | None = None  # the queries the items are pairs of, where they are (query, document) pairs

    def to_json(self) -> dict:
        return {
            "n": self.n, "percent_agreement": self.percent, "kappa": self.kappa, "kappa_low": self.low,
            "kappa_high": self.high, "weights": self.weights, "labels": self.labels, "confusion": self.confusion,
            **({} if self.queries is None else {"queries": self.queries}),
        }


def kappa_undefined(a: Agreement, who: str) -> str | None:
    """Why the kappa of `a` is undefined (nan), as a sentence naming the two labellings `who` ("alice vs bob"); None
    where it is defined. Kappa is (observed - expected agreement) / (1 - expected): with no pair, or where both give
    every pair one grade, both agreements are 1 and kappa is 0/0 (kappa_from_confusion)."""
    if not np.isnan(a.kappa):
        return None
    if not a.n:
        return f"kappa is undefined (nan) for {who}: there is no pair to compare"
    (grade,) = {label for label, row in zip(a.labels, a.confusion) if any(row)}  # one grade only: no other way to 0/0
    return (f"kappa is undefined (nan) for {who}: both give all {a.n} compared pairs grade {grade}, so they agree on every "
            "pair, but chance alone would agree as much")


def default_weights(labels: Labels) -> Weights:
    """Quadratic weights for graded labels (more than two values), plain kappa for binary ones."""
    return "quadratic" if len(set(labels)) > 2 else "none"


def agreement(
    a: Labels, b: Labels, weights: Weights | None = None, labels: Sequence[int] | None = None,
    resamples: int = 1000, seed: int = 0, level: float = 0.95,
) -> Agreement:
    """Percent agreement, kappa (weights chosen from the labels unless given) with a seeded
    bootstrap interval, and the confusion matrix."""
    ca, cb, names = label_codes(a, b, labels)
    k = len(names)
    chosen = weights or default_weights(names)
    confusion = np.bincount(ca * k + cb, minlength=k * k).reshape(k, k)
    low, high = bootstrap_interval(
        lambda rows: kappa_from_confusion(batched_confusion(ca, cb, k, rows), chosen), len(ca), resamples, seed, level
    )
    return Agreement(
        n=len(ca), percent=float((ca == cb).mean() * 100.0) if len(ca) else float("nan"),
        kappa=float(kappa_from_confusion(confusion, chosen)) if len(ca) else float("nan"),
        low=low, high=high, weights=chosen, labels=names, confusion=confusion.tolist(),
    )


def common_labels(ref: Qrels, test: Qrels, unlisted_as_zero: bool = False) -> tuple[list[int], list[int], int]:
    """(ref grades, test grades, the queries they are of) of the pairs both list; with unlisted_as_zero, of every pair
    either lists for a query both hold, the other's missing grade counting as 0. A negative grade counts as 0 (on_scale):
    trec_eval's qrels grade junk -1, and a binary file's 0 against it had counted as a disagreement (kappa 0.770 for
    its qrels.test against qrels.rel_level, whose relevance agrees on all but 2 of 3,681 pairs)."""
    a, b = graded_pairs(ref), graded_pairs(test)
    first, second, queries = [], [], 0
    for query in sorted(a.keys() & b.keys()):
        docs = a[query].keys() | b[query].keys() if unlisted_as_zero else a[query].keys() & b[query].keys()
        queries += bool(docs)
        for doc in sorted(docs):
            first.append(max(a[query].get(doc, 0), 0))
            second.append(max(b[query].get(doc, 0), 0))
    return first, second, queries


def scale(*grades: Labels) -> range:
    """Every grade from 0 to the highest either labelling gives, used or not: weights go by position (weight_matrix), so
    grades 0, 1 and 3 with no 2 would otherwise put 3 one step from 1, and graded labels of two grades would get plain kappa."""
    return range(max((int(max(g)) for g in grades if len(g)), default=0) + 1)


def smaller_scale(first_top: int, second_top: int, first: str, second: str, warn: Callable[[str], None] | None) -> int | None:
    """The top grade two labellings are compared on where their scales differ (`warn` hears of it; `first` names the first
    with its verb, "a.qrels grades"), else None: exact grades would count a relevant pair graded 3 against 1 as a
    disagreement. A top of 0 tells no scale."""
    if first_top == second_top or min(first_top, second_top) <= 0:
        return None
    top = min(first_top, second_top)
    tell([f"{first} up to {first_top} and {second} up to {second_top}: compared on grades 0-{top}, a grade above {top} counting "
          f"as {top}"], warn)
    return top


def label_agreement(ref: Qrels, test: Qrels, unlisted_as_zero: bool = False, resamples: int = 1000, seed: int = 0,
                    warn: Callable[[str], None] | None = None) -> Agreement:
    """Agreement on the pairs both list (or, unlisted_as_zero, either lists), on the scale of the qrels with fewer grades
    (binary labels against grades 0-3: relevant or not, a grade above 1 counting as 1; `warn` hears of it); `warn` also
    hears when one side gives every such pair one grade, so that kappa is 0 whatever the other says (gold qrels list
    only relevant pairs)."""
    first, second, queries = common_labels(ref, test, unlisted_as_zero)
    if not first:
        raise ValidationError(f"{ref.source or 'the first qrels'} and {test.source or 'the second'} share no judged pair "
                              "(different query or document ids?)")
    top = smaller_scale(int(ref.relevance.max()), int(test.relevance.max()),  # both list a pair (`first`)
                        f"{ref.source or 'the first qrels'} grades", test.source or "the second", warn)
    if top is not None:
        first, second = on_scale(first, top).tolist(), on_scale(second, top).tolist()
    result = dataclasses.replace(agreement(first, second, labels=scale(first, second), resamples=resamples, seed=seed), queries=queries)
    undefined = kappa_undefined(result, "the two qrels")
    if undefined:  # 0/0: no agreement beyond chance can be measured
        tell([f"{undefined}; compare pairs of more than one grade"], warn)
    else:
        tell([_one_grade(qrels, grades, unlisted_as_zero) for qrels, grades in ((ref, first), (test, second)) if len(set(grades)) == 1],
             warn)
    return result


def majority(grades: Iterable[int]) -> int:
    """The most common of several people's grades of a pair; a tie goes to the lowest tied grade, the conservative
    choice (review's adjudication and agree's assessor groups settle alike)."""
    counts = Counter(grades)
    top = max(counts.values())
    return min(grade for grade, count in counts.items() if count == top)


def assessor_groups(path: str | os.PathLike) -> list[tuple[str, Qrels]]:
    """The groups of a qrels file whose second column names the assessor (trec_eval's qrels_jg), each named `FILE [group]`
    where a message names it."""
    groups = read_judgment_groups(path)
    if not groups:  # had read 'one only ()', an empty list of assessors
        raise ValidationError(f"{display_name(path)}: no judgments (the file is empty): nothing to compare")
    return [(group, dataclasses.replace(qrels, source=f"{display_name(path)} [{group}]")) for group, qrels in groups]


def majority_qrels(groups: Sequence[tuple[str, Qrels]], source: str | None = None) -> Qrels:
    """One grade per pair any group judged: the majority of the groups that judged it."""
    by_pair: dict[tuple[str, str], list[int]] = {}
    for _, qrels in groups:
        for query, docs in graded_pairs(qrels).items():
            for doc, grade in docs.items():
                by_pair.setdefault((query, doc), []).append(grade)
    pairs = sorted(by_pair)
    return dataclasses.replace(Qrels.from_columns([q for q, _ in pairs], [d for _, d in pairs], [majority(by_pair[p]) for p in pairs]),
                               source=source)


@dataclass(frozen=True)
class GroupAgreement:
    """Labels against several assessors' (trec_eval's qrels_jg, a group an assessor): against each, against their
    majority, and the assessors against each other: how far people agree, the yardstick of a judge's kappa."""

    each: list[tuple[str, Agreement]]
    majority: Agreement
    between: list[tuple[str, str, Agreement]]

    @property
    def between_mean(self) -> float:
        """Light's kappa: the mean of the assessors' pairwise kappas (nan with one assessor)."""
        kappas = [a.kappa for _, _, a in self.between if not np.isnan(a.kappa)]
        return float(np.mean(kappas)) if kappas else float("nan")

    def to_json(self) -> dict:
        return {"each": {group: a.to_json() for group, a in self.each}, "majority": self.majority.to_json(),
                "between": [{"first": f, "second": s, **a.to_json()} for f, s, a in self.between], "between_mean_kappa": self.between_mean}


def group_agreement(groups: Sequence[tuple[str, Qrels]], test: Qrels, unlisted_as_zero: bool = False, seed: int = 0,
                    warn: Callable[[str], None] | None = None) -> GroupAgreement:
    """`test` against each group, against the groups' majority, and each pair of groups against each other (on the pairs both
    judged, or with unlisted_as_zero every pair either lists), all on the smaller of the two scales (binary labels against
    grades 0-3: relevant or not, `warn` hears of it), so that the groups' agreement is the yardstick of test's and the
    majority is the groups' on that scale. A group of other queries than another's agrees with it on nothing (nan)."""
    top = smaller_scale(max(int(q.relevance.max()) for _, q in groups if len(q.relevance)), int(test.relevance.max()),
                        "the assessors grade", test.source or "the labels", warn)
    groups = [(group, _on_scale(qrels, top)) for group, qrels in groups]  # negative grades 0 before the majority is taken,
    test = _on_scale(test, top)  # as common_labels counts them: -1, -2, 1, 1 is 0, 0, 1, 1, a tie that goes to 0

    def against(ref: Qrels, labels: Qrels) -> Agreement:
        a, b, queries = common_labels(ref, labels, unlisted_as_zero)  # assessors of other queries: no pair, nan
        return dataclasses.replace(agreement(a, b, labels=scale(a, b), seed=seed), queries=queries)

    return GroupAgreement([(group, against(qrels, test)) for group, qrels in groups], against(majority_qrels(groups), test),
                          [(f, s, against(a, b)) for (f, a), (s, b) in itertools.combinations(groups, 2)])


def _on_scale(qrels: Qrels, top: int | None) -> Qrels:
    return dataclasses.replace(qrels, relevance=on_scale(qrels.relevance, top))


def _one_grade(qrels: Qrels, grades: list[int], unlisted_as_zero: bool) -> str:
    listed = ("; if it lists only relevant pairs (a golden set's gold, gold qrels), count the pairs it leaves out as 0 with "
              "unlisted_as_zero=") if grades[0] > 0 and not unlisted_as_zero else ""
    return (f"{qrels.source or 'one of the qrels'} gives all {len(grades)} compared pairs grade {grades[0]}: kappa is 0 "
            f"by construction, whatever the other labels say{listed}")


@dataclass(frozen=True)
class RankingAgreement:
    measure: str
    tau: float  # Kendall's tau-b between the systems' values under each qrels
    ref: dict[str, float]  # system -> value on the reference qrels
    test: dict[str, float]
    swapped: list[tuple[str, str]]  # pairs ordered one way by ref and the other way by test

    @property
    def all_tie(self) -> bool:
        """Both qrels give every run one value: they agree (no order to swap), though tau is nan."""
        return len(set(self.ref.values())) == 1 and len(set(self.test.values())) == 1

    def to_json(self) -> dict:
        return {"measure": self.measure, "tau": self.tau, "ref": self.ref, "test": self.test,
                "swapped": [list(pair) for pair in self.swapped]}


def ranking_agreement(ref: Qrels, test: Qrels, runs: Sequence[Run], measures: Sequence[Measure | str],
                      rel_level: int = 1, warn: Callable[[str], None] | None = None) -> list[RankingAgreement]:
    """Per measure: do both qrels order the runs alike? One run has no order (Kendall's tau would be nan); `warn`
    hears of the measures under which one qrels, and not the other, give every run one value (tau is nan there too;
    where both do, they agree: all_tie)."""
    if len(runs) < 2:
        raise UsageError(f"give two or more runs to compare how the qrels rank them (got {len(runs)})")
    measures = numeric_measures(parse_measures(measures), "agreement")
    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        raise ValidationError(f"runs need distinct names to be compared; got {', '.join(names)}")
    on_ref, on_test = evaluate(ref, runs, measures, rel_level), evaluate(test, runs, measures, rel_level)
    short: list[str] = []  # queries a run lacks (scored 0) or adds, as eval says them; said once where both qrels are one file
    for qrels, results, which in ((ref, on_ref, "the reference qrels"), (test, on_test, "the qrels tested")):
        for run, evaluated in zip(runs, results):  # a run of other ids scores 0 under both and agrees with nothing
            require_overlap(evaluated, qrels, run, which, f"run {run.name!r}")
        short += coverage_warnings([(e, f"run {run.name!r}") for run, e in zip(runs, results)], qrels.source or which)
    tell(list(dict.fromkeys(short)), warn)
    result = []
    for m in measures:
        x = dict(zip(names, settled([e.aggregate(m) for e in on_ref]).tolist()))
        y = dict(zip(names, settled([e.aggregate(m) for e in on_test]).tolist()))
        swapped = [(a, b) for a, b in itertools.combinations(names, 2) if (x[a] - x[b]) * (y[a] - y[b]) < 0]
        result.append(RankingAgreement(m.name, kendall_tau_b([x[n] for n in names], [y[n] for n in names]), x, y, swapped))
    undefined: dict[str, list[str]] = {}  # the measures of each reason
    for r in result:  # where both tie every run they agree: no warning
        why = None if r.all_tie else tau_undefined(r.ref, r.test, ref.source or "the reference qrels", test.source or "the qrels tested")
        if why:
            undefined.setdefault(why, []).append(r.measure)
    tell([f"Kendall's tau is undefined (nan) for {', '.join(named)}: {why}" for why, named in undefined.items()], warn)
    return result


def tau_undefined(ref: Mapping[str, float | None], test: Mapping[str, float | None], ref_name: str, test_name: str) -> str | None:
    """Why Kendall's tau between two qrels' values of the runs (run -> value, None for none) is undefined (nan), or None
    where it is defined: agree warns of it and the report shows it beside the tau, in these words, not a bare nan or n/a."""
    runs = [run for run, value in ref.items() if is_number(value) and is_number(test.get(run))]
    if len(runs) < 2:
        return f"only {quantity(len(runs), 'run', 'have')} a value under both, where an order needs two"
    tied = [name for values, name in ((ref, ref_name), (test, test_name)) if len({values[run] for run in runs}) == 1]
    if len(tied) == 2:
        return "every run ties under both"
    return f"under {tied[0]} every run has the same value, so none ranks above another" if tied else None


@dataclass(frozen=True)
class Agreed:
    """What `semrel agree` measures: the labels' agreement (with assessor groups: against their majority), how the
    two qrels rank the runs, and with groups, each assessor and the assessors against each other."""

    labels: Agreement
    rankings: list[RankingAgreement]
    groups: GroupAgreement | None = None

    def to_json(self) -> dict:
        return {"labels": self.labels.to_json(), **({"groups": self.groups.to_json()} if self.groups else {}),
                "rankings": [r.to_json() for r in self.rankings]}


def agree(ref: Qrels | Sequence[tuple[str, Qrels]], test: Qrels, runs: Sequence[Run] = (), measures: Sequence[Measure | str] = (),
          unlisted_as_zero: bool = False, seed: int = 0, warn: Callable[[str], None] | None = None, rel_level: int = 1) -> Agreed:
    """`test` against `ref` (one qrels, or assessor groups as [(name, qrels)]: against each, their majority and each
    other), and with runs, how each ranks them (with groups, by the majority's grades; a grade of `rel_level` or more
    relevant to the binary measures, as eval's -l)."""
    for qrels, name in ((ref, "the first qrels"), (test, "the second qrels")):
        if isinstance(qrels, Qrels) and not len(qrels):  # had said the two 'share no judged pair (different ids?)'
            raise ValidationError(f"{qrels.source or name}: no judgments (the qrels are empty): nothing to compare")
    if isinstance(ref, Qrels):
        labels, groups, ranked_by = label_agreement(ref, test, unlisted_as_zero, seed=seed, warn=warn), None, ref
    else:
        if not ref:
            raise UsageError("assessor groups: none given, where agreement among assessors needs two or more")
        if len(ref) < 2:
            raise UsageError(f"assessor groups: one only ({', '.join(repr(name) for name, _ in ref)}), where agreement among "
                             "assessors needs two or more; compare with one qrels instead (without groups)")
        groups = group_agreement(ref, test, unlisted_as_zero, seed=seed, warn=warn)
        labels, ranked_by = groups.majority, majority_qrels(ref, "the assessors' majority")
    rankings = ranking_agreement(ranked_by, test, runs, measures, rel_level, warn=warn) if runs else []
    return Agreed(labels, rankings, groups)


AGREEMENT_HEADER = ["first", "second", "pairs", "agree %", "kappa", "low 95%", "high 95%", "weights"]


def agreement_table(compared: Sequence[tuple[str, str, Agreement]], explain: bool = True) -> str:
    """The (first, second, agreement) rows as agree, calibrate and review stats print them, each kappa left undefined
    (nan) said why beneath unless not `explain` (label_agreement warned of it): a bare nan in a table read as a fault."""
    rows: list[list[Cell]] = [[first, second, a.n, a.percent, a.kappa, a.low, a.high, a.weights] for first, second, a in compared]
    text = render(Table(AGREEMENT_HEADER, rows), "table", places=3)
    why = [line for first, second, a in compared if explain and (line := kappa_undefined(a, f"{first} vs {second}"))]
    return "\n".join([text, *why])


def confusion_text(title: str, a: Agreement, rows: str, columns: str) -> str:
    """A confusion matrix with its labels (rows: the first labelling, columns: the second)."""
    table = Table([f"{rows} \\ {columns}"] + [str(label) for label in a.labels],
                  [[str(label), *counts] for label, counts in zip(a.labels, a.confusion)])
    return (f"{title}\n" if title else "") + render(table, "table")

"""How far two qrels files agree: on the labels of the pairs both judged, and on the order in
which they rank systems (Kendall's tau per measure, and the pairs of systems that swap)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

from ..errors import ValidationError
from ..evaluation.measures import Measure, parse_measures
from ..evaluation.metrics import evaluate
from ..records import Qrels, Run
from .agreement import Agreement, agreement, kendall_tau_b


def common_labels(ref: Qrels, test: Qrels, unlisted_as_zero: bool = False) -> tuple[list[int], list[int]]:
    """(ref grades, test grades) of the pairs both list; with unlisted_as_zero, of every pair
    either lists for a query both hold, the other's missing grade counting as 0."""
    a, b = ref.to_dict(), test.to_dict()
    first, second = [], []
    for query in sorted(a.keys() & b.keys()):
        docs = a[query].keys() | b[query].keys() if unlisted_as_zero else a[query].keys() & b[query].keys()
        for doc in sorted(docs):
            first.append(a[query].get(doc, 0))
            second.append(b[query].get(doc, 0))
    return first, second


def label_agreement(ref: Qrels, test: Qrels, unlisted_as_zero: bool = False, resamples: int = 1000, seed: int = 0) -> Agreement:
    first, second = common_labels(ref, test, unlisted_as_zero)
    if not first:
        raise ValidationError("the two qrels share no judged pair (different query or document ids?)")
    return agreement(first, second, resamples=resamples, seed=seed)


@dataclass(frozen=True)
class RankingAgreement:
    measure: str
    tau: float  # Kendall's tau-b between the systems' values under each qrels
    ref: dict[str, float]  # system -> value on the reference qrels
    test: dict[str, float]
    swapped: list[tuple[str, str]]  # pairs ordered one way by ref and the other way by test

    def to_json(self) -> dict:
        return {"measure": self.measure, "tau": self.tau, "ref": self.ref, "test": self.test,
                "swapped": [list(pair) for pair in self.swapped]}


def ranking_agreement(ref: Qrels, test: Qrels, runs: Sequence[Run], measures: Sequence[Measure | str],
                      rel_level: int = 1) -> list[RankingAgreement]:
    """Per measure: do both qrels order the runs alike?"""
    measures = parse_measures(measures)
    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        raise ValidationError(f"runs need distinct names to be compared; got {', '.join(names)}")
    on_ref, on_test = evaluate(ref, runs, measures, rel_level), evaluate(test, runs, measures, rel_level)
    result = []
    for m in measures:
        x = {e.run_name: e.aggregate(m) for e in on_ref}
        y = {e.run_name: e.aggregate(m) for e in on_test}
        swapped = [(a, b) for a, b in itertools.combinations(names, 2) if (x[a] - x[b]) * (y[a] - y[b]) < 0]
        result.append(RankingAgreement(m.name, kendall_tau_b([x[n] for n in names], [y[n] for n in names]), x, y, swapped))
    return result

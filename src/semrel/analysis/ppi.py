"""Metric estimates corrected by a reviewed random sample (prediction-powered inference, as
ARES does for RAG judges).

The derived-label metric M(judge) is known exactly on the whole pool; what is unknown is how
far human labels would move it. Each sampled pair p whose human grade differs from the
derived one contributes delta_p: the change in its query's metric value when that one label
is replaced (exact for measures additive over documents such as P@k, a first-order term for
nDCG, AP and RR). The pool total of the deltas is estimated from the simple random sample,
with the finite-population variance, so

    corrected = M(judge) + (N / n) * sum(delta over the sample) / queries
    interval  = corrected +- z * N * sqrt((1 - n/N) * var(delta) / n) / queries

Where judge and human agree on every sampled pair, corrected equals M(judge) and the
interval has zero width.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UsageError, ValidationError
from ..evaluation.measures import Measure, numeric_measures, parse_measures
from ..evaluation.metrics import evaluate
from ..records import Qrels, Run

Pair = tuple[str, str]


@dataclass(frozen=True)
class Estimate:
    run: str
    measure: str
    derived: float  # the metric on the derived qrels
    corrected: float
    low: float
    high: float
    sampled: int  # reviewed pairs of the random sample
    changed: int  # of them, pairs where the human grade differs from the derived one
    pool: int

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class ReviewedSample:
    """Human grades of a simple random sample of a pool of `pool` pairs."""

    grades: dict[Pair, int]
    pool: int


def _rows_of(query_ids: pa.Array, wanted: Sequence[str]) -> np.ndarray:
    return np.flatnonzero(pc.is_in(query_ids, value_set=pa.array(list(wanted), type=pa.string())).to_numpy(zero_copy_only=False))


def pair_deltas(qrels: Qrels, runs: Sequence[Run], measures: Sequence[Measure], changed: Mapping[Pair, int],
                base: Mapping[str, Mapping[Measure, dict[str, float]]], rel_level: int = 1) -> dict[str, dict[Measure, np.ndarray]]:
    """delta of each changed pair (in `changed` order) per run and measure: the pair's query
    evaluated with that one label replaced, minus its value on the derived qrels. Each pair
    becomes its own copy of the query, so one evaluation covers all of them."""
    pairs = list(changed)
    queries = sorted({q for q, _ in pairs})
    q_rows = _rows_of(qrels.query_ids, queries)
    q_ids, d_ids, rels = qrels.query_ids.take(q_rows).to_pylist(), qrels.doc_ids.take(q_rows).to_pylist(), qrels.relevance[q_rows].tolist()
    judged: dict[str, dict[str, int]] = {}
    for k, (query, doc) in enumerate(pairs):
        copy = judged.setdefault(f"{k}\t{query}", {})
        copy.update({d: r for q, d, r in zip(q_ids, d_ids, rels) if q == query})
        copy[doc] = changed[query, doc]
    perturbed_runs = []
    for run in runs:
        rows = _rows_of(run.query_ids, queries)
        r_q, r_d, r_s = run.query_ids.take(rows).to_pylist(), run.doc_ids.take(rows).to_pylist(), run.scores[rows].tolist()
        copies = [(f"{k}\t{query}", d, s) for k, (query, _) in enumerate(pairs) for q, d, s in zip(r_q, r_d, r_s) if q == query]
        perturbed_runs.append(Run.from_columns([c[0] for c in copies], [c[1] for c in copies], [c[2] for c in copies], run.name))
    results = evaluate(Qrels.from_dict(judged), perturbed_runs, measures, rel_level) if pairs else []
    deltas: dict[str, dict[Measure, np.ndarray]] = {}
    for run, result in zip(runs, results):
        at = {name: i for i, name in enumerate(result.query_ids)}
        deltas[run.name] = {
            m: np.array([result.values[m][at[f"{k}\t{q}"]] - base[run.name][m][q] for k, (q, _) in enumerate(pairs)])
            for m in measures
        }
    return deltas


def corrected_estimates(qrels: Qrels, runs: Sequence[Run], measures: Sequence[Measure | str], sample: ReviewedSample,
                        confidence: float = 0.95, rel_level: int = 1) -> list[Estimate]:
    """Each run's value of each measure on the derived qrels, corrected by the reviewed sample."""
    measures = numeric_measures(parse_measures(measures), "estimate")
    geometric = [m.name for m in measures if m.geometric]
    if geometric:  # the correction adds per-query changes, which a mean of logs does not
        raise UsageError(f"estimate corrects means and sums, and {', '.join(geometric)} "
                         f"{'is a geometric mean' if len(geometric) == 1 else 'are geometric means'}: estimate AP (or bpref) instead")
    derived = qrels.to_dict()
    known = {q for q in derived}
    sampled = {pair: grade for pair, grade in sample.grades.items() if pair[0] in known}
    if len(sampled) < 2:  # one pair's change, scaled to the pool, is no estimate, and it has no variance
        raise ValidationError(f"the review's random sample holds {len(sampled)} reviewed pair(s) of the qrels' queries: "
                              "a corrected estimate and its interval need at least 2; review more pairs (`semrel review start`)")
    changed = {pair: grade for pair, grade in sampled.items() if derived[pair[0]].get(pair[1], 0) != grade}
    evaluations = evaluate(qrels, runs, measures, rel_level)
    base = {e.run_name: {m: dict(zip(e.query_ids, e.values[m].tolist())) for m in measures} for e in evaluations}
    deltas = pair_deltas(qrels, runs, measures, changed, base, rel_level)
    n, pool = len(sampled), max(sample.pool, len(sampled))
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    estimates = []
    for e in evaluations:
        for m in measures:
            values = np.zeros(n)
            values[: len(changed)] = deltas.get(e.run_name, {}).get(m, np.zeros(0))
            per = 1.0 if m.summed else float(len(e.query_ids))
            derived_value = e.aggregate(m)
            corrected = derived_value + pool * values.mean() / per
            half = z * pool * np.sqrt(max(1.0 - n / pool, 0.0) * values.var(ddof=1) / n) / per
            estimates.append(Estimate(e.run_name, m.name, derived_value, float(corrected), float(corrected - half),
                                      float(corrected + half), n, len(changed), pool))
    return estimates

"""Metric estimates corrected by a reviewed random sample (prediction-powered inference, as
ARES does for RAG judges).

The derived-label metric M(judge) is known exactly on the whole pool; what is unknown is how
far human labels would move it. The sampled pairs whose human grade differs from the derived
one are applied together, per query: the query's change Delta_q is exact for the labels
reviewed. Each such pair p gets a share delta_p of it: its change when its label alone is
replaced, plus an equal part of what the query's changes together add to the sum of those
single changes (nothing for P@k; a bounded share, never a ratio of near-cancelling changes),
so that the pool total is estimated from the simple random sample, with the finite-population
variance:

    corrected = M(judge) + (N / n) * sum(delta over the sample) / queries
    interval  = corrected +- t * N * sqrt((1 - n/N) * var(delta) / n) / queries

with t Student's quantile on n - 1 degrees of freedom (k - 1 below), not the paper's and ppi-python's normal z:
the variance is estimated from the sample, and from a few sampled queries z's intervals covered 76-89% where
t's covered 97% (docs/review.md, "How often the interval covers").

Qrels of some of the pool's queries (a split) make a domain of it: the sample's pairs of
other queries count with delta 0, so N and n stay the pool's and the sample's.

A sample of whole queries (review order query-sample) is corrected query by query instead: each sampled query's change
is exact, so for every measure

    corrected = M(judge) + (Q / k) * sum(Delta_q over the k sampled queries) / queries

is unbiased, with the finite-population variance over the qrels' Q queries (bench/ppi_coverage.py compares the two);
qrels of some of the pool's queries (a split) are a domain again, their k the sampled queries they hold.

For measures that add over documents (P@k) the single changes already add up, and the
estimate is unbiased. For the others (nDCG, AP, RR, R@k, Success@k) a query's value depends
on all its labels at once: the correction is exact when the whole pool is reviewed (n = N,
the interval then has zero width) and a first-order one for a sample, whose interval covers
the sampling only. Adding single-pair changes instead left Success@10 at 1.0 when a full
review found every pair irrelevant (flipping one of several relevant chunks moves nothing).
Where judge and human agree on every sampled pair, corrected equals M(judge) and the
interval has zero width, with a warning of how many labels 0 changes in n still allow wrong; so does
an estimate no sampled change moves (changes past a run's top k leave its P@k), with its own warning.
An estimate (or interval) past its measure's range (a share below 0 or above 1: a few large
changes scaled to the pool) is shown at the edge, with a warning.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UsageError, ValidationError
from ..evaluation.doclevel import require_overlap
from ..evaluation.files import coverage_warnings, require_distinct_names, shallow_cutoffs
from ..evaluation.measures import Measure, numeric_measures, parse_measures
from ..evaluation.metrics import evaluate
from ..formats.files import display_name
from ..formats.jsonl import json_text
from ..formats.tables import Cell, Table, render
from ..records import Qrels, Run
from ..terminal import agreeing, quantity
from .significance import level_text

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
    sampled_queries: int | None = None  # a sample of whole queries (review order query-sample): how many

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class ReviewedSample:
    """Human grades of a simple random sample of a pool of `pool` pairs."""

    grades: dict[Pair, int]
    pool: int
    top: int | None = None  # the review's highest grade (1: a binary queue), where known
    queries: int | None = None  # the pool's queries, where the sample is of queries reviewed whole (order query-sample)


def _rows_of(query_ids: pa.Array, wanted: Sequence[str]) -> np.ndarray:
    return np.flatnonzero(pc.is_in(query_ids, value_set=pa.array(list(wanted), type=pa.string())).to_numpy(zero_copy_only=False))


def pair_deltas(qrels: Qrels, runs: Sequence[Run], measures: Sequence[Measure], changed: Mapping[Pair, int],
                base: Mapping[str, Mapping[Measure, dict[str, float]]], rel_level: int = 1) -> dict[str, dict[Measure, np.ndarray]]:
    """delta of each changed pair (in `changed` order) per run and measure: its share of its query's
    change when all of the query's changed pairs take their human grades (see the module docstring).
    Each pair, and each query with all its changes, becomes its own copy of the query, so one
    evaluation covers all of them."""
    pairs = list(changed)
    queries = sorted({q for q, _ in pairs})
    q_rows = _rows_of(qrels.query_ids, queries)
    q_ids, d_ids, rels = qrels.query_ids.take(q_rows).to_pylist(), qrels.doc_ids.take(q_rows).to_pylist(), qrels.relevance[q_rows].tolist()
    derived: dict[str, dict[str, int]] = {q: {} for q in queries}
    for q, d, r in zip(q_ids, d_ids, rels):
        derived[q][d] = r
    copies = {f"{k}\t{query}": (query, {**derived[query], doc: changed[query, doc]}) for k, (query, doc) in enumerate(pairs)}
    copies |= {f"all\t{query}": (query, {**derived[query], **{d: g for (q, d), g in changed.items() if q == query}}) for query in queries}
    perturbed_runs = []
    for run in runs:
        rows = _rows_of(run.query_ids, queries)
        ranked: dict[str, list[tuple[str, float]]] = {}
        for q, d, score in zip(run.query_ids.take(rows).to_pylist(), run.doc_ids.take(rows).to_pylist(), run.scores[rows].tolist()):
            ranked.setdefault(q, []).append((d, score))
        retrieved = [(name, d, score) for name, (query, _) in copies.items() for d, score in ranked.get(query, ())]
        perturbed_runs.append(Run.from_columns([c[0] for c in retrieved], [c[1] for c in retrieved], [c[2] for c in retrieved], run.name))
    results = evaluate(Qrels.from_dict({name: labels for name, (_, labels) in copies.items()}), perturbed_runs, measures,
                       rel_level) if pairs else []
    of_query = np.array([queries.index(q) for q, _ in pairs], dtype=np.int64)
    deltas: dict[str, dict[Measure, np.ndarray]] = {}
    for run, result in zip(runs, results):
        at = {name: i for i, name in enumerate(result.query_ids)}
        deltas[run.name] = {}
        for m in measures:
            values = result.values[m]
            single = np.array([values[at[f"{k}\t{q}"]] - base[run.name][m][q] for k, (q, _) in enumerate(pairs)])
            joint = np.array([values[at[f"all\t{q}"]] - base[run.name][m][q] for q in queries])
            residual = joint - np.bincount(of_query, weights=single, minlength=len(queries))
            deltas[run.name][m] = single + (residual / np.bincount(of_query, minlength=len(queries)))[of_query]
    return deltas


def estimable(measures: Sequence[Measure | str]) -> list[Measure]:
    """The measures parsed, refused where the correction cannot estimate them: a report checks them before its other work."""
    parsed = numeric_measures(parse_measures(measures), "estimate")
    geometric = [m.name for m in parsed if m.geometric]
    if geometric:  # the correction adds per-query changes, which a mean of logs does not
        raise UsageError(f"estimate corrects means and sums, and {', '.join(geometric)} "
                         f"{'is a geometric mean' if len(geometric) == 1 else 'are geometric means'}: estimate AP (or bpref) instead")
    return parsed


def sampled_pairs(sample: ReviewedSample, queries: set[str]) -> dict[Pair, int]:
    """The sample's grades of pairs of `queries` (the qrels'), at least 2 of them: one pair's change, scaled to the pool,
    is no estimate, and it has no variance (a report checks this before its other work)."""
    sampled = {pair: grade for pair, grade in sample.grades.items() if pair[0] in queries}
    if len(sampled) < 2:
        raise ValidationError(f"the review's random sample holds {len(sampled)} reviewed pair(s) of the qrels' queries: "
                              "a corrected estimate and its interval need at least 2; review more pairs (`semrel review start`)")
    return sampled


def corrected_estimates(qrels: Qrels, runs: Sequence[Run], measures: Sequence[Measure | str], sample: ReviewedSample,
                        confidence: float = 0.95, rel_level: int = 1, warn: Callable[[str], None] | None = None) -> list[Estimate]:
    """Each run's value of each measure on the derived qrels, corrected by the reviewed sample. `warn` hears when the
    qrels hold more pairs than the review's pool (holes filled since): those pairs lie outside the sample; and, as eval
    says them, of queries a run lacks or adds and of cutoffs past every run's ranking."""
    measures = estimable(measures)
    require_distinct_names([r.name for r in runs])  # the changes are kept by run name: one name would take another's
    named = display_name(qrels.source) if qrels.source else "the qrels"
    if warn and len(qrels) > sample.pool:
        warn(f"{named} hold {quantity(len(qrels), 'pair')}, more than the "
             f"{sample.pool:,} of the review's pool (holes filled since?): the sample was drawn from the pool alone, so "
             "label errors among the others are not corrected and the interval does not cover them; review a queue built "
             "from these qrels' judgments")
    derived = qrels.to_dict()
    highest = max((g for docs in derived.values() for g in docs.values()), default=0)
    if sample.top is not None and highest > sample.top:  # as `review export` refuses it: a reviewer's 1 (relevant) would replace
        # the judge's 3 (highly relevant), a change of scale counted as a label error
        raise ValidationError(f"{named} grade up to {highest}, and the review grades 0..{sample.top}: give the derived qrels the "
                              "review was queued from")
    known = {q for q in derived}
    if warn and sample.queries is not None and len(known) > sample.queries:  # the mean change spreads onto queries never drawn
        warn(f"{named} hold {quantity(len(known), 'query')}, more than the {sample.queries:,} of the review's pool: its sample of "
             "whole queries stands for the pool's queries alone, and their change is scaled to all of these; estimate on "
             "qrels of the pool's queries, or review a queue built from these qrels' judgments")
    sampled = sampled_pairs(sample, known)
    changed = {pair: grade for pair, grade in sampled.items() if derived[pair[0]].get(pair[1], 0) != grade}
    evaluations = evaluate(qrels, runs, measures, rel_level)
    for run, evaluated in zip(runs, evaluations):  # a run of other ids would get 0 and an interval of zero width
        require_overlap(evaluated, qrels, run, named, f"run {run.name!r}")
    if warn:  # as eval says of the same files: a query a run lacks scores 0, a cutoff past every ranking counts fewer
        for message in [*coverage_warnings([(e, display_name(r.source) if r.source else f"run {r.name!r}")
                                            for r, e in zip(runs, evaluations)], named), *shallow_cutoffs(measures, runs)]:
            warn(message)
    base = {e.run_name: {m: dict(zip(e.query_ids, e.values[m].tolist())) for m in measures} for e in evaluations}
    deltas = pair_deltas(qrels, runs, measures, changed, base, rel_level)
    # the whole sample (its pairs of queries the qrels lack: delta 0), as the pool scales it; the qrels' pairs alone overstated it
    n, pool = len(sample.grades), max(sample.pool, len(sample.grades))
    by_query = sample.queries is not None and n < pool  # whole queries: each one's exact change, no first-order share
    estimates, outside, unmoved = [], [], []
    drawn, frame, unit = n, pool, "queries" if by_query else "pairs"  # what the sample drew, of how many (set per qrels below)
    for e in evaluations:
        units = sorted({q for q, _ in sample.grades} & set(e.query_ids)) if by_query else []
        if by_query and len(units) < 2:
            raise ValidationError(f"the review's random sample of queries holds {len(units)} query(ies) of the qrels reviewed "
                                  "whole: a corrected estimate and its interval need at least 2; review more queries")
        if by_query:
            drawn, frame = len(units), len(e.query_ids)
        t = student_t(confidence, drawn)
        for m in measures:
            pair_values = deltas.get(e.run_name, {}).get(m, np.zeros(0))
            if by_query:  # a sampled query's pairs' shares add up to its exact change
                of = dict.fromkeys(units, 0.0)
                for (q, _), value in zip(changed, pair_values.tolist()):
                    of[q] = of.get(q, 0.0) + value
                values = np.array([of[q] for q in units])
            else:
                values = np.zeros(n)
                values[: len(changed)] = pair_values
            per = 1.0 if m.summed else float(len(e.query_ids))
            derived_value = e.aggregate(m)
            corrected = derived_value + frame * values.mean() / per
            half = t * frame * np.sqrt(max(1.0 - drawn / frame, 0.0) * values.var(ddof=1) / drawn) / per
            low, high = corrected - half, corrected + half
            if not values.any():  # no sampled change moves it: a zero-width interval, however many pairs changed
                unmoved.append(f"{e.run_name} {m.name}")
            if m.bounds is not None:  # a few sampled changes scaled to the pool can carry a share past 0 or 1
                slack = 1e-9 * max(1.0, abs(derived_value))  # rounding of the sum (-1e-16 for an exact 0) is not past the edge
                if not m.bounds[0] - slack <= corrected <= m.bounds[1] + slack:
                    outside.append(f"{e.run_name} {m.name} {corrected:.4f}")
                corrected, low, high = (float(np.clip(v, *m.bounds)) for v in (corrected, low, high))
            estimates.append(Estimate(e.run_name, m.name, derived_value, float(corrected), float(low), float(high), n, len(changed), pool,
                                      len(units) if by_query else None))
    if warn and unmoved and n < pool:
        share = 1.0 - (1.0 - confidence) ** (1.0 / drawn)  # the exact one-sided bound on a rate seen 0 times in n; about 3/n at 95%
        if by_query:  # a query's pairs are drawn together: 0 in n bounds the queries that hold a wrong label, not the labels
            seen = f"{drawn:,} sampled queries' {len(sampled):,} pairs"
            bound = f"up to {share:.1%} of the qrels' {frame:,} queries (about {math.ceil(share * frame):,}) may still hold labels that"
        else:
            seen = f"{n:,} sampled pairs"
            bound = f"up to {share:.1%} of the pool's {pool:,} labels (about {math.ceil(share * pool):,}) may still"
        if not changed:
            warn(f"none of the {seen} changed, so every interval has zero width: it shows only what the sample saw. With 0 of "
                 f"{drawn:,}{' queries' if by_query else ''} changed, {bound} differ from a person's ({level_text(confidence)} "
                 f"bound); review more {unit} to narrow it")
        else:  # changes past a run's top k, or of pairs it does not retrieve, leave its P@k: silent, that interval covered nothing
            its = "its interval has" if len(unmoved) == 1 else "their intervals have"
            warn(f"{quantity(len(unmoved), 'estimate')} (e.g. {unmoved[0]}) {agreeing(len(unmoved), 'are')} moved by none of the "
                 f"sample's {quantity(len(changed), 'changed pair')}, so {its} zero width: what the sample saw, not certainty. "
                 f"With 0 of {drawn:,} sampled {unit} moving one, {bound} {'are' if by_query else 'be'} wrong in ways that move it "
                 f"({level_text(confidence)} bound); review more {unit} to narrow it")
    if warn and n < pool and not by_query and (recalls := [m.name for m in measures if m.family == "R"]):
        warn(f"{', '.join(recalls)}: the correction is first-order, and recall's is biased: a query whose one derived-relevant "
             "pair is sampled as wrong, its relevant chunk unsampled, falls to 0 (on COVID-QA R@100's 95% intervals covered "
             "79-85% with 1,000 of 6,047 pairs reviewed, and missed by more than the derived value; docs/review.md, 'How often "
             "the interval covers'): read it as a direction, or review whole queries (`semrel review start --order query-sample`), "
             "which it corrects without bias")
    if warn and n < pool and not by_query and len(changed) >= FIRST_ORDER_SHARE * n and (
            others := [m.name for m in measures if not (m.summed or m.family in ("P", "R"))]):  # P@k adds up; R@k said above
        warn(f"{', '.join(others)}: {len(changed) / n:.0%} of the sampled labels changed, and "
             f"{'this measure is' if len(others) == 1 else 'these measures are'} corrected to the first order, which with that "
             "many changes removes part of the bias only (on PubMedQA, 7% changed, AP's 95% intervals covered 84-86% and "
             "nDCG@10's 89% with 1,000 of 6,210 pairs reviewed; docs/review.md, 'How often the interval covers'): read "
             f"{'its interval' if len(others) == 1 else 'their intervals'} as narrower than the truth allows, or review whole "
             "queries (`semrel review start --order query-sample`), which it corrects without bias")
    if warn and outside:
        warn(f"the sample's changes, scaled to the pool, put {quantity(len(outside), 'estimate')} past their measure's range (e.g. "
             f"{outside[0]}), shown at the edge: {f'{drawn:,} queries reviewed whole' if by_query else f'{n:,} reviewed pairs'} "
             f"are too few for a correction this large; review more {unit}")
    return estimates


def student_t(confidence: float, drawn: int) -> float:
    """The two-sided quantile of Student's t on drawn - 1 degrees of freedom (Cochran, Sampling Techniques, 2.5: for a
    mean of a small simple random sample): the normal z narrowed the interval of 5 queries by 29%."""
    from scipy import stats  # imported here: it costs a second at every start of the CLI

    return float(stats.t.ppf(0.5 + confidence / 2.0, max(drawn - 1, 1)))


FIRST_ORDER_SHARE = 0.05
"""A sample with this share of changed labels or more is warned of for the measures that do not add over documents: on
COVID-QA (1.7% changed) their intervals covered 85-100%, on PubMedQA (7.3%) AP's 84-86% at n = 1,000 (bench/ppi_coverage.py)."""


ESTIMATE_FORMATS = ("table", "markdown", "csv", "tsv", "latex", "json")
"""What render_estimates writes: one row per run and measure (jsonl and trec are per-query formats)."""


def render_estimates(estimates: list[Estimate], confidence: float, fmt: str, places: int = 4) -> str:
    """The estimates as JSON or as a table of derived value, corrected value and interval."""
    if fmt == "json":
        return json_text([e.to_json() for e in estimates]) + "\n"
    return render(estimates_table(estimates, confidence), fmt, places=places)


def estimates_table(estimates: list[Estimate], confidence: float) -> Table:
    """A row per run and measure: derived value, corrected value, interval, and the sample behind them."""
    level = level_text(confidence)
    by_query = any(e.sampled_queries is not None for e in estimates)  # reviewed whole: how many queries the pairs make
    rows: list[list[Cell]] = [[e.run, e.measure, e.derived, e.corrected, e.low, e.high, e.sampled,
                               *([e.sampled_queries] if by_query else []), e.changed, e.pool] for e in estimates]
    header = ["run", "measure", "derived", "corrected", f"low {level}", f"high {level}", "sampled",
              *(["of queries"] if by_query else []), "changed", "pool"]
    return Table(header, rows)

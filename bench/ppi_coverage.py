"""How often `semrel estimate`'s interval covers the metric of a whole-pool review, on COVID-QA (or `--folder`'s set).

    python bench/ppi_coverage.py [--folder out/bench-labels/sets/covid150] [--seeds 250] [--sizes 50,100,200,400,1000]

Runs on the folder bench/labels.py prepared (COVID-QA at 150-word chunks, gold chunks pooled): the derived qrels are
the shipped default's labels of its judged pool, and the gold chunks stand in for a person who reviews every pair of
it (a gold chunk relevant, every other pair not), as bench/covid_review.py simulates. The truth is each run's metric
on those human labels. For each sample size n, `--seeds` simple random samples of n pool pairs
are "reviewed" and corrected by semrel.analysis.ppi.corrected_estimates (95%). Printed per measure and n, over the
runs bm25, dense and hybrid (bench/labels.py's runs/): the share of each run's intervals that cover the truth, the size
of the corrected value's mean error (|bias|, averaged over the runs) beside the derived value's, the share of intervals
of zero width (no sampled change moves the estimate: warned of) and the coverage of the others. Then the same for
samples of whole queries (`semrel review start --order query-sample`): queries drawn at random, all their pool pairs
reviewed, while the pairs stay within n, corrected query by query.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import semrel
from semrel.analysis.ppi import ReviewedSample, corrected_estimates
from semrel.evaluation.measures import parse_measures
from semrel.evaluation.metrics import evaluate
from semrel.formats.corpus import golden_qrels, read_golden
from semrel.formats.trec import read_run
from semrel.records import Qrels

ROOT = Path(__file__).resolve().parent.parent
RUNS = ("bm25", "dense", "hybrid")
MEASURES = ("nDCG@10", "P@10", "RR", "R@100", "AP")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=ROOT / "out" / "bench-labels" / "sets" / "covid150")
    parser.add_argument("--seeds", type=int, default=250, help="samples per size")
    parser.add_argument("--sizes", default="50,100,200,400,1000", help="reviewed pairs per sample, comma-separated")
    args = parser.parse_args()
    judgments = args.folder / "judgments-gold-kappa.jsonl"
    if not judgments.exists():
        raise SystemExit(f"{judgments} is missing: run bench/labels.py first")
    derived = semrel.label(judgments, warn=lambda message: None)
    gold = golden_qrels(read_golden(args.folder / "golden.jsonl")).to_dict()
    labels = derived.to_dict()
    pairs = [(q, d) for q in sorted(labels) for d in sorted(labels[q])]
    human = {(q, d): int(gold.get(q, {}).get(d, 0) > 0) for q, d in pairs}
    runs = [read_run(args.folder / "runs" / f"{name}.run", name) for name in RUNS]
    measures = parse_measures(list(MEASURES))
    human_qrels = Qrels.from_dict({q: {d: human[q, d] for d in docs} for q, docs in labels.items()})
    truth = {(e.run_name, m.name): e.aggregate(m) for e in evaluate(human_qrels, runs, measures) for m in measures}
    start = {(e.run_name, m.name): e.aggregate(m) for e in evaluate(derived, runs, measures) for m in measures}
    changed = sum(human[p] != labels[p[0]][p[1]] for p in pairs)
    print(f"{len(pairs):,} pool pairs of {len(labels)} queries, {changed} of them labelled otherwise than the gold chunks; "
          f"{args.seeds} samples per size, runs {', '.join(RUNS)}, 95% intervals")
    sizes = [int(size) for size in args.sizes.split(",")]
    for unit in ("pair", "query"):
        if unit == "query":
            print(f"\nThe same budgets of reviewed pairs spent on whole queries (review order query-sample): queries in a seeded "
                  f"random order, each with all its pool pairs, while the pairs stay within n ({len(labels)} queries, "
                  f"{len(pairs) / len(labels):.1f} pairs each on average)")
        print("\n| measure | n | " + " | ".join(f"covers {run}" for run in RUNS)
              + " | \\|bias\\| (derived's) | zero width | covers, the rest |")
        print("|---|---:|" + "---:|" * (len(RUNS) + 3))
        rows: dict[tuple[str, int], list[tuple[str, bool, float, bool]]] = {}
        for n in sizes:
            for seed in range(args.seeds):
                sample = pair_sample(n, seed, pairs, human) if unit == "pair" else query_sample(n, seed, labels, human, len(pairs))
                for e in corrected_estimates(derived, runs, measures, sample):
                    value = truth[e.run, e.measure]
                    rows.setdefault((e.measure, n), []).append(
                        (e.run, e.low <= value <= e.high, e.corrected - value, e.high == e.low))
        table(rows, sizes, start, truth)


def pair_sample(n: int, seed: int, pairs: list, human: dict) -> ReviewedSample:
    """n pool pairs drawn at random: the random sample of `semrel review`'s other orders."""
    chosen = np.random.default_rng([n, seed]).choice(len(pairs), n, replace=False)
    return ReviewedSample({pairs[i]: human[pairs[i]] for i in chosen}, len(pairs))


def query_sample(n: int, seed: int, labels: dict, human: dict, pool: int) -> ReviewedSample:
    """Whole queries in a random order while their pairs number n or fewer (2 queries at least)."""
    queries, taken = sorted(labels), {}
    for i in np.random.default_rng([n, seed, 1]).permutation(len(queries)).tolist():
        query = queries[i]
        if len(taken) + len(labels[query]) > n and len({q for q, _ in taken}) >= 2:
            break
        taken |= {(query, d): human[query, d] for d in labels[query]}
    return ReviewedSample(taken, pool, queries=len(queries))


def table(rows: dict, sizes: list[int], start: dict, truth: dict) -> None:
    """Per measure and n: each run's coverage, the mean error's size beside the derived value's, the zero-width share."""
    for measure in MEASURES:
        for n in sizes:
            got = rows[measure, n]
            per_run = [np.mean([c for r, c, *_ in got if r == run]) for run in RUNS]
            widths = [(c, zero) for _, c, _, zero in got]
            rest = [c for c, zero in widths if not zero]
            print(f"| {measure} | {n:,} | " + " | ".join(f"{c:.0%}" for c in per_run)
                  + f" | {np.mean([abs(np.mean([b for r, _, b, _ in got if r == run])) for run in RUNS]):.4f}"
                  + f" ({np.mean([abs(start[run, measure] - truth[run, measure]) for run in RUNS]):.4f})"
                  + f" | {np.mean([z for _, z in widths]):.0%} | {np.mean(rest) if rest else float('nan'):.0%} |")


if __name__ == "__main__":
    main()
